"""Fixtures of the night tests: small running Lepra games, as rows (``build_night_game_rows``, factory_boy) where
the tests need only the state, through the services (``build_night_game``) where the setup is under test."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest
from django.utils import timezone

from cities.models import Alignment, City, Game, GameStatus, Resident
from cities.services import do_set_game_status
from rulesets.lepra.inbox_services import do_open_game_inboxes
from rulesets.lepra import seats
from rulesets.lepra.setup.draw import mafia_count
from rulesets.lepra.staff_kinds import StaffKind
from tests.factories import (
    CityFactory,
    GameFactory,
    InboxFactory,
    ResidentFactory,
    SignupFactory,
    StaffRoleFactory,
    UserFactory,
    in_language,
    make_lepra_seats,
    standing_inboxes,
)
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
        out.judge[city.number] = seats.do_set_seat_flags(honest[0], is_judge=True, acting_user=None)
        out.commissar[city.number] = seats.do_set_seat_flags(honest[1], is_commissar=True, acting_user=None)
        out.godfather[city.number] = seats.do_set_seat_flags(mafia[0], is_godfather=True, acting_user=None)
        out.mafia[city.number] = mafia
        out.honest[city.number] = honest[2:]
    do_open_game_inboxes(game, acting_user=built.procurator)
    out.game = do_set_game_status(game, GameStatus.RUNNING, day_number=day, acting_user=built.procurator)
    return out


def build_night_game_rows(slug: str = "night", *, cities: int = 3, size: int = 5, day: int = 2,
                          seed: int = 7) -> NightGame:
    """The state ``build_night_game`` reaches, written as rows by the factories (no audit rows, no draw record):
    the same accounts, cities "City <n>" of ``size`` residents with 20 % mafia (L-CITY-2), the same staff, judge
    (first honest by id), commissar (second honest) and godfather (first mafioso) per city with the dates the
    services give them, the sign-ups, the bar, the notary and each city's mafia inbox, the standing inboxes with
    their members; running on ``day``. Seats and mafia are drawn with ``random.Random(seed)``."""
    rng = random.Random(seed)
    now = timezone.now()
    proc = UserFactory(username=f"{slug}-proc", email=f"{slug}-proc@example.com", display_name=f"{slug}_Proc")
    players = [UserFactory(username=f"{slug}-p{i:03d}", email=f"{slug}-p{i}@example.com",
                           display_name=f"{slug}_P{i:03d}") for i in range(cities * size)]
    game = GameFactory(slug=slug, city_count=cities, day_number=day)
    staff = {"procurator": StaffRoleFactory(game=game, kind=StaffKind.PROCURATOR, user=proc)}
    users = {}
    city_rows = [CityFactory(game=game, number=n) for n in range(1, cities + 1)]
    for city in city_rows:
        user = UserFactory(username=f"{slug}-t{city.number}", email=f"{slug}-t{city.number}@example.com",
                           display_name=f"{slug}_Tribune{city.number}")
        staff[f"tribune{city.number}"] = StaffRoleFactory(game=game, kind=StaffKind.TRIBUNE, city=city, user=user)
        users[f"tribune{city.number}"] = user
    for kind in (StaffKind.ARBITER, StaffKind.CONSIGLIERE):
        user = UserFactory(username=f"{slug}-{kind}", email=f"{slug}-{kind}@example.com",
                           display_name=f"{slug}_{kind}")
        staff[kind] = StaffRoleFactory(game=game, kind=kind, user=user)
        users[kind] = user
    for user in players:
        SignupFactory(game=game, user=user)
    seated = list(players)
    rng.shuffle(seated)
    InboxFactory(game=game, kind="notary", title=in_language(game, "Notary: the mafia draw"), created_at=now)
    InboxFactory(game=game, kind="bar", title=in_language(game, "Bar"), organizer=staff["procurator"], created_at=now)
    out = NightGame(game=game, procurator=proc, consigliere=users[StaffKind.CONSIGLIERE], cities=city_rows,
                    staff=users)
    residents = []
    for city in city_rows:
        of_city = [ResidentFactory(city=city, game=game, user=u) for u in seated[(city.number - 1) * size:city.number * size]]
        mafia = set(rng.sample(range(size), mafia_count(size)))
        for i, r in enumerate(of_city):
            r.alignment = Alignment.MAFIA if i in mafia else Alignment.HONEST
        honest = [r for r in of_city if r.alignment == Alignment.HONEST]
        mafiosi = [r for r in of_city if r.alignment == Alignment.MAFIA]
        Resident.objects.bulk_update(of_city, ["alignment"])
        make_lepra_seats([(honest[0], {"is_judge": True}), (honest[1], {"is_commissar": True, "commissar_since": now}),
                          (mafiosi[0], {"is_godfather": True, "godfather_since": now})])
        InboxFactory(game=game, kind="mafia", city=city, organizer=staff[StaffKind.CONSIGLIERE], created_at=now,
                     members=mafiosi, title=in_language(game, "%(city)s: mafia", city=city.name))
        out.judge[city.number], out.commissar[city.number] = honest[0], honest[1]
        out.godfather[city.number], out.mafia[city.number], out.honest[city.number] = mafiosi[0], mafiosi, honest[2:]
        residents += of_city
    standing_inboxes(game, staff, residents, now=now)
    return out


@pytest.fixture
def ng(db) -> NightGame:
    """Three cities of five on day 2 (night 2 is tonight), as rows."""
    return build_night_game_rows()


@pytest.fixture
def ng10(db) -> NightGame:
    """Two cities of ten (two mafiosi each) on day 2, as rows."""
    return build_night_game_rows("night10", cities=2, size=10)


def kill(resident: Resident, cause: str = "executed", now=NOW) -> None:
    """A death by the site (setup of a test), without the victory check."""
    from inboxes.membership_services import do_kill_resident
    do_kill_resident(Resident.objects.get(pk=resident.pk), cause, acting_user=None, now=now)


def set_day(ng: NightGame, day: int) -> Game:
    """Move the running game to ``day`` (the clock's day start, in tests)."""
    ng.game = do_set_game_status(ng.refresh(), GameStatus.RUNNING, day_number=day, acting_user=None)
    return ng.game
