"""Helpers for the game clock tests (issue 6): a small Lepra game whose clock starts in 2027, a test-only
``night_end`` handler, and ``advance`` to run the plan up to an instant."""
from __future__ import annotations

from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model

from cities import scheduler
from cities.models import (
    Alignment,
    City,
    Game,
    GameEvent,
    LifeStatus,
    Resident,
    ScheduledEvent,
)
from cities.scheduler import advance_clock
from cities.services import (
    record_event,
)
from inboxes.membership_services import do_kill_resident
from inboxes.models import DeathCause
from rulesets.lepra.inbox_services import do_open_game_inboxes
from rulesets.lepra import seats
from rulesets.lepra.clock.services import do_start_game_clock
from tests.setup_factory import build_game

#: Day 1 starts at 10:00 in Moscow (07:00 UTC) on Monday 1 March 2027.
DAY1 = datetime(2027, 3, 1, 7, 0, tzinfo=UTC)
US = timedelta(microseconds=1)


def silence_other_games(game: Game, now: datetime) -> None:
    """Cancel the pending events of every other game (the session's demo game has one due in 2026), so that
    dispatch counts are this game's alone. Rolled back with the test."""
    ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True).exclude(game=game).update(
        cancelled_at=now)


def clocked_game(slug: str = "clock-game", *, time_zone: str = "Europe/Moscow", first_day: datetime = DAY1,
                 cities: int = 2, size: int = 5):
    """A game with ``cities`` x ``size`` residents, mafia drawn, standing inboxes open, its clock started (day 1
    at ``first_day``). Returns the ``SetupGame`` (``.game``, ``.procurator``, ``.staff``)."""
    built = build_game("numbers", slug=slug, cities=cities, size=size)
    game = built.game
    if time_zone != game.time_zone:
        Game.objects.filter(pk=game.pk).update(time_zone=time_zone)
    game = built.refresh()
    do_open_game_inboxes(game, acting_user=built.procurator)
    now = min(first_day - timedelta(days=1), datetime.now(UTC))
    silence_other_games(game, now)
    do_start_game_clock(game, first_day_starts_at=first_day, acting_user=built.procurator,
                        now=first_day - timedelta(days=1))
    built.refresh()
    return built


def pending(game: Game) -> list[tuple[str, dict, datetime]]:
    """The game's pending events as (kind, payload, due_at), in run order (due_at, id)."""
    return [(e.kind, e.payload, e.due_at) for e in ScheduledEvent.objects.filter(
        game=game, done_at__isnull=True, cancelled_at__isnull=True).order_by("due_at", "id")]


def ran(game: Game) -> list[tuple[str, dict]]:
    """The game's done events as (kind, payload), in the order they ran."""
    return [(e.kind, e.payload) for e in ScheduledEvent.objects.filter(game=game, done_at__isnull=False)
            .order_by("done_at", "id")]


def victim_of(game: Game, night: int) -> Resident | None:
    """The fake night's victim: from night 2, the living honest non-judge resident of city 1 first by name."""
    if night < 2:
        return None
    city = City.objects.get(game=game, number=1)
    return (Resident.objects.filter(seats.rank_q("is_judge", False) & seats.rank_q("is_commissar", False), city=city,
                                    status=LifeStatus.ALIVE, alignment=Alignment.HONEST).order_by("name").first())


def fake_night_end(event: ScheduledEvent, now: datetime) -> str:
    """A stand-in for the ``roles`` night resolution (test-only): from night 2 the mafia of city 1 kill
    ``victim_of``; writes ``night.resolved`` as the real one does. Idempotent per night."""
    night = event.payload["night"]
    game = Game.objects.get(pk=event.game_id)
    if GameEvent.objects.filter(game=game, kind="night.resolved", payload__night=night).exists():
        return f"night {night} already resolved"
    deaths = []
    victim = victim_of(game, night)
    if victim is not None:
        do_kill_resident(victim, DeathCause.KILLED, acting_user=None, now=now)
        deaths.append({"resident": victim.pk, "city": victim.city_id, "cause": "killed", "touring": False,
                       "by_city": victim.city_id})
    record_event(game, "night.resolved", actor=None, at=now, payload={"night": night, "deaths": deaths})
    return f"night {night} resolved: {len(deaths)} deaths"


@contextmanager
def night_handler(func=fake_night_end):
    """Register ``func`` as the ``night_end`` handler for the block, restoring HANDLERS afterwards."""
    saved = dict(scheduler.HANDLERS)
    scheduler.HANDLERS["night_end"] = func
    try:
        yield
    finally:
        scheduler.HANDLERS.clear()
        scheduler.HANDLERS.update(saved)


def advance(game: Game, until: datetime) -> int:
    """Run the plan up to ``until`` (``cities.scheduler.advance_clock``). Returns how many events ran."""
    return advance_clock(until, game=game)


def make_user(username: str):
    return get_user_model().objects.create_user(username, f"{username}@example.com", "x-secret-123",
                                                display_name=username.title())
