"""``access_<noun>_by_id`` (inboxes.access): a request id becomes an object only through the policy; a malformed,
a missing and a forbidden id give the same 404 (DESIGN.md "The access policy", L-STAFF-6, L-INBOX-17)."""
from __future__ import annotations

import pytest
from django.http import Http404

from cities.models import City, Resident
from inboxes import access

MALFORMED = ["", None, "abc", "-1", "0", "1.5", "1 OR 1=1", "9" * 30, True, -3]


def _seat(user, game) -> Resident:
    return Resident.objects.get(game=game, user=user)


@pytest.mark.django_db
def test_cities_and_residents_are_public_facts_of_their_game_L_CITY_1(demo):
    game = demo.game
    city1 = access.access_city_by_number(demo.anonymous, game, 1)
    assert city1.number == 1 and access.access_city_by_number(demo.outsider, game, "1") == city1
    honest = _seat(demo.honest, game)
    assert access.access_resident_by_id(demo.anonymous, honest.public_id, game=game) == honest
    assert access.access_resident_by_id(demo.outsider, honest.public_id, city=city1) == honest
    city2 = City.objects.get(game=game, number=2)
    with pytest.raises(Http404):
        access.access_resident_by_id(demo.procurator, honest.public_id, city=city2)  # not of that city
    with pytest.raises(Http404):
        access.access_city_by_number(demo.procurator, game, 99)


@pytest.mark.django_db
@pytest.mark.parametrize("raw", MALFORMED)
def test_a_malformed_id_is_a_missing_one(demo, raw):
    with pytest.raises(Http404):
        access.access_resident_by_id(demo.procurator, raw, game=demo.game)
    with pytest.raises(Http404):
        access.access_city_by_number(demo.procurator, demo.game, raw)
