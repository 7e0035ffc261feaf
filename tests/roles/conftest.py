"""Fixtures of the night tests (issue 6): small running Lepra games built through the services."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from cities.models import Alignment, City, Game, GameStatus, Resident, StaffKind
from cities.services import do_set_game_status, do_set_resident_flags
from inboxes.services import do_open_game_inboxes
from tests.setup_factory import build_game

NOW = datetime(2026, 11, 20, 19, 0, tzinfo=UTC)  # 22:00 in Moscow, night 2


@dataclass
class NightGame:
    """A running game: ``cities`` in order; per city number its ``mafia``, ``honest`` (plain honest residents),
    ``godfather``, ``judge`` and ``commissar`` (Residents); staff users by kind."""

    game: Game
    procurator: object
    consigliere: object
    cities: list
    mafia: dict = field(default_factory=dict)
    honest: dict = field(default_factory=dict)
    godfather: dict = field(default_factory=dict)
    judge: dict = field(default_factory=dict)
    commissar: dict = field(default_factory=dict)
    staff: dict = field(default_factory=dict)

    def refresh(self) -> Game:
        self.game = Game.objects.get(pk=self.game.pk)
        return self.game

    def r(self, resident: Resident) -> Resident:
        return Resident.objects.get(pk=resident.pk)


def build_night_game(slug: str = "night", *, cities: int = 3, size: int = 5, day: int = 2, seed: int = 7) -> NightGame:
    """``cities`` x ``size`` residents (1 mafioso per city of 5), a judge (first honest by id), a commissar (second
    honest), a godfather (first mafioso) in each city; inboxes open; running on ``day``."""
    built = build_game("numbers", slug=slug, cities=cities, size=size, seed=seed)
    game = built.game
    out = NightGame(game=game, procurator=built.procurator, consigliere=built.staff[StaffKind.CONSIGLIERE],
                    cities=list(City.objects.filter(game=game).order_by("number")), staff=built.staff)
    for city in out.cities:
        rs = list(Resident.objects.filter(city=city).order_by("pk"))
        mafia = [r for r in rs if r.alignment == Alignment.MAFIA]
        honest = [r for r in rs if r.alignment == Alignment.HONEST]
        out.judge[city.number] = do_set_resident_flags(honest[0], is_judge=True, acting_user=None)
        out.commissar[city.number] = do_set_resident_flags(honest[1], is_commissar=True, acting_user=None)
        out.godfather[city.number] = do_set_resident_flags(mafia[0], is_godfather=True, acting_user=None)
        out.mafia[city.number] = mafia
        out.honest[city.number] = honest[2:]
    do_open_game_inboxes(game, acting_user=built.procurator)
    out.game = do_set_game_status(game, GameStatus.RUNNING, day_number=day, acting_user=built.procurator)
    return out


@pytest.fixture
def ng(db) -> NightGame:
    """Three cities of five on day 2 (night 2 is tonight)."""
    return build_night_game()


@pytest.fixture
def ng10(db) -> NightGame:
    """Two cities of ten (two mafiosi each) on day 2."""
    return build_night_game("night10", cities=2, size=10)


def kill(resident: Resident, cause: str = "executed", now=NOW) -> None:
    """A death by the site (setup of a test), without the victory check."""
    from inboxes.services import do_kill_resident
    do_kill_resident(Resident.objects.get(pk=resident.pk), cause, acting_user=None, now=now)


def set_day(ng: NightGame, day: int) -> Game:
    """Move the running game to ``day`` (the clock's day start, in tests)."""
    ng.game = do_set_game_status(ng.refresh(), GameStatus.RUNNING, day_number=day, acting_user=None)
    return ng.game
