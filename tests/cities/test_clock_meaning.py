"""The clock keeps its meaning (DESIGN.md "The clock"): late, reordered, crashed and upgraded runs change no outcome.

One or more regression tests per problem found on PostgreSQL with real processes:

1. a night resolved before it started (a court deadline at 09:30, an election after midnight): the held night moves
   its end, the daily post's draft and the next day, in order and audited; ``night_end`` waits for its night;
2. night actions after the planned end of the night counted by a late resolution;
3. crashes invisible and unbounded (attempt recorded first, crash back-off, Game lock FOR NO KEY UPDATE,
   statement/idle timeouts, Celery time limits);
4. a missed voting window skipped silently;
5. votes accepted after the Tribune's close (``test_clock_close_race.py``);
6. the daily post published in the same tick as its draft after an outage;
7. no "retry now", failures not on the dashboards, tick pile-up;
8. ties at equal times (``tests/rulesets/lepra/day/test_lepra_tally.py``);
9. migrations, pause/resume, backup and restore.

A small Moscow game's clock starts on Monday 1 March 2027, day 1 at 10:00 MSK (07:00 UTC); ``now`` is passed down.
"""
from __future__ import annotations

import runpy
from io import StringIO
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pytest
import time_machine
from django.apps import apps as django_apps
from django.conf import settings
from django.core.management import call_command
from django.db import connection, migrations, models
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations import AddField, AlterField
from django.db.models import NOT_PROVIDED
from django.test import Client, override_settings

from cities import scheduler
from cities.models import (
    City,
    ClockPause,
    Game,
    GameDay,
    GameEvent,
    LifeStatus,
    PublicPost,
    Resident,
    ScheduledEvent,
)
from cities.scheduler import dispatch_due_events
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import NotAllowed, WrongState
from kernel.public_ids import new_public_id
from rulesets.lepra.models import NightDecision
from rulesets.lepra.clock.services import do_publish_daily_post, do_set_day_start, do_start_game_clock
from rulesets.lepra.day.services import do_schedule_voting
from rulesets.lepra.night.services import do_check_resident, do_submit_night_decision
from tests.cities.clock_helpers import DAY1, US, advance, clocked_game, night_handler, ran

pytestmark = pytest.mark.django_db

H = timedelta(hours=1)
M = timedelta(minutes=1)


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.fixture
def built():
    with night_handler():
        yield clocked_game("meaning")


def kinds(game) -> list[tuple[str, dict]]:
    return [(k, p) for k, p in ran(game)]


# ----------------------------------------------------------------------------------------------------------------
# 1. One rule for time: a held night moves what depends on it
# ----------------------------------------------------------------------------------------------------------------

def test_court_deadline_after_the_planned_night_end_moves_night_end_draft_and_day_start_L_DAY_3(built, monkeypatch):
    """Moscow: the Arbiter's court deadline is 09:30 the next morning, after the planned night end (09:00). The
    night starts at 09:30, is resolved at 10:00 (at least 30 minutes of night), the draft follows the resolution,
    and day 2 starts at 10:30 (the Procurator's 30-minute edit window): never a resolution before the night."""
    game = built.game
    advance(game, DAY1)
    court = utc(2027, 3, 2, 6, 30)  # 09:30 MSK
    monkeypatch.setitem(scheduler.HANDLERS, "court_deadline", lambda event, now: "court decided")
    ScheduledEvent.objects.create(game=game, kind="court_deadline", due_at=court, payload={"case": 0},
                                  created_at=DAY1 + H)
    advance(game, utc(2027, 3, 2, 9))
    assert kinds(game) == [("day_start", {"day": 1}), ("night_start", {"day": 1}), ("court_deadline", {"case": 0}),
                           ("night_start", {"day": 1}), ("night_end", {"night": 1}),
                           ("daily_post_draft", {"day": 2}), ("day_start", {"day": 2})]
    day1, day2 = GameDay.objects.get(game=game, number=1), GameDay.objects.get(game=game, number=2)
    assert (day1.night_starts_at, day1.ended_at) == (court, court)
    assert day1.night_ends_at == utc(2027, 3, 2, 7)  # 10:00 MSK
    assert day2.starts_at == day2.started_at == utc(2027, 3, 2, 7, 30)  # 10:30 MSK
    night_end = ScheduledEvent.objects.get(game=game, kind="night_end", done_at__isnull=False)
    draft = ScheduledEvent.objects.get(game=game, kind="daily_post_draft", done_at__isnull=False)
    assert court < night_end.done_at == day1.night_ends_at and draft.done_at == day1.night_ends_at
    assert night_end.pk < draft.pk  # the draft runs after the resolution at the same instant
    replanned = GameEvent.objects.get(game=game, kind="clock.replanned")
    assert replanned.payload["reason"] == "night_waits" and replanned.at == utc(2027, 3, 1, 21)
    assert {(c["kind"], c["to"]) for c in replanned.payload["changes"]} == {
        ("night_end", "2027-03-02T07:00:00+00:00"), ("daily_post_draft", "2027-03-02T07:00:00+00:00"),
        ("day_start", "2027-03-02T07:30:00+00:00")}
    assert GameDay.objects.get(game=game, number=2).post.created_at == day1.night_ends_at


