"""The viewer's seats and staff roles, as the access policy reads them on every request (``inboxes.policies``
caches them on the user for the request). Prepared once (``kernel.prepared``).

The seats come each joined with every staff role the viewer holds (one row per seat and role, the role's columns
NULL when there is none), so that a player's request reads both in one statement. A viewer without a seat has no
row: their roles are then read alone.
"""
from __future__ import annotations

from django.db.models import F

from cities.models import Resident, StaffRole
from kernel.prepared import PreparedQuery

_ROLE_FIELDS = ("id", "game_id", "kind", "city_id", "user_id")
# Ordered by columns of the row itself: the model's default ordering would join games and cities.
_ROLES_OF_USER = PreparedQuery(lambda user_id: StaffRole.objects.filter(user_id=user_id).only(*_ROLE_FIELDS)
                               .order_by("game_id", "kind", "city_id", "id"), ints=("user_id",))
# One seat per game: no order needed (the model's default would sort by city and name).
_SEATS_AND_ROLES_OF_USER = PreparedQuery(lambda user_id: Resident.objects.filter(user_id=user_id).select_related(
    "city").annotate(**{f"_role_{f}": F(f"user__staff_roles__{f}") for f in _ROLE_FIELDS}).order_by(),
    ints=("user_id",))


def _role_order(role: StaffRole) -> tuple:
    """The order of ``_ROLES_OF_USER`` (PostgreSQL puts a NULL city last)."""
    return role.game_id, role.kind, role.city_id is None, role.city_id or 0, role.pk


def seats_and_roles_of(user_id: int) -> tuple[dict[int, Resident], list[StaffRole]]:
    """The seats (``{game id: Resident}``, each with its city) and the staff roles (``StaffRole`` with only
    ``id, game_id, kind, city_id, user_id`` loaded, ordered by game, kind, city and id) of the user ``user_id``
    in every game: one statement when the user holds a seat, two otherwise."""
    rows = _SEATS_AND_ROLES_OF_USER(user_id=user_id)
    if not rows:
        return {}, _ROLES_OF_USER(user_id=user_id)
    seats: dict[int, Resident] = {}
    roles: dict[int, StaffRole] = {}
    for seat in rows:
        seats.setdefault(seat.game_id, seat)
        if seat._role_id is not None and seat._role_id not in roles:
            roles[seat._role_id] = StaffRole.from_db(seat._state.db, list(_ROLE_FIELDS),
                                                     [getattr(seat, f"_role_{f}") for f in _ROLE_FIELDS])
    return seats, sorted(roles.values(), key=_role_order)
