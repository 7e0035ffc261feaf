"""The live stack of the browser tests: a web server, a Celery worker and beat on one game clock that the test
moves (DESIGN.md "The clock"; issue 9).

Every process of the stack runs under ``tests/e2e/clock_run.py``: the game time is the real time plus an offset
kept in a file, which the test changes with ``GameClock.set`` (all processes acknowledge before it returns), so a
voting that opens at 18:00 opens when the test moves the clock past 18:00, and nothing sleeps for game time. The
processes get the test database (SQLite file or PostgreSQL ``test_*`` database) and a broker private to the run
exactly as the integration tests' do (``tests/integration/test_celery_clock.py``: filesystem broker in a private
``MAFIA_VAR_DIR``, or Redis when ``REDIS_URL`` is set).
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings

from tests.integration.celery_helpers import Processes, subprocess_env

BASE_DIR = Path(settings.BASE_DIR)
CLOCK_RUN = BASE_DIR / "tests" / "e2e" / "clock_run.py"
POLL_SECONDS = 0.1


class GameClock:
    """The shared game clock: ``now()`` is the real time plus an offset written to ``path`` for the processes.

    ``set(moment)`` moves every process of the stack to ``moment`` (aware) and returns once each named process has
    acknowledged; time then flows on at the real rate from there.
    """

    def __init__(self, path: Path, start: datetime) -> None:
        self.path = path
        self.version = 0
        self.followers: list[str] = []  # names of the long-running processes that must acknowledge a move
        self._write(start)

    def now(self) -> datetime:
        """The game time now (aware UTC)."""
        return datetime.fromtimestamp(time.time() + self.offset, UTC)

    def _write(self, moment: datetime) -> None:
        assert moment.tzinfo is not None, "the game clock takes aware datetimes"
        self.offset = moment.timestamp() - time.time()
        self.version += 1
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(f"{self.version} {self.offset!r}")
        os.replace(tmp, self.path)

    def set(self, moment: datetime, *, timeout: float = 20) -> None:
        """Move the game time of every process forward to ``moment``; wait until all have moved. Never back:
        Celery beat would wait for its last tick's time to come again."""
        assert moment >= self.now(), f"the game clock moves forward only: {moment} < {self.now()}"
        self._write(moment)
        deadline = time.monotonic() + timeout
        for name in self.followers:
            ack = self.path.with_name(f"{self.path.name}.ack.{name}")
            while True:
                try:
                    if int(ack.read_text() or 0) >= self.version:
                        break
                except (OSError, ValueError):
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"{name} did not move its clock to {moment} within {timeout} s")
                time.sleep(0.02)

    def advance(self, delta: timedelta) -> None:
        """Move the game time forward by ``delta``."""
        self.set(self.now() + delta)

    def next_day_at(self, hour: int, minute: int = 0, zone: str = "Europe/Moscow") -> datetime:
        """The first ``hour:minute`` in ``zone`` on a calendar day after today's (aware UTC): where a test
        starts its game, after whatever the previous test did."""
        local = self.now().astimezone(ZoneInfo(zone))
        day = local.date() + timedelta(days=1)
        return datetime(day.year, day.month, day.day, hour, minute, tzinfo=ZoneInfo(zone)).astimezone(UTC)

    def at(self, day: datetime, hour: int, minute: int = 0, zone: str = "Europe/Moscow") -> datetime:
        """``hour:minute`` in ``zone`` on the calendar day of ``day`` there (aware UTC)."""
        local = day.astimezone(ZoneInfo(zone))
        return local.replace(hour=hour, minute=minute, second=0, microsecond=0).astimezone(UTC)


