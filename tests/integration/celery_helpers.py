"""The Celery worker and beat processes of the integration tests (started on the test database, stopped at the end) and their fixtures."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from cities.models import ScheduledEvent

BASE_DIR = Path(settings.BASE_DIR)


POLL_SECONDS = 0.2


def subprocess_env(tmp_path: Path) -> dict[str, str]:
    """The environment under which a subprocess sees this test's database and a broker private to the test.

    ``mafia_site.settings.test`` gives SQLite a separate TEST NAME, but a subprocess connects to
    ``DATABASES['default']['NAME']``: so the test database itself is passed (``SQLITE_PATH`` or ``DATABASE_URL``).
    """
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "SQLITE_PATH", "REDIS_URL"}}
    var_dir = tmp_path / "var"
    var_dir.mkdir(exist_ok=True)
    env.update(
        DJANGO_SETTINGS_MODULE="mafia_site.settings.test",
        MAFIA_DISPATCH_INTERVAL_SECONDS="1",
        MAFIA_VAR_DIR=str(var_dir),  # the filesystem broker's folders and the beat schedule: ours alone
        PYTHONUNBUFFERED="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(BASE_DIR), os.environ.get("PYTHONPATH")])),
    )
    name = connection.settings_dict["NAME"]
    if connection.vendor == "postgresql":
        assert settings.DATABASE_URL, "PostgreSQL without DATABASE_URL"
        env["DATABASE_URL"] = urlsplit(settings.DATABASE_URL)._replace(path="/" + quote(name)).geturl()
    elif connection.vendor == "sqlite":
        assert name and ":memory:" not in name and "mode=memory" not in name, (
            f"the SQLite test database must be a file another process can open, not {name!r}")
        assert Path(name).exists(), name
        env["SQLITE_PATH"] = str(name)
    else:  # pragma: no cover - DESIGN.md names only these two
        pytest.fail(f"no subprocess database hand-over for {connection.vendor}")
    if settings.REDIS_URL:
        env["REDIS_URL"] = settings.REDIS_URL
    return env


class Processes:
    """Subprocesses of one test, their combined output in files; ``stop()`` ends each one by its own pid."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.started: list[tuple[str, subprocess.Popen, Path]] = []

    def start(self, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen:
        log = self.tmp_path / f"{name}.log"
        with log.open("wb") as sink:
            proc = subprocess.Popen(args, cwd=BASE_DIR, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        self.started.append((name, proc, log))
        return proc

    def log(self, name: str) -> str:
        for started, _proc, log in self.started:
            if started == name:
                return log.read_text(errors="replace")
        raise KeyError(name)

    def check_alive(self) -> None:
        for name, proc, _log in self.started:
            if proc.poll() is not None:
                pytest.fail(f"{name} exited early with status {proc.returncode}\n{self.output()}")

    def wait_for_line(self, name: str, needle: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.log(name):
            self.check_alive()
            if time.monotonic() > deadline:
                pytest.fail(f"{name} did not log {needle!r} within {timeout} s\n{self.output()}")
            time.sleep(POLL_SECONDS)

    def output(self) -> str:
        parts = []
        for name, proc, log in self.started:
            status = proc.poll()
            parts.append(f"===== {name} (pid {proc.pid}, {'running' if status is None else f'exit {status}'}) =====\n"
                         f"{log.read_text(errors='replace')}")
        return "\n".join(parts)

    def stop(self) -> None:
        for _name, proc, _log in self.started:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _name, proc, _log in self.started:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)


@pytest.fixture
def processes(transactional_db, tmp_path):
    """Started subprocesses, always terminated (SIGTERM, then SIGKILL) before the database is flushed."""
    procs = Processes(tmp_path)
    yield procs
    procs.stop()
    if procs.started:
        print(procs.output())  # shown by pytest for a failing test


@pytest.fixture
def only_our_events(transactional_db):
    """Cancel pending scheduled events made outside this test (the demo game's post is due in real time)."""
    ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True).update(cancelled_at=timezone.now())


class _Gate:
    """Holds the scheduler's table so that dispatchers block at their first claim, then lets them go together.

    PostgreSQL: ``LOCK TABLE ... IN EXCLUSIVE MODE`` blocks ``SELECT ... FOR UPDATE``; we wait until both
    sessions (found by their ``PGAPPNAME``) wait for a lock (``pg_locks``). SQLite: an open ``BEGIN IMMEDIATE``
    (the settings' ``transaction_mode``) holds the write lock that every dispatcher's transaction needs; we wait
    until each process has the database file open (Linux ``/proc``), i.e. it is waiting on the lock.
    """

    def __init__(self, pids_count: int) -> None:
        self.pids_count = pids_count
        self.app_name = f"mafia-race-{uuid.uuid4().hex[:8]}"  # the racers' PGAPPNAME, to find their lock waits

    def hold(self):
        atomic = transaction.atomic()
        atomic.__enter__()
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {connection.ops.quote_name(ScheduledEvent._meta.db_table)} "
                               "IN EXCLUSIVE MODE")
        else:
            with connection.cursor() as cursor:  # makes sure BEGIN IMMEDIATE has run
                cursor.execute("SELECT 1")
        return atomic

    def wait_until_blocked(self, procs: list[subprocess.Popen], processes: Processes, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self._blocked(procs):
            for proc in procs:
                if proc.poll() is not None:
                    pytest.fail(f"a dispatcher exited while the gate was closed\n{processes.output()}")
            if time.monotonic() > deadline:
                pytest.fail(f"the dispatchers did not reach the gate within {timeout} s\n{processes.output()}")
            time.sleep(0.05)
        time.sleep(0.1)

    def _blocked(self, procs: list[subprocess.Popen]) -> bool:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                # Any lock wait counts (normally the gate's table lock; a row lock behind it would do as well).
                # pg_stat_activity is a snapshot kept for the whole transaction unless cleared.
                cursor.execute("SELECT pg_stat_clear_snapshot()")
                cursor.execute("SELECT count(DISTINCT l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                               "WHERE NOT l.granted AND a.application_name = %s", [self.app_name])
                return cursor.fetchone()[0] >= self.pids_count
        db_file = os.path.realpath(connection.settings_dict["NAME"])
        for proc in procs:
            fd_dir = Path(f"/proc/{proc.pid}/fd")
            if not fd_dir.exists():  # not Linux: give them time to start instead
                time.sleep(5)
                return True
            try:
                targets = {os.path.realpath(fd) for fd in fd_dir.iterdir()}
            except (FileNotFoundError, PermissionError):
                return False
            if db_file not in targets:
                return False
        return True


def _celery_command() -> list[str]:
    script = Path(sys.executable).with_name("celery")  # .venv/bin/celery next to .venv/bin/python
    return [str(script)] if script.exists() else [sys.executable, "-m", "celery"]
