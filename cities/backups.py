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
import tempfile
from datetime import UTC, datetime
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


#: The reason the clock pause written by a restore shows (``manage.py clock status``, the clock pages).
RESTORE_PAUSE_REASON = "restored from {name} at {at}: check, migrate, then `manage.py clock resume`"


def _pause_sql(placeholder: str) -> str:
    """The statement that leaves the restored database's clock paused (``ClockPause``: one row, key ``site``),
    whether or not the backup held a pause; parameters: the time and the reason."""
    return ("INSERT INTO cities_clockpause (key, paused_at, reason) VALUES ('site', {p}, {p}) "
            "ON CONFLICT (key) DO UPDATE SET paused_at = excluded.paused_at, reason = excluded.reason"
            ).format(p=placeholder)


def restore_database(path: Path, *, using: str = "default", now: datetime | None = None) -> str:
    """Replace database ``using`` with the backup at ``path`` (made by ``backup_database`` on the same vendor), its
    clock paused whatever the backup held: the restored data and the pause arrive together (one transaction on
    PostgreSQL; on SQLite the pause is written into a copy of the backup before it is copied in), so no scheduled
    event runs on the restored data before the operator has checked and migrated it and said
    ``manage.py clock resume``. PostgreSQL: every table in the dump is dropped and restored in one transaction (a
    failing restore changes nothing). ``now``: the pause's time (aware UTC; default the current time). Returns the
    pause's reason. Raises ``BackupError``."""
    path = Path(path)
    if not path.is_file():
        raise BackupError(f"No backup at {path}.")
    now = now or datetime.now(UTC)
    reason = RESTORE_PAUSE_REASON.format(name=path.name, at=now.strftime("%Y-%m-%d %H:%M:%S UTC"))[:200]
    connection = connections[using]
    settings = connection.settings_dict
    if connection.vendor == "postgresql":
        connection.close()
        restore_args, env = _pg_command("pg_restore", settings)
        psql_args, _env = _pg_command("psql", settings)
        literal = "'" + reason.replace("'", "''") + "'"
        pause = _pause_sql("%s") % (f"'{now.isoformat()}'::timestamptz", literal)
        # pg_restore writes the restore as SQL; psql runs it and then the pause in one transaction (all or nothing).
        dump = subprocess.Popen([*restore_args, "--clean", "--if-exists", "--no-owner", "--file=-", str(path)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            result = subprocess.run(
                [*psql_args, "--quiet", "--no-psqlrc", "--single-transaction", "--set", "ON_ERROR_STOP=1",
                 "--dbname", settings["NAME"], "--file=-", "--command", "RESET search_path",
                 "--command", pause],
                env=env, stdin=dump.stdout, capture_output=True, text=True, check=False)
        finally:
            dump.stdout.close()
            dump_error = dump.stderr.read().decode(errors="replace")
            dump.stderr.close()
            dump.wait()
        if dump.returncode != 0:
            raise BackupError(f"pg_restore failed ({dump.returncode}): {dump_error.strip()[-2000:]}")
        if result.returncode != 0:
            raise BackupError(f"psql failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
    elif connection.vendor == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / "restore.sqlite3"
            shutil.copyfile(path, copy)
            try:
                source = sqlite3.connect(copy)
                source.execute("PRAGMA schema_version").fetchone()
                with source:
                    source.execute(_pause_sql("?"), (connection.ops.adapt_datetimefield_value(now), reason))
            except sqlite3.DatabaseError as exc:
                raise BackupError(f"{path} is not an SQLite database of the site: {exc}") from exc
            connection.ensure_connection()
            try:
                source.backup(connection.connection)
            finally:
                source.close()
    else:  # pragma: no cover
        raise BackupError(f"no restore for {connection.vendor}")
    return reason
