"""The viewer's seats and staff roles as the access policy reads them (``inboxes.viewer_reads``): a player's in one
statement, whatever roles they hold elsewhere; the same roles, in the same order, as reading them alone."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inboxes import policies
from inboxes.viewer_reads import _ROLES_OF_USER, seats_and_roles_of
from rulesets.lepra.staff_kinds import StaffKind
from tests.factories import CityFactory, GameFactory, ResidentFactory, StaffRoleFactory, UserFactory

pytestmark = pytest.mark.django_db


def _roles(roles):
    return [(r.pk, r.game_id, r.kind, r.city_id) for r in roles]


def test_a_player_who_hosts_elsewhere_has_seats_and_roles_read_in_one_statement():
    user = UserFactory()
    played = [GameFactory(), GameFactory()]
    seats = [ResidentFactory(city=CityFactory(game=game), user=user) for game in played]
    hosted = [GameFactory(), GameFactory()]
    tribune_city = CityFactory(game=hosted[1])
    roles = [StaffRoleFactory(game=hosted[1], user=user, kind=StaffKind.TRIBUNE, city=tribune_city),
             StaffRoleFactory(game=hosted[0], user=user, kind=StaffKind.PROCURATOR)]
    ResidentFactory(city=CityFactory(game=hosted[0]))  # another user's seat: not theirs
    with CaptureQueriesContext(connection) as ctx:
        found_seats, found_roles = seats_and_roles_of(user.pk)
    assert len(ctx.captured_queries) == 1
    assert {game_id: seat.pk for game_id, seat in found_seats.items()} == {s.game_id: s.pk for s in seats}
    assert {seat.city.name for seat in found_seats.values()} == {s.city.name for s in seats}  # loaded with it
    assert _roles(found_roles) == _roles(_ROLES_OF_USER(user_id=user.pk)) == _roles(
        sorted(roles, key=lambda r: (r.game_id, r.kind)))
    assert {r.pk for r in found_roles} == {r.pk for r in roles}


def test_a_host_without_a_seat_has_roles_read_alone_and_no_seat():
    role = StaffRoleFactory(kind=StaffKind.PROCURATOR)
    with CaptureQueriesContext(connection) as ctx:
        found_seats, found_roles = seats_and_roles_of(role.user_id)
    assert len(ctx.captured_queries) == 2
    assert (found_seats, _roles(found_roles)) == ({}, [(role.pk, role.game_id, "procurator", None)])


def test_the_policy_caches_both_for_the_request_from_the_one_read():
    seat = ResidentFactory()
    user = seat.user
    with CaptureQueriesContext(connection) as ctx:
        assert policies.seat_in(user, seat.game_id).pk == seat.pk
        assert policies.staff_roles_in(user, seat.game_id) == []
        assert policies.seat_in(user, seat.game_id + 1000) is None
    assert len(ctx.captured_queries) == 1
