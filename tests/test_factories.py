"""The factories' games are the services' games (tests/factories.py): a night game written as rows has the rows the
services make for it, so the tests that use the rows read the state the rules produce (L-CITY-2, L-INBOX table)."""
from __future__ import annotations

import pytest

from cities.models import City, Game, Resident, Signup, StaffRole
from inboxes.models import Inbox
from rulesets.lepra import seats
from tests.rulesets.lepra.night.conftest import build_night_game, build_night_game_rows

pytestmark = pytest.mark.django_db


def _seat(resident: Resident | None) -> tuple | None:
    """A resident without his name or ids: city, alignment, life state, roles and whether they are dated."""
    if resident is None:
        return None
    return (resident.city.number, resident.alignment, resident.status, seats.is_judge(resident), seats.is_commissar(resident),
            seats.is_godfather(resident), seats.commissar_since(resident) is not None,
            seats.godfather_dates(resident)[0] is not None)


def state_of(game: Game) -> dict:
    """What a test of a running game can read, with names and ids left out (seats are drawn at random)."""
    slug = game.slug

    def plain(text: str) -> str:
        return text.replace(slug, "<slug>")

    inboxes = []
    for inbox in Inbox.objects.filter(game=game).select_related("city", "organizer__city", "resident__city"):
        members = sorted((m.state, _seat(m.resident)) for m in inbox.memberships.select_related("resident__city"))
        organizer = inbox.organizer
        inboxes.append((inbox.kind, inbox.city.number if inbox.city else None,
                        plain(inbox.title.replace(inbox.resident.name, "<resident>") if inbox.resident else inbox.title),
                        (organizer.kind, organizer.city.number if organizer.city else None) if organizer else None,
                        _seat(inbox.resident), tuple(members), inbox.day_number, inbox.killed_at, inbox.rolled_over_at))
    return {
        "game": (game.title.replace(slug, "<slug>"), game.ruleset, game.status, game.day_number, game.city_count,
                 game.rules_text, game.time_zone, game.language, game.signups_closed_at is not None,
                 game.lists_published_at is not None, game.ended_at),
        "cities": list(City.objects.filter(game=game).order_by("number").values_list("number", "name")),
        "seats": sorted(_seat(r) for r in Resident.objects.filter(game=game).select_related("city")),
        "names": sorted(plain(n) for n in Resident.objects.filter(game=game).values_list("name", flat=True)),
        "staff": sorted((r.kind, r.city.number if r.city else None, plain(r.user.display_name), plain(r.user.username))
                        for r in StaffRole.objects.filter(game=game).select_related("city", "user")),
        "signups": sorted(plain(s.user.username) for s in Signup.objects.filter(game=game, withdrawn_at__isnull=True)
                          .select_related("user")),
        "inboxes": sorted(inboxes, key=repr),
    }


@pytest.mark.parametrize(("cities", "size"), [(3, 5), (2, 10)])
def test_a_night_game_as_rows_has_the_rows_the_services_make_L_CITY_2(cities, size):
    by_services = build_night_game("services", cities=cities, size=size)
    as_rows = build_night_game_rows("rows", cities=cities, size=size)
    expected, got = state_of(by_services.game), state_of(as_rows.game)
    assert got == expected
    assert len(got["inboxes"]) == cities * (size + 2) + 6  # city, personal, mafia; notary, bar, 4 standing
    for built in (by_services, as_rows):
        assert [len(built.mafia[n]) for n in range(1, cities + 1)] == [size // 5] * cities
        assert {seats.is_judge(built.judge[1]), seats.is_commissar(built.commissar[1]), seats.is_godfather(built.godfather[1])} == {True}
        assert all(r.alignment == "honest" for n in built.honest for r in built.honest[n])
