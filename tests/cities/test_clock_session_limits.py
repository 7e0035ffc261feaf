"""A hung transaction never takes the site (DESIGN.md "The clock"): every session waits at most
``DATABASE_LOCK_TIMEOUT_MS`` for a lock; the clock's ticks run with their own, longer lock timeout and with
statement and idle-in-transaction bounds well under a minute, so a hung handler is cut and its locks released;
``mafia_site/checks.py`` refuses bounds that cannot work together."""
from __future__ import annotations

import runpy
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import DatabaseError, connection, connections, transaction
from django.test import override_settings

from cities.models import ScheduledEvent
from cities.scheduler import clock_session_limits, dispatch_due_events
from mafia_site.checks import check_mafia_settings
from tests.cities.clock_helpers import DAY1, US, advance, clocked_game, fake_night_end, night_handler


def _show(*names: str) -> list[str]:
    with connection.cursor() as cursor:
        values = []
        for name in names:
            cursor.execute(f"SHOW {name}")
            values.append(cursor.fetchone()[0])
    return values


def test_every_postgresql_session_starts_with_a_lock_timeout_of_2_s_by_default_DESIGN_clock(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://mafia@127.0.0.1:5432/mafia")
    monkeypatch.delenv("DATABASE_LOCK_TIMEOUT_MS", raising=False)
    base = runpy.run_path(str(Path(settings.BASE_DIR) / "mafia_site" / "settings" / "base.py"),
                          run_name="mafia_site.settings.base_locks")
    options = base["DATABASES"]["default"]["OPTIONS"]["options"]
    assert "-c lock_timeout=2000" in options
    assert (base["MAFIA_CLOCK_LOCK_TIMEOUT_MS"], base["MAFIA_CLOCK_STATEMENT_TIMEOUT_MS"],
            base["MAFIA_CLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS"]) == (10_000, 20_000, 20_000)
    example = (Path(settings.BASE_DIR) / ".env.example").read_text()
    for name in ("DATABASE_LOCK_TIMEOUT_MS", "MAFIA_BUSY_RETRY_AFTER_SECONDS", "MAFIA_CLOCK_LOCK_TIMEOUT_MS",
                 "MAFIA_CLOCK_STATEMENT_TIMEOUT_MS", "MAFIA_CLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS"):
        assert f"# {name}=" in example


def _error_ids(**overrides) -> list[str]:
    with override_settings(**overrides):
        return sorted(error.id for error in check_mafia_settings(None))


def test_the_checks_refuse_timeouts_that_cannot_work_together_DESIGN_settings():
    assert _error_ids() == []
    assert _error_ids(DATABASE_LOCK_TIMEOUT_MS=-1) == ["mafia.E004"]
    assert _error_ids(DATABASE_LOCK_TIMEOUT_MS=0) == ["mafia.E005"]  # a request would wait the statement's time
    assert _error_ids(DATABASE_LOCK_TIMEOUT_MS=30_000, DATABASE_STATEMENT_TIMEOUT_MS=30_000) == ["mafia.E005"]
    assert _error_ids(DATABASE_LOCK_TIMEOUT_MS=0, DATABASE_STATEMENT_TIMEOUT_MS=0) == []  # both off: allowed
    assert _error_ids(MAFIA_CLOCK_LOCK_TIMEOUT_MS=0) == ["mafia.E002"]
    assert _error_ids(MAFIA_CLOCK_LOCK_TIMEOUT_MS=20_000) == ["mafia.E006"]
    assert _error_ids(MAFIA_CLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS=120_000) == ["mafia.E007"]
    assert _error_ids(MAFIA_CLOCK_STATEMENT_TIMEOUT_MS=150_000) == ["mafia.E007"]


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_tick_runs_with_the_clocks_own_bounds_and_leaves_the_sessions_own_DESIGN_clock():
    """Inside a tick the session waits 10 s for a lock, cancels a statement after 20 s and ends a transaction idle
    20 s (the defaults); afterwards the session's own settings are back. On SQLite the block changes nothing."""
    if connection.vendor != "postgresql":
        with clock_session_limits():
            assert dispatch_due_events(limit=1) >= 0
        return
    names = ("lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout")
    before = _show(*names)
    with clock_session_limits():
        assert _show(*names) == ["10s", "20s", "20s"]
    assert _show(*names) == before == ["20s", "30s", "1min"]  # the test settings' own (lock: 20 s in the suite)


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_handler_hung_in_a_statement_is_cut_recorded_and_retried_DESIGN_clock():
    """A handler stuck in a statement is cancelled at the clock's statement timeout (300 ms here): the event is
    recorded as failed with the reason and retried after its back-off, its changes rolled back."""
    def hung_night_end(event, now):
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_sleep(30)")
        return fake_night_end(event, now)

    with night_handler(hung_night_end):
        built = clocked_game("hung-clock")
        advance(built.game, DAY1)  # day 1 starts and plans night 1's end
        night_end = (ScheduledEvent.objects.filter(game=built.game, kind="night_end").order_by("due_at").first())
        advance(built.game, night_end.due_at - US)
        started = time.monotonic()
        with (override_settings(MAFIA_CLOCK_STATEMENT_TIMEOUT_MS=300, MAFIA_CLOCK_LOCK_TIMEOUT_MS=100),
              clock_session_limits()):
            dispatch_due_events(now=night_end.due_at)
        seconds = time.monotonic() - started
    night_end.refresh_from_db()
    if connection.vendor != "postgresql":
        assert night_end.done_at == night_end.due_at
        return
    assert seconds < 10  # cut at 0.3 s, not after pg_sleep's 30 s
    assert night_end.done_at is None and night_end.attempts == 1
    assert "canceling statement due to statement timeout" in night_end.last_error
    assert night_end.retry_at == night_end.due_at + timedelta(seconds=30)


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_handler_hung_idle_in_its_transaction_loses_its_session_and_its_locks_DESIGN_clock():
    """A handler hung between two statements (in Python, its transaction open) has its session ended at the clock's
    idle-in-transaction timeout (300 ms here): its row lock is released, so another session takes it at once."""
    if connection.vendor != "postgresql":
        with clock_session_limits():  # SQLite: nothing to bound, nothing changed
            assert connection.vendor == "sqlite"
        return
    locked, outcome = threading.Event(), []

    def hung_handler():
        try:
            with (override_settings(MAFIA_CLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS=300), clock_session_limits(),
                  transaction.atomic()):
                with connection.cursor() as cursor:
                    cursor.execute("LOCK TABLE cities_clockpause IN SHARE ROW EXCLUSIVE MODE")
                locked.set()
                time.sleep(3)  # hung in Python, the transaction idle
                with connection.cursor() as cursor:
                    cursor.execute("SELECT 1")
        except DatabaseError as exc:
            outcome.append(type(exc).__name__)
            if not locked.is_set():
                outcome.append(str(exc))
                locked.set()
        finally:
            connections.close_all()

    thread = threading.Thread(target=hung_handler)
    thread.start()
    try:
        assert locked.wait(30)
        started = time.monotonic()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '10s'")
            cursor.execute("LOCK TABLE cities_clockpause IN SHARE ROW EXCLUSIVE MODE")
        waited = time.monotonic() - started
    finally:
        thread.join(30)
    assert waited < 3  # released at the idle timeout (0.3 s), not when the handler woke up (3 s)
    assert outcome in (["OperationalError"], ["InterfaceError"])


def test_run_due_events_runs_within_the_clocks_bounds(monkeypatch):
    """The command enters ``clock_session_limits`` around its run (as the beat task does)."""
    from cities.management.commands import run_due_events
    from mafia_site import tasks

    entered = []

    class Spy:
        def __enter__(self):
            entered.append(True)

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(run_due_events, "clock_session_limits", Spy)
    monkeypatch.setattr(run_due_events, "dispatch_due_events", lambda: 0)
    call_command("run_due_events")
    monkeypatch.setattr(tasks, "clock_session_limits", Spy)
    monkeypatch.setattr(tasks, "_dispatch", lambda: 0)
    assert tasks.dispatch_due_events.run() == 0
    assert entered == [True, True]
