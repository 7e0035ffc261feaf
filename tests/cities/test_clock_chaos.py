"""Chaos on the clock (issue 6 item 6; DESIGN.md "The clock"): two dispatchers at once, a dispatcher dying in the
middle of a night resolution, the beat down for 6 hours. Every event applies exactly once and in per-game order;
the daily post is published once; a failing handler is retried, never half-applied, and shown to the Procurator.

In-process forms (SQLite and PostgreSQL alike); ``tests/integration/test_clock_processes.py`` has the forms with
real processes. A test-only ``night_end`` handler stands in for the night resolution (``clock_helpers``).
"""
from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from cities import scheduler
from cities.models import GameDay, GameEvent, LifeStatus, PostKind, PublicPost, ScheduledEvent
from cities.scheduler import dispatch_due_events, try_run_one_due_event
from rulesets.lepra import seats
from tests.cities.clock_helpers import advance, clocked_game, fake_night_end, night_handler, ran, victim_of

pytestmark = pytest.mark.django_db


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


DAY2, NIGHT2_END, DAY3 = utc(2027, 3, 2, 7), utc(2027, 3, 3, 6), utc(2027, 3, 3, 7)
EXPECTED_TO_DAY3 = [
    ("day_start", {"day": 1}), ("night_start", {"day": 1}), ("night_end", {"night": 1}),
    ("daily_post_draft", {"day": 2}), ("day_start", {"day": 2}),
    ("night_start", {"day": 2}), ("night_end", {"night": 2}), ("daily_post_draft", {"day": 3}),
    ("day_start", {"day": 3}),
]


@pytest.fixture
def built():
    with night_handler():
        yield clocked_game("chaos-game")


def audit_runs(game) -> Counter:
    """How many times each scheduled event's handler committed (``scheduler.<kind>`` audit rows)."""
    return Counter(GameEvent.objects.filter(game=game, kind__startswith="scheduler.")
                   .exclude(kind__in=["scheduler.event_failed", "scheduler.post_published"])
                   .values_list("payload__event", flat=True))


def assert_exactly_once_to_day_3(game, held_publication: bool = False):
    assert ran(game) == EXPECTED_TO_DAY3 + ([("daily_post_publish", {"day": 3})] if held_publication else [])
    done = list(ScheduledEvent.objects.filter(game=game, done_at__isnull=False).values_list("pk", flat=True))
    assert audit_runs(game) == Counter({pk: 1 for pk in done})
    assert GameEvent.objects.filter(game=game, kind="clock.day_started").count() == 3
    assert GameEvent.objects.filter(game=game, kind="night.resolved").count() == 2
    assert PublicPost.objects.filter(game=game, kind=PostKind.DAILY).count() == 2
    for day in (2, 3):
        post = GameDay.objects.get(game=game, number=day).post
        assert GameEvent.objects.filter(game=game, kind="scheduler.post_published", payload__post=post.pk).count() == 1
    victim = victim_of(game, 2)  # the next one now; the killed one is dead
    dead = GameEvent.objects.filter(game=game, kind="resident.died").values_list("payload__resident", flat=True)
    assert len(dead) == 1 and dead[0] != (victim.pk if victim else None)
    game.refresh_from_db()
    assert game.day_number == 3


def test_beat_down_for_6_hours_then_restarted_applies_every_event_once_in_order_DESIGN_clock(built):
    game = built.game
    advance(game, utc(2027, 3, 3, 3))  # the beat's last tick before going down, night 2
    assert dispatch_due_events(now=utc(2027, 3, 3, 3) + timedelta(seconds=30)) == 0
    restart = utc(2027, 3, 3, 9)  # six hours later: night end, draft and day start were all missed
    assert dispatch_due_events(now=restart) == 3
    assert dispatch_due_events(now=restart) == 0  # a duplicate tick does nothing
    assert dispatch_due_events(now=restart + timedelta(seconds=30)) == 0
    # The draft is minutes old: the Procurator gets the game's edit window before the site publishes it (L-POST-2).
    post = GameDay.objects.get(game=game, number=3).post
    assert post.published_at is None and post.created_at == restart
    assert dispatch_due_events(now=restart + timedelta(minutes=29)) == 0
    assert dispatch_due_events(now=restart + timedelta(minutes=30)) == 1
    assert_exactly_once_to_day_3(game, held_publication=True)
    post.refresh_from_db()
    assert post.published_at == restart + timedelta(minutes=30)
    # Late, but the draft still ran after the resolution: it names the night's victim.
    killed = GameEvent.objects.get(game=game, kind="resident.died").payload["resident"]
    assert str(GameDay.objects.get(game=game, number=3).announced) == str([killed])


