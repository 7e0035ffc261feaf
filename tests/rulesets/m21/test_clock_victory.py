"""A game won inside one of the clock's handlers ends on the clock (RULES.md M-WIN-1, DESIGN.md "The clock"): the
night's resolution or the day's deadline that decides the game cancels the game's pending events, its own
included, and the event still counts as run (found by the simulated M21 game: the handler's own cancellation was
read as "already run by another dispatcher", the whole night was rolled back and retried every 30 s, for ever)."""
from __future__ import annotations

from datetime import timedelta

import pytest

from cities.models import GameEvent, GameStatus, LifeStatus, ScheduledEvent
from inboxes.models import Inbox
from rulesets.m21.kinds import M21InboxKind
from inboxes.posting import do_post_message
from rulesets.m21 import night_services as ns
from rulesets.m21.models import M21Day

from .day_helpers import build_game

pytestmark = pytest.mark.django_db

FOUR = {"citizen": 3, "goon": 1}
NAMES = ("Alice", "Bob", "Carol", "Dave")


def _events(game):
    return {(e.kind, e.done_at is not None, e.cancelled_at is not None)
            for e in ScheduledEvent.objects.filter(game=game)}


def test_a_night_whose_kill_gives_the_mafia_half_ends_the_game_on_the_clock_M_WIN_1():
    table = build_game(NAMES, FOUR, slug="m21-night-win")
    goon = table.name_of_role("goon")
    citizens = table.names_of_roles("citizen")
    for name in [n for n in NAMES if n != citizens[0]][:3]:
        table.post(name, f"##VOTE {citizens[0]}\n##END")
    table.run_clock(table.now + timedelta(minutes=1))
    night = ns.open_night(table.game)
    table.tick()
    mafia_thread = Inbox.objects.get(game=table.game, kind=M21InboxKind.MAFIA_THREAD)
    do_post_message(mafia_thread, f"kill {citizens[1]}", acting_user=table.users[goon], now=table.now)

    table.run_clock(night.planned_end)

    night.refresh_from_db()
    table.game.refresh_from_db()
    assert night.resolved_at == night.planned_end
    assert table.seat(citizens[1]).status == LifeStatus.DEAD
    assert table.game.status == GameStatus.FINISHED
    assert GameEvent.objects.get(game=table.game, kind="m21.game_won").payload == {"winner": "mafia"}
    assert ("m21_night_end", True, False) in _events(table.game)
    assert not ScheduledEvent.objects.filter(game=table.game, done_at__isnull=True, cancelled_at__isnull=True)
    assert not GameEvent.objects.filter(game=table.game, kind__in=["scheduler.event_failed",
                                                                   "scheduler.event_crashed"]).exists()
    assert not M21Day.objects.filter(game=table.game, number=2).exists()


def test_a_deadline_that_imprisons_the_last_mafioso_ends_the_game_on_the_clock_M_WIN_1():
    table = build_game(NAMES, FOUR, slug="m21-deadline-win")
    goon = table.name_of_role("goon")
    for name in table.names_of_roles("citizen")[:2]:
        table.post(name, f"##VOTE {goon}")
    day = table.day(1)

    table.run_clock(day.deadline + timedelta(minutes=1))

    day.refresh_from_db()
    table.game.refresh_from_db()
    assert day.imprisoned.name == goon and day.how == "deadline"
    assert table.game.status == GameStatus.FINISHED
    assert GameEvent.objects.get(game=table.game, kind="m21.game_won").payload == {"winner": "town"}
    assert ("m21_day_deadline", True, False) in _events(table.game)
    assert not ScheduledEvent.objects.filter(game=table.game, done_at__isnull=True, cancelled_at__isnull=True)
    assert not GameEvent.objects.filter(game=table.game, kind="scheduler.event_failed").exists()