def test_election_closing_after_midnight_holds_a_london_night_and_moves_its_end_and_the_01_30_day_L_DAY_3(
        monkeypatch):
    """Europe/London with a 01:30 day start: the night after day 1 would end at 00:45; a judge election closing at
    01:00 holds it, so it is resolved at 01:30 and day 2 starts at 02:00."""
    with night_handler():
        built = clocked_game("london", time_zone="Europe/London", first_day=utc(2027, 3, 1, 10))
        game = built.game
        do_set_day_start(game, time(1, 30), acting_user=built.procurator, now=utc(2027, 2, 28, 12))
        monkeypatch.setitem(scheduler.HANDLERS, "election_close", lambda event, now: "elected")
        advance(game, utc(2027, 3, 1, 10))
        assert GameDay.objects.get(game=game, number=1).night_ends_at == utc(2027, 3, 2, 0, 45)
        closes = utc(2027, 3, 2, 1)
        ScheduledEvent.objects.create(game=game, kind="election_close", due_at=closes, payload={"election": 0},
                                      created_at=utc(2027, 3, 1, 11))
        advance(game, utc(2027, 3, 2, 3))
        assert kinds(game)[1:] == [("night_start", {"day": 1}), ("election_close", {"election": 0}),
                                   ("night_start", {"day": 1}), ("night_end", {"night": 1}),
                                   ("daily_post_draft", {"day": 2}), ("day_start", {"day": 2})]
        day1 = GameDay.objects.get(game=game, number=1)
        assert (day1.ended_at, day1.night_ends_at) == (closes, utc(2027, 3, 2, 1, 30))
        assert GameDay.objects.get(game=game, number=2).started_at == utc(2027, 3, 2, 2)


def test_night_end_waits_while_its_night_has_not_started_DESIGN_clock(built):
    """A ``night_end`` that finds its day still running (the night start did not happen) is not run: it waits,
    changes nothing, and blocks the draft and the day start behind it."""
    game = built.game
    advance(game, DAY1)
    ScheduledEvent.objects.filter(game=game, kind="night_start").update(cancelled_at=DAY1)  # the night never starts
    assert dispatch_due_events(now=utc(2027, 3, 2, 6)) == 0
    night_end = ScheduledEvent.objects.get(game=game, kind="night_end")
    assert night_end.done_at is None and night_end.last_error == "Waits: night 1 has not started yet"
    assert not GameEvent.objects.filter(game=game, kind="night.resolved").exists()
    assert GameEvent.objects.filter(game=game, kind="scheduler.event_waits", payload__event=night_end.pk).count() == 1
    game.refresh_from_db()
    assert game.day_number == 1


# ----------------------------------------------------------------------------------------------------------------
# 2. Night actions are cut off at the planned end of the night
# ----------------------------------------------------------------------------------------------------------------