def test_two_dispatchers_at_once_run_each_event_once_DESIGN_clock(built, monkeypatch):
    """A second dispatcher runs while the first one's handler is still running: the first one's recorded attempt
    (committed before its handler ran, its retry time pushed) hides the row, and per-game order hides the later
    events of the game, so the second finds nothing to run (on PostgreSQL SKIP LOCKED hides the row as well)."""
    game = built.game
    advance(game, DAY2)
    raced = []
    real = scheduler.HANDLERS["night_start"]

    def racing_night_start(event, now):
        if not raced:
            raced.append(event.pk)
            second = try_run_one_due_event(now=now)  # "dispatcher B" while A's handler is still running
            raced.append(second)
        return real(event, now)

    monkeypatch.setitem(scheduler.HANDLERS, "night_start", racing_night_start)
    advance(game, DAY3)
    assert raced[1] is None
    assert_exactly_once_to_day_3(game)
    assert GameDay.objects.get(game=game, number=2).ended_at == utc(2027, 3, 2, 21)


def test_dispatcher_dying_in_the_middle_of_a_night_resolution_leaves_nothing_half_applied_DESIGN_clock(built):
    game = built.game
    advance(game, utc(2027, 3, 3, 5))
    victim = victim_of(game, 2)
    calls = []

    def dies_after_the_kill(event, now):
        fake_night_end(event, now)  # the kill and the night.resolved row are written...
        calls.append(now)
        raise SystemError("worker killed in the middle of the night resolution")  # ...then the process dies

    scheduler.HANDLERS["night_end"] = dies_after_the_kill
    assert dispatch_due_events(now=NIGHT2_END) == 0
    victim.refresh_from_db()
    assert victim.status == LifeStatus.ALIVE and not seats.is_spirit(victim)
    assert not GameEvent.objects.filter(game=game, kind="resident.died").exists()
    assert not GameEvent.objects.filter(game=game, kind="night.resolved", payload__night=2).exists()
    night_end = ScheduledEvent.objects.get(game=game, kind="night_end", payload__night=2)
    assert night_end.done_at is None and night_end.attempts == 1
    assert night_end.last_error == "SystemError: worker killed in the middle of the night resolution"
    # The draft and the day start wait for the night, even past their own due time (per-game order); the night
    # is retried and dies again.
    assert dispatch_due_events(now=DAY3) == 0
    night_end.refresh_from_db()
    assert night_end.attempts == 2 and night_end.retry_at == DAY3 + timedelta(seconds=60)
    assert not GameEvent.objects.filter(game=game, kind="resident.died").exists()
    assert GameDay.objects.get(game=game, number=3).post is None
    game.refresh_from_db()
    assert game.day_number == 2

    # The Procurator sees the failing event, by its error class only (the night's errors may name secrets).
    client = Client()
    client.force_login(built.procurator)
    page = client.get(f"/staff/games/{game.slug}/clock/").content.decode()
    assert "failing-events" in page and "SystemError" in page and "worker killed" not in page

    # The worker is back: the retry applies the whole night once, then the draft and the day start.
    scheduler.HANDLERS["night_end"] = fake_night_end
    assert dispatch_due_events(now=night_end.retry_at) == 3
    post = GameDay.objects.get(game=game, number=3).post
    assert post.published_at is None  # drafted a moment ago: held for the Procurator's edit window (L-POST-2)
    assert dispatch_due_events(now=night_end.retry_at + timedelta(minutes=30)) == 1
    assert_exactly_once_to_day_3(game, held_publication=True)
    assert calls == [NIGHT2_END, DAY3]
    post.refresh_from_db()
    assert post.published_at == night_end.retry_at + timedelta(minutes=30)
    page = client.get(f"/staff/games/{game.slug}/clock/").content.decode()
    assert "failing-events" not in page


def test_failing_day_event_shows_its_error_to_the_procurator_DESIGN_clock(built, monkeypatch):
    game = built.game

    def broken(event, now):
        raise RuntimeError("inbox rollover exploded")

    monkeypatch.setitem(scheduler.HANDLERS, "day_start", broken)
    assert dispatch_due_events(now=utc(2027, 3, 1, 7)) == 0
    client = Client()
    client.force_login(built.procurator)
    page = client.get(f"/staff/games/{game.slug}/clock/").content.decode()
    assert "RuntimeError: inbox rollover exploded" in page
    other = Client()
    other.force_login(built.staff["tribune1"])
    assert other.get(f"/staff/games/{game.slug}/clock/").status_code == 404
