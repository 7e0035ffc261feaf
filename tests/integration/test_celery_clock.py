"""The game clock with real processes (DESIGN.md "The clock"; RULES.md L-POST-2).

These tests start real subprocesses against the test database: a Celery worker and beat (the beat entry of
``mafia_site.celery`` every second), and two ``manage.py run_due_events`` racing each other. They run on both
stacks of DESIGN.md "Settings and services":

- no environment: SQLite (the test settings' file database, handed to the subprocesses as ``SQLITE_PATH``) and
  kombu's filesystem broker in a private ``MAFIA_VAR_DIR``;
- ``DATABASE_URL`` / ``REDIS_URL``: PostgreSQL (pytest-django's ``test_<name>`` database, handed over as
  ``DATABASE_URL``) and Redis.

The tests are transactional (the subprocesses must see committed rows); the session's demo game
(tests/conftest.py) has a scheduled post that is due in real time, so the ``only_our_events`` fixture cancels
pending events that are not ours (the flush after the test removes them anyway).
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from cities.models import GameEvent, PublicPost, ScheduledEvent
from cities.services import do_create_game, do_schedule_public_post

# xdist_group: all tests that start processes run on one worker, one at a time (tests/conftest.py).
pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("processes")]

BASE_DIR = Path(settings.BASE_DIR)
POLL_SECONDS = 0.2


# ----------------------------------------------------------------------------------------------------------------
# Subprocesses
# ----------------------------------------------------------------------------------------------------------------

def _celery_command() -> list[str]:
    script = Path(sys.executable).with_name("celery")  # .venv/bin/celery next to .venv/bin/python
    return [str(script)] if script.exists() else [sys.executable, "-m", "celery"]


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


def make_game(slug: str):
    procurator = get_user_model().objects.create_user(f"{slug}-procurator", f"{slug}@example.com", "x-secret-123")
    return do_create_game(title=f"Game {slug}", slug=slug, acting_user=procurator), procurator


# ----------------------------------------------------------------------------------------------------------------
# Beat + worker
# ----------------------------------------------------------------------------------------------------------------

def test_celery_beat_and_worker_publish_a_scheduled_post_once_at_due_time_L_POST_2(processes, only_our_events,
                                                                                   tmp_path):
    game, procurator = make_game("celery-clock")
    env = subprocess_env(tmp_path)
    celery = _celery_command()
    processes.start("worker", [*celery, "-A", "mafia_site", "worker", "--loglevel=INFO", "--pool=solo",
                               "-n", f"clocktest-{uuid.uuid4().hex[:8]}@%h",
                               "--without-mingle", "--without-gossip", "--without-heartbeat"], env)
    processes.start("beat", [*celery, "-A", "mafia_site", "beat", "--loglevel=INFO",
                             "-s", str(tmp_path / "beat-schedule")], env)
    processes.wait_for_line("worker", " ready.", timeout=60)

    now = timezone.now()
    publish_at = now + timedelta(seconds=2)
    post = do_schedule_public_post(game, title="Reminder", body="Nominations close tonight.", publish_at=publish_at,
                                   acting_user=procurator, now=now)

    deadline = time.monotonic() + 30
    published_at = None
    while published_at is None:
        processes.check_alive()
        assert time.monotonic() < deadline, f"not published 30 s after scheduling\n{processes.output()}"
        time.sleep(POLL_SECONDS)
        published_at = PublicPost.objects.values_list("published_at", flat=True).get(pk=post.pk)
    assert published_at >= publish_at, f"published at {published_at}, before its due time {publish_at}"

    ticks_at_publication = processes.log("worker").count("mafia_site.tasks.dispatch_due_events[")
    time.sleep(3)  # more ticks arrive: none may publish again
    processes.check_alive()

    output = processes.output()
    assert GameEvent.objects.filter(game=game, kind="scheduler.publish_post").count() == 1, output
    assert GameEvent.objects.filter(game=game, kind="scheduler.post_published").count() == 1, output
    assert not GameEvent.objects.filter(game=game, kind="scheduler.event_failed").exists(), output
    event = ScheduledEvent.objects.get(game=game)
    assert event.done_at == published_at and event.attempts == 1, output
    assert ScheduledEvent.objects.filter(game=game, done_at__isnull=False).count() == 1, output
    assert PublicPost.objects.get(pk=post.pk).published_at == published_at, output
    # The beat really ticked (1 s) after the publication: the "exactly once" above survived repeated ticks.
    worker_log = processes.log("worker")
    assert worker_log.count("mafia_site.tasks.dispatch_due_events[") > ticks_at_publication, output
    # And over all ticks, the task reported exactly one event run.
    returned = re.findall(r"mafia_site\.tasks\.dispatch_due_events\[[^\]]+\] succeeded in \S+s: (\d+)", worker_log)
    assert len(returned) >= 2 and sum(map(int, returned)) == 1, output


# ----------------------------------------------------------------------------------------------------------------
# Two dispatchers at once
# ----------------------------------------------------------------------------------------------------------------

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


def test_two_dispatchers_at_once_run_each_due_event_exactly_once_DESIGN_clock(processes, only_our_events, tmp_path):
    games = [make_game(f"race-{i}") for i in range(4)]
    past = timezone.now() - timedelta(minutes=10)
    posts: list[PublicPost] = []
    for i in range(20):
        game, procurator = games[i % len(games)]
        posts.append(do_schedule_public_post(game, title=f"Post {i}", body=f"Text {i}.", acting_user=procurator,
                                             now=past, publish_at=past + timedelta(seconds=1 + i)))
    game_ids = [game.pk for game, _ in games]
    events = list(ScheduledEvent.objects.filter(game__in=game_ids).order_by("due_at", "id"))
    assert len(events) == 20 and all(e.due_at < timezone.now() for e in events)

    gate = _Gate(2)
    env = {**subprocess_env(tmp_path), "PGAPPNAME": gate.app_name}
    held = gate.hold()
    try:
        racers = [processes.start(name, [sys.executable, "manage.py", "run_due_events"], env)
                  for name in ("dispatcher-a", "dispatcher-b")]
        gate.wait_until_blocked(racers, processes)
    finally:
        held.__exit__(None, None, None)  # both go at once
    for proc in racers:
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"a dispatcher did not finish within 60 s\n{processes.output()}")
    output = processes.output()
    assert [proc.returncode for proc in racers] == [0, 0], output

    ran = []
    for name in ("dispatcher-a", "dispatcher-b"):
        counts = re.findall(r"^Ran (\d+) due event\(s\)\.$", processes.log(name), re.M)
        assert len(counts) == 1, output
        ran.append(int(counts[0]))
    print(f"dispatcher a ran {ran[0]}, dispatcher b ran {ran[1]}")
    assert sum(ran) == 20, output

    runs = Counter(GameEvent.objects.filter(game__in=game_ids, kind="scheduler.publish_post")
                   .values_list("payload__event", flat=True))
    assert runs == Counter({e.pk: 1 for e in events}), output
    assert GameEvent.objects.filter(game__in=game_ids, kind="scheduler.post_published").count() == 20, output
    assert not GameEvent.objects.filter(game__in=game_ids, kind="scheduler.event_failed").exists(), output
    assert ScheduledEvent.objects.filter(game__in=game_ids, done_at__isnull=False, attempts=1).count() == 20, output
    for post in posts:
        post.refresh_from_db()
        assert post.published_at is not None and post.published_at >= post.publish_at, (post, output)
    # Per-game order held under the race: each game's events ran in due order (audit rows are written in run order).
    for game_id in game_ids:
        run_order = list(GameEvent.objects.filter(game=game_id, kind="scheduler.publish_post").order_by("id")
                         .values_list("payload__event", flat=True))
        assert run_order == [e.pk for e in events if e.game_id == game_id], output