@pytest.fixture
def clocked_night():
    """The night game of ``tests/roles`` (3 cities of 5 on day 2, godfathers and commissars) on the real clock: day 2
    started on 2 March 2027 10:00 MSK, day 3 starts at 10:00 MSK on 3 March; night 2 ends at 09:00 MSK (06:00 UTC)."""
    from tests.rulesets.lepra.night.conftest import build_night_game

    ng = build_night_game("cutoff")
    do_start_game_clock(ng.game, first_day_starts_at=utc(2027, 3, 3, 7), acting_user=ng.procurator,
                        now=utc(2027, 3, 2, 8))
    ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True).exclude(game=ng.game).update(
        cancelled_at=utc(2027, 3, 2, 8))
    advance(ng.game, utc(2027, 3, 2, 21))  # 00:00 MSK: the night starts
    return ng


def test_decision_after_the_planned_night_end_is_refused_and_never_counted_by_a_late_resolution_L_NIGHT_6(
        clocked_night):
    ng = clocked_night
    city = ng.cities[0]
    first, second = ng.honest[1][0], ng.honest[1][1]
    godfather = ng.godfather[1].user
    do_submit_night_decision(city, first, acting_user=godfather, now=utc(2027, 3, 2, 22))
    assert GameDay.objects.get(game=ng.game, number=2).night_ends_at == utc(2027, 3, 3, 6)
    late = utc(2027, 3, 3, 6) + timedelta(hours=5, minutes=50)  # the beat was down; the page still answers
    with pytest.raises(WrongState) as refused:
        do_submit_night_decision(city, second, acting_user=godfather, now=late)
    assert refused.value.rule == "L-NIGHT-6"
    with pytest.raises(WrongState):
        do_check_resident(ng.mafia[1][0], acting_user=ng.commissar[1].user, now=late)
    # Even a row stored after the cut-off (written before this rule existed) is not counted.
    NightDecision.objects.create(game=ng.game, city=city, night=2, kind="kill", target=second, at=late)
    assert dispatch_due_events(now=late + M) >= 1
    assert ng.r(first).status == LifeStatus.DEAD
    assert ng.r(second).status == LifeStatus.ALIVE


def test_decision_before_the_planned_end_counts_even_when_the_resolution_runs_hours_late_L_NIGHT_6(clocked_night):
    ng = clocked_night
    city, target = ng.cities[0], ng.honest[1][0]
    do_submit_night_decision(city, target, acting_user=ng.godfather[1].user, now=utc(2027, 3, 3, 6) - US)
    assert dispatch_due_events(now=utc(2027, 3, 3, 12)) >= 1
    assert ng.r(target).status == LifeStatus.DEAD


# ----------------------------------------------------------------------------------------------------------------
# 3. Crashes are visible and bounded
# ----------------------------------------------------------------------------------------------------------------

def test_a_crashed_attempt_leaves_a_trace_shows_on_the_clock_page_and_is_retried_after_the_back_off_DESIGN_clock(
        built):
    game = built.game
    claimed, claimed_at = scheduler._claim_one_due_event(DAY1)  # the worker took the day start... and was killed
    assert claimed.kind == "day_start" and claimed_at == DAY1
    event = ScheduledEvent.objects.get(pk=claimed.pk)
    assert (event.attempts, event.started_at, event.done_at) == (1, DAY1, None)
    assert event.retry_at == DAY1 + timedelta(seconds=settings.MAFIA_EVENT_CRASH_RETRY_SECONDS)
    assert dispatch_due_events(now=DAY1 + 10 * US) == 0  # no other dispatcher takes it before the back-off
    client = Client()
    with time_machine.travel(DAY1 + timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 1), tick=False):
        client.force_login(built.procurator)  # logged in at the travelled time (sessions expire)
        page = client.get(f"/staff/games/{game.slug}/clock/").content.decode()
        dashboard = client.get("/staff/").content.decode()
    assert "attempt-started" in page and "failing-events" in page
    assert f"/staff/games/{game.slug}/clock/" in dashboard
    retry_at = event.retry_at
    assert dispatch_due_events(now=retry_at) == 1
    event.refresh_from_db()
    assert event.done_at == retry_at and event.attempts == 2 and event.started_at is None
    crash = GameEvent.objects.get(game=game, kind="scheduler.event_crashed")
    assert crash.payload == {"event": event.pk, "kind": "day_start", "attempts": 1,
                             "started_at": DAY1.isoformat()}
    assert GameEvent.objects.filter(game=game, kind="clock.day_started").count() == 1


