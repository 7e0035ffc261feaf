"""Lepra's ``access_<noun>_by_id`` (rulesets.lepra.access): a request id becomes a proxy request or a suicide
declaration only through the policy; a missing and a forbidden id give the same 404 (DESIGN.md "The access policy",
L-STAFF-6)."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.http import Http404

from cities.models import Resident
from kernel.public_ids import new_public_id
from rulesets.lepra import access
from rulesets.lepra.models import ProxyRequest, SuicideDeclaration
from tests.conftest import fresh

NOW = datetime(2027, 3, 2, 12, 0, tzinfo=UTC)


def _seat(user, game) -> Resident:
    return Resident.objects.get(game=game, user=user)


@pytest.mark.django_db
def test_a_proxy_request_is_its_residents_and_the_tribunes_only_L_VOTE_4_L_STAFF_6(demo):
    game = demo.game
    honest = _seat(demo.honest, game)
    nominee = _seat(demo.mafioso, game)
    proxy = ProxyRequest.objects.create(game=game, city=honest.city, day=game.day_number, resident=honest,
                                        nominee=nominee, requested_at=NOW)
    assert access.access_proxy_request_by_id(fresh(demo.honest), proxy.public_id) == proxy
    assert access.access_proxy_request_by_id(fresh(demo.tribune1), proxy.public_id, city=honest.city) == proxy
    for persona in ("tribune2", "mafioso", "consigliere", "arbiter", "outsider", "superuser", "anonymous"):
        with pytest.raises(Http404):  # the same 404 as a missing id
            access.access_proxy_request_by_id(fresh(getattr(demo, persona)), proxy.public_id)
    with pytest.raises(Http404):
        access.access_proxy_request_by_id(fresh(demo.tribune1), new_public_id())


@pytest.mark.django_db
def test_a_suicide_declaration_is_its_residents_and_the_tribunes_only_L_NOM_6(demo):
    game = demo.game
    honest = _seat(demo.honest, game)
    declaration = SuicideDeclaration.objects.create(game=game, city=honest.city, day=game.day_number,
                                                    resident=honest, declared_at=NOW)
    assert access.access_suicide_declaration_by_id(fresh(demo.honest), declaration.public_id) == declaration
    assert access.access_suicide_declaration_by_id(fresh(demo.tribune1), declaration.public_id) == declaration
    for persona in ("tribune2", "procurator", "mafioso", "outsider"):
        with pytest.raises(Http404):
            access.access_suicide_declaration_by_id(fresh(getattr(demo, persona)), declaration.public_id)