#: How often the stack's open pages poll for news (s): the live-page tests wait for this, not for the default.
LIVE_POLL_SECONDS = 2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Stack:
    """A running stack: ``base_url`` of the web server, the game ``clock``, the subprocesses and their env."""

    base_url: str
    clock: GameClock
    processes: Processes
    env: dict[str, str]
    tmp_path: Path
    dispatch_runs: list[str] = field(default_factory=list)

    def clocked(self, name: str, *command: str) -> list[str]:
        """The argv running ``command`` (``manage.py ...`` or ``-m module ...``) on the game clock."""
        return [sys.executable, str(CLOCK_RUN), str(self.clock.path), name, *command]

    def start(self, name: str, *command: str) -> subprocess.Popen:
        """Start a long-running process of the stack on the game clock; it follows every clock move."""
        proc = self.processes.start(name, self.clocked(name, *command), self.env)
        self.clock.followers.append(name)
        return proc

    def run_due_events(self) -> str:
        """``manage.py run_due_events`` at the current game time (the same work as a beat tick); returns its
        output. Use it to run what is due now without waiting for the next tick."""
        name = f"dispatch-{len(self.dispatch_runs) + 1}"
        result = subprocess.run(self.clocked(name, "manage.py", "run_due_events"), check=False, cwd=BASE_DIR,
                                env=self.env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        self.dispatch_runs.append(result.stdout)
        return result.stdout

    def wait_until(self, condition: Callable[[], object], what: str, timeout: float = 60) -> object:
        """Poll ``condition`` (a read, e.g. of the database) until it is truthy; fail with the processes' output
        after ``timeout`` real seconds, or at once when a process died."""
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            self.processes.check_alive()
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}\n{self.processes.output()[-20000:]}")
            time.sleep(POLL_SECONDS)

    def worker_dispatches(self) -> list[int]:
        """What each ``dispatch_due_events`` task run by the Celery worker returned (events run), in order."""
        return [int(n) for n in re.findall(r"mafia_site\.tasks\.dispatch_due_events\[[^\]]+\] succeeded in \S+s: (\d+)",
                                           self.processes.log("worker"))]


def _wait_http_ok(url: str, processes: Processes, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        processes.check_alive()
        if time.monotonic() > deadline:
            pytest.fail(f"{url} did not answer within {timeout} s\n{processes.output()}")
        time.sleep(POLL_SECONDS)


def start_stack(tmp_path: Path, start: datetime) -> Stack:
    """Start web (``runserver``, no reloader, static files served), Celery worker and beat (tick every second)
    against the test database, all on a new game clock at ``start``. The caller stops ``stack.processes``."""
    env = subprocess_env(tmp_path)
    # DATABASE_CONN_MAX_AGE=0: runserver serves each request in a thread of its own, and a persistent connection
    # per thread outlives the thread; with every open page polling (live pages) that exhausted PostgreSQL's
    # max_connections ("too many clients"). Each request closes its connection here (gunicorn's workers in
    # production keep theirs).
    # A tick lives 30 s in the broker: the game clock jumps hours at a time and each process reads the jump a moment
    # apart, so a 1 s expiry (the interval) let the worker discard the ticks of a beat a little behind it.
    env.update(MAFIA_DISPATCH_INTERVAL_SECONDS="1", MAFIA_DISPATCH_TICK_EXPIRES_SECONDS="30",
               MAFIA_LIVE_POLL_SECONDS=str(LIVE_POLL_SECONDS),
               MAFIA_LIVE_BADGE_SECONDS=str(LIVE_POLL_SECONDS), DATABASE_CONN_MAX_AGE="0")
    clock = GameClock(tmp_path / "clock", start)
    stack = Stack(base_url="", clock=clock, processes=Processes(tmp_path), env=env, tmp_path=tmp_path)
    port = free_port()
    stack.base_url = f"http://127.0.0.1:{port}"
    try:
        stack.start("web", "manage.py", "runserver", "--noreload", "--insecure", f"127.0.0.1:{port}")
        stack.start("worker", "-m", "celery", "-A", "mafia_site", "worker", "--loglevel=INFO", "--pool=solo",
                    "-n", f"e2e-{uuid.uuid4().hex[:8]}@%h", "--without-mingle", "--without-gossip",
                    "--without-heartbeat")
        stack.start("beat", "-m", "celery", "-A", "mafia_site", "beat", "--loglevel=INFO",
                    "-s", str(tmp_path / "beat-schedule"))
        _wait_http_ok(f"{stack.base_url}/healthz", stack.processes, timeout=60)
        stack.processes.wait_for_line("worker", " ready.", timeout=90)
    except BaseException:
        stack.processes.stop()
        raise
    return stack