def test_a_lost_database_connection_ends_the_tick_without_an_exception_DESIGN_clock(built, monkeypatch):
    from django.db import OperationalError

    def connection_lost(now):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(scheduler, "try_run_one_due_event", connection_lost)
    assert dispatch_due_events(now=DAY1) == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_game_lock_is_no_key_update_so_a_post_never_waits_for_a_handler_holding_the_game_DESIGN_clock():
    """The Game row is locked FOR NO KEY UPDATE: on PostgreSQL another session inserts a row that references the
    game (its audit log) while a handler holds the lock. (SQLite locks the whole file; the query flag is checked.)"""
    import threading

    from django.contrib.auth import get_user_model
    from django.db import connections, transaction

    from cities.services import do_create_game, record_event

    assert Game.objects.select_for_update().query.select_for_no_key_update
    if connection.vendor != "postgresql":
        return
    user = get_user_model().objects.create_user("lock-proc", "lock-proc@example.com", "x-secret-123")
    game = do_create_game(title="Lock", slug="lock", acting_user=user)
    locked, release = threading.Event(), threading.Event()

    def handler_holding_the_game():
        try:
            with transaction.atomic():
                Game.objects.select_for_update().get(pk=game.pk)
                locked.set()
                release.wait(30)
        finally:
            connections.close_all()

    thread = threading.Thread(target=handler_holding_the_game)
    thread.start()
    try:
        assert locked.wait(30)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '3s'")
            record_event(game, "test.insert_while_locked", actor=None, at=DAY1)
    finally:
        release.set()
        thread.join(30)
    assert GameEvent.objects.filter(game=game, kind="test.insert_while_locked").count() == 1


