"""Chaos on the clock with real processes (issue 6 item 6; DESIGN.md "The clock"; RULES.md L-POST-2).

A small Moscow game's clock was started with day 1 three days ago at 10:00 MSK, and nothing has run since (the
beat was down for days). Then: two dispatcher processes start at once; or a dispatcher is killed (SIGKILL) in the
middle of a night resolution and another one runs after it. Every event applies exactly once, in per-game order,
each daily post is published once. The dispatchers are ``tests/integration/clock_dispatcher.py`` (test-only
``night_end`` handler). Runs on SQLite and PostgreSQL like ``test_celery_clock.py``, whose helpers it shares.
"""
from __future__ import annotations

import sys
import time as _time
from collections import Counter
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from cities.models import GameDay, GameEvent, LifeStatus, ScheduledEvent
from tests.cities.clock_helpers import clocked_game, ran
from tests.integration.celery_helpers import _Gate, subprocess_env

# xdist_group: all tests that start processes run on one worker, one at a time (tests/conftest.py).
pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("processes")]

DISPATCHER = [sys.executable, "tests/integration/clock_dispatcher.py"]
PATTERN = ["night_start", "night_end", "daily_post_draft", "day_start"]


def game_days_ago(slug: str, days: int = 3):
    """A clocked game whose day 1 started ``days`` days ago at 10:00 Moscow time; nothing has run yet."""
    zone = ZoneInfo("Europe/Moscow")
    today = timezone.now().astimezone(zone).date()
    first = datetime.combine(today - timedelta(days=days), time(10, 0), tzinfo=zone)
    return clocked_game(slug, first_day=first)


def expected_runs(count: int) -> list[tuple[str, dict]]:
    """The first ``count`` clock events of a game whose day 1 starts the plan, in their run order."""
    out = [("day_start", {"day": 1})]
    day = 1
    while len(out) < count:
        out += [("night_start", {"day": day}), ("night_end", {"night": day}), ("daily_post_draft", {"day": day + 1}),
                ("day_start", {"day": day + 1})]
        day += 1
    return out[:count]


def assert_applied_once_in_order(game, since: datetime, output: str) -> None:
    """Every event due when the dispatchers started ran once, in the plan's order, and nothing else ran. How far
    the current day's night got depends on the hour of the run (its night starts at midnight Moscow time and is
    resolved at 09:00), so the expected runs are the plan's first events up to the last one that ran."""
    game.refresh_from_db()
    started = game.day_number
    assert started >= 3, output
    runs_in_order = ran(game)
    assert runs_in_order == expected_runs(len(runs_in_order)), output
    assert runs_in_order.index(("day_start", {"day": started})) >= len(runs_in_order) - 4, output
    done = list(ScheduledEvent.objects.filter(game=game, done_at__isnull=False).values_list("pk", flat=True))
    runs = Counter(GameEvent.objects.filter(game=game, kind__startswith="scheduler.")
                   .exclude(kind__in=["scheduler.event_failed", "scheduler.event_crashed", "scheduler.event_waits",
                                      "scheduler.post_published"])
                   .values_list("payload__event", flat=True))
    assert runs == Counter({pk: 1 for pk in done}), output
    assert not ScheduledEvent.objects.filter(game=game, done_at__isnull=True, cancelled_at__isnull=True,
                                             due_at__lte=since).exists(), output
    drafted = [payload["day"] for kind, payload in runs_in_order if kind == "daily_post_draft"]
    assert drafted == list(range(2, len(drafted) + 2)) and len(drafted) >= started - 1, output
    for day in drafted:
        plan = GameDay.objects.get(game=game, number=day)
        post = plan.post
        published = GameEvent.objects.filter(game=game, kind="scheduler.post_published", payload__post=post.pk)
        if plan.started_at is None:  # a run between the night's end (09:00) and the day start (10:00): a draft only
            assert post.published_at is None and not published.exists(), output
            assert not ScheduledEvent.objects.filter(game=game, kind="daily_post_publish", payload__day=day).exists()
            assert ScheduledEvent.objects.filter(game=game, kind="day_start", payload__day=day, done_at__isnull=True,
                                                 cancelled_at__isnull=True, due_at=plan.starts_at).count() == 1, output
        elif post.published_at is None:  # drafted in the catch-up: held for the Procurator's edit window (L-POST-2)
            assert not published.exists(), output
            assert ScheduledEvent.objects.filter(game=game, kind="daily_post_publish", payload__day=day,
                                                 done_at__isnull=True, due_at=post.publish_at).count() == 1, output
        else:
            assert published.count() == 1, output
    # One victim per night from night 2 (the test-only night), each killed once.
    nights = sum(1 for kind, _payload in runs_in_order if kind == "night_end")
    deaths = Counter(GameEvent.objects.filter(game=game, kind="resident.died").values_list("payload__resident",
                                                                                          flat=True))
    assert sorted(deaths.values()) == [1] * (nights - 1), output
    assert GameEvent.objects.filter(game=game, kind="night.resolved").count() == nights, output


def test_two_dispatchers_at_once_after_days_of_downtime_apply_every_event_once_in_order_DESIGN_clock(
        processes, only_our_events, tmp_path):
    game = game_days_ago("race-clock").game
    since = timezone.now()
    gate = _Gate(2)
    env = {**subprocess_env(tmp_path), "PGAPPNAME": gate.app_name}
    held = gate.hold()
    try:
        racers = [processes.start(name, DISPATCHER, env) for name in ("dispatcher-a", "dispatcher-b")]
        gate.wait_until_blocked(racers, processes)
    finally:
        held.__exit__(None, None, None)
    for proc in racers:
        proc.wait(timeout=120)
    output = processes.output()
    assert [proc.returncode for proc in racers] == [0, 0], output
    assert_applied_once_in_order(game, since, output)


def test_dispatcher_killed_in_the_middle_of_a_night_resolution_leaves_nothing_half_applied_DESIGN_clock(
        processes, only_our_events, tmp_path):
    game = game_days_ago("killed-clock").game
    env = {**subprocess_env(tmp_path), "MAFIA_EVENT_CRASH_RETRY_SECONDS": "1"}
    doomed = processes.start("doomed", DISPATCHER, {**env, "CLOCK_CHAOS_DIE_AT_NIGHT": "2"})
    processes.wait_for_line("doomed", "MID-NIGHT 2", timeout=120)
    doomed.kill()  # SIGKILL while the night's kill is written but not committed
    doomed.wait(timeout=30)
    processes.started.remove(next(s for s in processes.started if s[0] == "doomed"))
    assert not GameEvent.objects.filter(game=game, kind="resident.died").exists()
    assert not GameEvent.objects.filter(game=game, kind="night.resolved", payload__night=2).exists()
    night = ScheduledEvent.objects.get(game=game, kind="night_end", payload__night=2)
    # The dead worker's attempt left its trace (recorded before the handler ran), nothing else.
    assert night.done_at is None and night.attempts == 1 and night.started_at is not None
    _time.sleep(1.1)  # the crash back-off (1 s here)
    game.refresh_from_db()
    assert game.day_number == 2
    assert all(r.status == LifeStatus.ALIVE for r in game.residents.all())

    since = timezone.now()
    survivor = processes.start("survivor", DISPATCHER, env)
    survivor.wait(timeout=120)
    output = processes.output()
    assert survivor.returncode == 0, output
    assert_applied_once_in_order(game, since, output)
    night.refresh_from_db()
    assert night.attempts == 2 and night.started_at is None and night.done_at is not None
    assert GameEvent.objects.filter(game=game, kind="scheduler.event_crashed", payload__event=night.pk).count() == 1
