"""Backups of the site's database (``manage.py backup`` / ``restore``; README "Upgrading a live site").

PostgreSQL through ``pg_dump --format=custom`` / ``pg_restore`` (the server's own tools: one consistent snapshot,
restored in one transaction); SQLite through the standard library's online backup API
(``sqlite3.Connection.backup``), which copies a consistent image while other connections write.
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

from django.db import connections


class BackupError(Exception):
    """The backup or the restore could not be made; ``str()`` says why."""


def _pg_command(tool: str, settings: dict) -> tuple[list[str], dict[str, str]]:
    exe = shutil.which(tool)
    if exe is None:
        raise BackupError(f"{tool} is not installed (Debian: apt-get install postgresql-client).")
    env = {**os.environ}
    args = [exe, "--no-password"]
    if settings.get("HOST"):
        args += ["--host", str(settings["HOST"])]
    if settings.get("PORT"):
        args += ["--port", str(settings["PORT"])]
    if settings.get("USER"):
        args += ["--username", str(settings["USER"])]
    if settings.get("PASSWORD"):
        env["PGPASSWORD"] = str(settings["PASSWORD"])
    return args, env


def _run(args: list[str], env: dict[str, str]) -> None:
    result = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BackupError(f"{Path(args[0]).name} failed ({result.returncode}): {result.stderr.strip()[-2000:]}")


def backup_database(path: Path, *, using: str = "default") -> int:
    """Write a backup of database ``using`` to ``path`` (overwritten). Returns its size in bytes. Raises
    ``BackupError``. Safe while the site runs (a snapshot)."""
    connection = connections[using]
    settings = connection.settings_dict
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if connection.vendor == "postgresql":
        args, env = _pg_command("pg_dump", settings)
        _run([*args, "--format=custom", "--file", str(path), "--dbname", settings["NAME"]], env)
    elif connection.vendor == "sqlite":
        connection.ensure_connection()
        tmp = path.with_name(path.name + ".partial")
        tmp.unlink(missing_ok=True)
        target = sqlite3.connect(tmp)
        try:
            connection.connection.backup(target)
        finally:
            target.close()
        tmp.replace(path)
    else:  # pragma: no cover - DESIGN.md names only these two
        raise BackupError(f"no backup for {connection.vendor}")
    return path.stat().st_size


def restore_database(path: Path, *, using: str = "default") -> None:
    """Replace database ``using`` with the backup at ``path`` (made by ``backup_database`` on the same vendor).
    PostgreSQL: every table in the dump is dropped and restored in one transaction (a failing restore changes
    nothing). Raises ``BackupError``."""
    path = Path(path)
    if not path.is_file():
        raise BackupError(f"No backup at {path}.")
    connection = connections[using]
    settings = connection.settings_dict
    if connection.vendor == "postgresql":
        connection.close()
        args, env = _pg_command("pg_restore", settings)
        _run([*args, "--clean", "--if-exists", "--no-owner", "--single-transaction", "--exit-on-error",
              "--dbname", settings["NAME"], str(path)], env)
    elif connection.vendor == "sqlite":
        try:
            source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            source.execute("PRAGMA schema_version").fetchone()
        except sqlite3.DatabaseError as exc:
            raise BackupError(f"{path} is not an SQLite database: {exc}") from exc
        connection.ensure_connection()
        try:
            source.backup(connection.connection)
        finally:
            source.close()
    else:  # pragma: no cover
        raise BackupError(f"no restore for {connection.vendor}")