def test_postgresql_sessions_get_statement_and_idle_in_transaction_timeouts_DESIGN_clock(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://mafia@127.0.0.1:5432/mafia")
    monkeypatch.setenv("DATABASE_STATEMENT_TIMEOUT_MS", "15000")
    base = runpy.run_path(str(Path(settings.BASE_DIR) / "mafia_site" / "settings" / "base.py"),
                          run_name="mafia_site.settings.base_check")
    options = base["DATABASES"]["default"]["OPTIONS"]["options"]
    assert "-c statement_timeout=15000" in options
    assert "-c idle_in_transaction_session_timeout=60000" in options
    example = (Path(settings.BASE_DIR) / ".env.example").read_text()
    for name in ("DATABASE_STATEMENT_TIMEOUT_MS", "DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS",
                 "CELERY_TASK_SOFT_TIME_LIMIT", "CELERY_TASK_TIME_LIMIT", "MAFIA_EVENT_CRASH_RETRY_SECONDS"):
        assert f"# {name}=" in example


def test_celery_tasks_are_time_limited_and_ticks_expire_in_the_broker_DESIGN_clock():
    from mafia_site.celery import app
    from mafia_site.tasks import dispatch_due_events as tick

    app.finalize()
    assert app.conf.task_soft_time_limit == settings.CELERY_TASK_SOFT_TIME_LIMIT == 120
    assert app.conf.task_time_limit == settings.CELERY_TASK_TIME_LIMIT == 150
    entry = app.conf.beat_schedule["dispatch due scheduled events"]
    assert entry["options"]["expires"] == settings.MAFIA_DISPATCH_TICK_EXPIRES_SECONDS == settings.MAFIA_DISPATCH_INTERVAL_SECONDS
    assert tick.acks_late is False  # a tick lost with its worker is not redelivered: the next tick does its work


# ----------------------------------------------------------------------------------------------------------------
# 4. A missed voting window is never skipped silently
# ----------------------------------------------------------------------------------------------------------------

DAY2 = utc(2027, 3, 2, 7)


@pytest.fixture
def missed(built):
    """Day 2 of the clocked game; city 1's Tribune set the voting 17:00-22:00 MSK; the beat was down from 16:59 to
    22:30 MSK."""
    game = built.game
    advance(game, DAY2)
    city = City.objects.get(game=game, number=1)
    session = do_schedule_voting(city, utc(2027, 3, 2, 14), utc(2027, 3, 2, 19), acting_user=built.staff["tribune1"],
                                 now=DAY2 + H)
    advance(game, utc(2027, 3, 2, 13, 59))
    assert dispatch_due_events(now=utc(2027, 3, 2, 19, 30)) == 2  # both voting events ran late
    return built, city, session


def test_missed_voting_window_is_reported_to_the_staff_at_once_L_VOTE_7_L_DAY_3(missed):
    built, city, session = missed
    game = built.game
    reports = GameEvent.objects.filter(game=game, kind="voting.window_missed")
    assert reports.count() == 1 and reports.get().payload["session"] == session.pk  # once, not per event
    office = Inbox.objects.get(game=game, kind=LepraInboxKind.OFFICE)
    text = Message.objects.filter(inbox=office).order_by("-pk").first().body
    assert city.name in text and "17:00" in text and "22:00" in text
    session.refresh_from_db()
    assert session.opened_at is None and session.closed_at is None
    for user in (built.procurator, built.staff["tribune1"]):
        client = Client()
        with time_machine.travel(utc(2027, 3, 2, 19, 31), tick=False):
            client.force_login(user)
            dashboard = client.get("/staff/").content.decode()
        assert f"/staff/votings/{session.public_id}/reschedule/" in dashboard, user
    client = Client()
    with time_machine.travel(utc(2027, 3, 2, 19, 31), tick=False):
        client.force_login(built.procurator)
        page = client.get(f"/staff/games/{game.slug}/clock/").content.decode()
    assert "missed-votings" in page


def test_missed_voting_is_rescheduled_the_same_day_in_one_action_and_runs_L_DAY_3(missed):
    built, _city, session = missed
    game = built.game
    client = Client()
    url = f"/staff/votings/{session.public_id}/reschedule/"
    with time_machine.travel(utc(2027, 3, 2, 19, 35), tick=False):
        client.force_login(built.staff["tribune1"])
        form = client.get(url)
        assert form.status_code == 200 and "missed-window" in form.content.decode()
        # The session is named by its public id only: its database id, an unknown and a malformed id are a 404.
        for other in (str(session.pk), new_public_id(), session.public_id.upper()):
            assert client.get(f"/staff/votings/{other}/reschedule/").status_code == 404, other
        late = client.post(url, {"opens_at": "2027-03-02T22:45", "closes_at": "2027-03-03T00:30"})
        assert late.status_code == 200  # refused: all voting is over by 00:00 (L-DAY-3)
        session.refresh_from_db()
        assert session.closes_at == utc(2027, 3, 2, 19)
        done = client.post(url, {"opens_at": "2027-03-02T22:45", "closes_at": "2027-03-02T23:50"})
    assert done.status_code == 302
    session.refresh_from_db()
    assert (session.opens_at, session.closes_at) == (utc(2027, 3, 2, 19, 45), utc(2027, 3, 2, 20, 50))
    advance(game, utc(2027, 3, 2, 20))
    session.refresh_from_db()
    assert session.opened_at == utc(2027, 3, 2, 19, 45)
    assert GameEvent.objects.filter(game=game, kind="voting.rescheduled").count() == 1
    other = Client()
    with time_machine.travel(utc(2027, 3, 2, 19, 36), tick=False):
        other.force_login(built.staff["tribune2"])  # another city's Tribune
        assert other.get(url).status_code == 404


# ----------------------------------------------------------------------------------------------------------------
# 6. The daily post's edit window, also after an outage
# ----------------------------------------------------------------------------------------------------------------

def test_after_an_outage_the_draft_is_held_for_the_edit_window_and_the_procurator_may_publish_at_once_L_POST_2(
        built):
    game = built.game
    advance(game, utc(2027, 3, 2, 5))  # night 1; the beat goes down before the night end (06:00 UTC)
    restart = utc(2027, 3, 2, 8)
    dispatch_due_events(now=restart)  # night end, draft and day start in one tick
    plan = GameDay.objects.get(game=game, number=2)
    assert plan.started_at == restart
    post = plan.post
    assert post.published_at is None and post.publish_at == restart + timedelta(minutes=30)
    with pytest.raises(NotAllowed):
        do_publish_daily_post(game, 2, acting_user=built.staff["tribune1"], now=restart + M)
    do_publish_daily_post(game, 2, acting_user=built.procurator, now=restart + 5 * M)
    post.refresh_from_db()
    assert post.published_at == restart + 5 * M
    assert dispatch_due_events(now=restart + timedelta(minutes=30)) == 1  # the held publication: nothing left
    post.refresh_from_db()
    assert post.published_at == restart + 5 * M
    assert PublicPost.objects.filter(game=game, kind="daily", published_at__isnull=False).count() == 1


def test_the_procurator_cannot_publish_the_daily_post_before_the_day_starts_L_POST_2(built):
    game = built.game
    advance(game, utc(2027, 3, 2, 6, 10))  # drafted at 06:00 UTC, day 2 starts at 07:00
    with pytest.raises(WrongState):
        do_publish_daily_post(game, 2, acting_user=built.procurator, now=utc(2027, 3, 2, 6, 10))
    assert GameDay.objects.get(game=game, number=2).post.published_at is None


# ----------------------------------------------------------------------------------------------------------------
# 7. Retry now
# ----------------------------------------------------------------------------------------------------------------

def test_procurator_retries_a_failing_event_now_from_the_clock_page_DESIGN_clock(built, monkeypatch):
    game = built.game
    real = scheduler.HANDLERS["day_start"]

    def broken(event, now):
        raise RuntimeError("inbox rollover exploded")

    monkeypatch.setitem(scheduler.HANDLERS, "day_start", broken)
    assert dispatch_due_events(now=DAY1) == 0
    event = ScheduledEvent.objects.get(game=game, kind="day_start")
    assert event.retry_at == DAY1 + timedelta(seconds=30)
    monkeypatch.setitem(scheduler.HANDLERS, "day_start", real)
    client = Client()
    moment = DAY1 + timedelta(seconds=5)
    with time_machine.travel(moment, tick=False):
        client.force_login(built.procurator)
        response = client.post(f"/staff/games/{game.slug}/clock/retry/", {"event": event.pk})
        tribune = Client()
        tribune.force_login(built.staff["tribune1"])
        assert tribune.post(f"/staff/games/{game.slug}/clock/retry/", {"event": event.pk}).status_code == 404
    assert response.status_code == 302
    event.refresh_from_db()
    assert event.retry_at == moment
    assert GameEvent.objects.filter(game=game, kind="scheduler.retry_requested").count() == 1
    assert dispatch_due_events(now=moment) == 1
    game.refresh_from_db()
    assert game.day_number == 1


# ----------------------------------------------------------------------------------------------------------------
# 9. Upgrades: pause, migrations, backups
# ----------------------------------------------------------------------------------------------------------------

def test_clock_pause_holds_every_event_and_resume_runs_them_in_order_DESIGN_clock(built, capsys):
    game = built.game
    call_command("clock", "pause", "--reason", "upgrade to 1.4")
    assert dispatch_due_events(now=DAY1 + H) == 0
    client = Client()
    client.force_login(built.procurator)
    assert "clock-paused" in client.get(f"/staff/games/{game.slug}/clock/").content.decode()
    call_command("clock", "status")
    assert "paused since" in capsys.readouterr().out
    call_command("clock", "resume")
    assert dispatch_due_events(now=DAY1 + H) == 1
    assert GameDay.objects.get(game=game, number=1).started_at == DAY1 + H
    assert list(GameEvent.objects.filter(game=game, kind__startswith="clock.").exclude(
        kind__in=["clock.started"]).values_list("kind", flat=True)) == ["clock.paused", "clock.resumed",
                                                                         "clock.day_started"]


def test_game_page_says_the_clock_is_paused_DESIGN_clock(built):
    game = built.game
    advance(game, DAY1)  # day 1 runs
    client = Client()
    assert "clock-paused" not in client.get(f"/games/{game.slug}/").content.decode()
    call_command("clock", "pause")
    assert "clock-paused" in client.get(f"/games/{game.slug}/").content.decode()
    call_command("clock", "resume")
    assert "clock-paused" not in client.get(f"/games/{game.slug}/").content.decode()


PROJECT_APPS = ("accounts", "archive", "cities", "inboxes", "m21", "roles", "sanctions", "staff", "voting")


def _not_null_columns_without_a_default(migration, app: str, state_before) -> list[str]:
    """The ``AddField``/``AlterField`` operations of ``migration`` that leave a NOT NULL column with no database
    default on an existing table (a model created in the same migration is new, so free). ``state_before`` is a
    callable returning the project state just before the migration (read only for an ``AlterField``)."""
    created = set()
    bad = []
    for index, operation in enumerate(migration.operations):
        if type(operation).__name__ == "CreateModel":
            created.add(operation.name.lower())
        if not isinstance(operation, (AddField, AlterField)) or operation.model_name.lower() in created:
            continue
        field = operation.field
        if field.null or field.many_to_many or field.db_default is not NOT_PROVIDED:
            continue
        if isinstance(operation, AlterField):
            before = state_before()  # then the migration's earlier operations (a model renamed just before, say)
            for earlier in migration.operations[:index]:
                earlier.state_forwards(app, before)
            old = before.models[app, operation.model_name.lower()].fields[operation.name]
            if not old.null:
                continue
        bad.append(f"{app}.{migration.name}: {type(operation).__name__} {operation.model_name}.{operation.name}")
    return bad


@override_settings(MIGRATION_MODULES={})  # the suite runs with --no-migrations: read the real ones
def test_no_migration_adds_a_not_null_column_without_a_database_default_DESIGN_migrations():
    """Expand/contract: old web and worker processes keep inserting rows during a migration; a new NOT NULL
    column must have a database default (``db_default``) or be nullable, in every migration, old ones included;
    an existing column never becomes NOT NULL without one."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    base = Path(settings.BASE_DIR)
    apps_here = {app for app, _name in loader.disk_migrations
                 if Path(django_apps.get_app_config(app).path).is_relative_to(base)
                 and ".venv" not in Path(django_apps.get_app_config(app).path).relative_to(base).parts}
    assert set(PROJECT_APPS) <= apps_here
    bad = []
    for (app, name), migration in sorted(loader.disk_migrations.items()):
        if app in apps_here:
            bad += _not_null_columns_without_a_default(
                migration, app, lambda key=(app, name): loader.project_state(key, at_end=False))
    assert bad == []


@override_settings(MIGRATION_MODULES={})
def test_the_not_null_check_flags_a_later_migration_that_would_lock_out_old_processes_DESIGN_migrations():
    """The migrations are one initial set today (every table new), so the check above must be shown to bite on a
    migration of the future: a NOT NULL column added to (or an existing nullable column made NOT NULL on) a live
    table with no ``db_default`` is flagged; nullable, ``db_default`` and new-table columns pass."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    leaf = loader.graph.leaf_nodes("cities")[0]

    def state():
        return loader.project_state(leaf)

    later = migrations.Migration("0099_later", "cities")
    later.dependencies = [leaf]
    later.operations = [
        AddField("game", "motto", models.CharField(max_length=20, default="")),
        AddField("game", "motto_key", models.CharField(max_length=20, default="", db_default="")),
        AddField("game", "motto_note", models.CharField(max_length=20, null=True)),
        AlterField("game", "ended_at", models.DateTimeField()),
        migrations.CreateModel("Banner", fields=[("id", models.BigAutoField(primary_key=True)),
                                                 ("text", models.CharField(max_length=20))]),
        AddField("banner", "colour", models.CharField(max_length=20, default="red")),
    ]
    assert state().models["cities", "game"].fields["ended_at"].null
    assert _not_null_columns_without_a_default(later, "cities", state) == [
        "cities.0099_later: AddField game.motto",
        "cities.0099_later: AlterField game.ended_at",
    ]


def _clock_status() -> str:
    out = StringIO()
    call_command("clock", "status", stdout=out)
    return out.getvalue()


#: Audit rows of the operator's pause and resume, which the backed-up run did not have.
OPERATOR_KINDS = ("clock.paused", "clock.resumed")


@pytest.mark.django_db(transaction=True)
def test_backup_and_restore_drill_brings_back_the_game_and_its_clock_paused_DESIGN_backups(tmp_path):
    """``manage.py backup`` then ``restore``: after later changes, the restored database is the backed-up one; its
    clock is paused (the backup was made while it ran) and says so, and nothing runs until ``clock resume``; then the
    clock runs from there exactly as it would have (SQLite: the backup API; PostgreSQL: pg_dump/pg_restore)."""
    with night_handler():
        built = clocked_game("drill")
        game = built.game
        path = tmp_path / "drill.backup"
        call_command("backup", str(path))
        assert path.stat().st_size > 0
        advance(game, utc(2027, 3, 2, 8))  # day 1, night 1, day 2: all after the backup
        after = (Game.objects.get(pk=game.pk).day_number,
                 GameEvent.objects.filter(game=game).exclude(kind__in=OPERATOR_KINDS).count())
        assert after[0] == 2
        with pytest.raises(Exception, match="--yes"):
            call_command("restore", str(path))
        out = StringIO()
        call_command("restore", str(path), "--yes", stdout=out)
        assert "The clock is PAUSED (restored from drill.backup at " in out.getvalue()
        assert "no scheduled event runs until `manage.py clock resume`" in out.getvalue()
        connection.close()
        restored = Game.objects.get(pk=game.pk)
        assert restored.day_number == 0 and not GameDay.objects.filter(game=game, started_at__isnull=False).exists()
        assert ScheduledEvent.objects.filter(game=game, done_at__isnull=True, cancelled_at__isnull=True).count() == 1
        pause = scheduler.clock_paused()
        assert pause is not None and pause.reason.startswith("restored from drill.backup at ")
        assert _clock_status().startswith("Clock paused since ")
        # Paused: the due events wait, whatever the time.
        assert advance(restored, utc(2027, 3, 2, 8)) == 0
        assert Game.objects.get(pk=game.pk).day_number == 0
        call_command("clock", "resume", stdout=StringIO())
        assert _clock_status().startswith("Clock running;")
        advance(restored, utc(2027, 3, 2, 8))
        assert (Game.objects.get(pk=game.pk).day_number,
                GameEvent.objects.filter(game=game).exclude(kind__in=OPERATOR_KINDS).count()) == after
        assert Resident.objects.filter(game=game).count() == 10


@pytest.mark.django_db(transaction=True)
def test_a_backup_made_while_paused_is_restored_paused_with_the_restores_reason_DESIGN_backups(tmp_path):
    """The README's order pauses before the backup: the restored pause stays, and names the restore."""
    scheduler.do_pause_clock(reason="upgrade to 2.0")
    path = tmp_path / "paused.backup"
    call_command("backup", str(path))
    scheduler.do_resume_clock()
    assert scheduler.clock_paused() is None
    call_command("restore", str(path), "--yes", stdout=StringIO())
    connection.close()
    pause = scheduler.clock_paused()
    assert pause is not None and pause.reason.startswith("restored from paused.backup at ")
    assert list(ClockPause.objects.values_list("key", flat=True)) == ["site"]
