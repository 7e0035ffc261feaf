"""``access_<noun>_by_id`` (inboxes.access): a request id becomes an object only through the policy; a malformed,
a missing and a forbidden id give the same 404 (DESIGN.md "The access policy", L-STAFF-6, L-INBOX-17)."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.http import Http404

from cities.models import City, Resident
from inboxes import access
from tests.conftest import fresh
from voting.models import ProxyRequest, SuicideDeclaration

NOW = datetime(2027, 3, 2, 12, 0, tzinfo=UTC)
MALFORMED = ["", None, "abc", "-1", "0", "1.5", "1 OR 1=1", "9" * 30, True, -3]


def _seat(user, game) -> Resident:
    return Resident.objects.get(game=game, user=user)


@pytest.mark.django_db
def test_cities_and_residents_are_public_facts_of_their_game_L_CITY_1(demo):
    game = demo.game
    city1 = access.access_city_by_number(demo.anonymous, game, 1)
    assert city1.number == 1 and access.access_city_by_number(demo.outsider, game, "1") == city1
    honest = _seat(demo.honest, game)
    assert access.access_resident_by_id(demo.anonymous, honest.pk, game=game) == honest
    assert access.access_resident_by_id(demo.outsider, str(honest.pk), city=city1) == honest
    city2 = City.objects.get(game=game, number=2)
    with pytest.raises(Http404):
        access.access_resident_by_id(demo.procurator, honest.pk, city=city2)  # not of that city
    with pytest.raises(Http404):
        access.access_city_by_number(demo.procurator, game, 99)


@pytest.mark.django_db
@pytest.mark.parametrize("raw", MALFORMED)
def test_a_malformed_id_is_a_missing_one(demo, raw):
    with pytest.raises(Http404):
        access.access_resident_by_id(demo.procurator, raw, game=demo.game)
    with pytest.raises(Http404):
        access.access_city_by_number(demo.procurator, demo.game, raw)


@pytest.mark.django_db
def test_a_proxy_request_is_its_residents_and_the_tribunes_only_L_VOTE_4_L_STAFF_6(demo):
    game = demo.game
    honest = _seat(demo.honest, game)
    nominee = _seat(demo.mafioso, game)
    proxy = ProxyRequest.objects.create(game=game, city=honest.city, day=game.day_number, resident=honest,
                                        nominee=nominee, requested_at=NOW)
    assert access.access_proxy_request_by_id(fresh(demo.honest), proxy.pk) == proxy
    assert access.access_proxy_request_by_id(fresh(demo.tribune1), proxy.pk, city=honest.city) == proxy
    for persona in ("tribune2", "mafioso", "consigliere", "arbiter", "outsider", "superuser", "anonymous"):
        with pytest.raises(Http404):  # the same 404 as a missing id
            access.access_proxy_request_by_id(fresh(getattr(demo, persona)), proxy.pk)
    with pytest.raises(Http404):
        access.access_proxy_request_by_id(fresh(demo.tribune1), proxy.pk + 1000)


@pytest.mark.django_db
def test_a_suicide_declaration_is_its_residents_and_the_tribunes_only_L_NOM_6(demo):
    game = demo.game
    honest = _seat(demo.honest, game)
    declaration = SuicideDeclaration.objects.create(game=game, city=honest.city, day=game.day_number,
                                                    resident=honest, declared_at=NOW)
    assert access.access_suicide_declaration_by_id(fresh(demo.honest), declaration.pk) == declaration
    assert access.access_suicide_declaration_by_id(fresh(demo.tribune1), str(declaration.pk)) == declaration
    for persona in ("tribune2", "procurator", "mafioso", "outsider"):
        with pytest.raises(Http404):
            access.access_suicide_declaration_by_id(fresh(getattr(demo, persona)), declaration.pk)
