"""The access policy's ``access_<noun>_by_id`` functions for the objects a request names besides inboxes (DESIGN.md
"The access policy": the only way a request id becomes an object, in the manner of Zulip's ``access_stream_by_id``).

Each function takes the viewer and the id as the request gave it: the object's opaque public id
(``kernel.public_ids``) for the models that have one (cities, residents, and most of a ruleset's records: a
sequential id would count what the viewer may not see), else its database id, an int or a string of
ASCII digits; a malformed id is treated as a missing one, narrows to the scope the page is about (``game=``, ``city=``), and returns the object or raises
``Http404``, the same one for a malformed, a missing and a forbidden id, so that a page never tells whether an
object it may not show exists. Who may see what follows ``inboxes.policies``:

- cities and residents are public facts of a game (its lists);
- a sign-up: its player and the Procurator (the setup page).

The services still decide what the viewer may *do* with the object; these functions decide only whether the
request may name it at all. ``access_inbox_by_id`` lives with the inbox rules in ``inboxes.policies``; a ruleset's
own records are named by its own ``access_<noun>_by_id`` functions, built on ``one_by_id`` (its
``access`` module).
"""
from __future__ import annotations

from django.db.models import Model, QuerySet
from django.http import Http404

from cities.models import HOST_STAFF_KIND, City, Game, Resident, Signup
from kernel.public_ids import is_database_id, is_public_id

from .policies import holds_city_role, holds_role, seat_in


def _pk(raw) -> int | None:
    """The primary key a request gave (an int or a string of ASCII digits within a bigint), or None when
    malformed ('²' and '٣' are digits to ``str.isdigit``, not ids)."""
    if not is_database_id(raw.strip() if isinstance(raw, str) else raw):
        return None
    pk = int(raw)
    return pk if pk > 0 else None


def one_by_id(queryset: QuerySet, raw_id, *, game: Game | None = None, city: City | None = None) -> Model:
    """The one object of ``queryset`` that ``raw_id`` names (its public id when the model has one, else its database
    id), narrowed to ``game`` / ``city``; ``Http404`` for a malformed, a missing or a filtered-out id alike. The
    lookup every ``access_<noun>_by_id`` shares, a ruleset's included."""
    if game is not None:
        queryset = queryset.filter(game=game)
    if city is not None:
        queryset = queryset.filter(city=city)
    if any(f.name == "public_id" for f in queryset.model._meta.concrete_fields):
        found = queryset.filter(public_id=raw_id).first() if is_public_id(raw_id) else None
    else:
        pk = _pk(raw_id)
        found = queryset.filter(pk=pk).first() if pk is not None else None
    if found is None:
        raise Http404("No such object.")
    return found


def is_own_seat(user, resident: Resident) -> bool:
    """True when ``resident`` is ``user``'s seat in its game."""
    seat = seat_in(user, resident.game_id)
    return seat is not None and seat.pk == resident.pk


def is_city_staff(user, obj) -> bool:
    """True when ``user`` holds a city's staff role (or stands in for one) of ``obj``'s city in its game
    (``obj.game_id``, ``obj.city_id``): a kind of the ruleset's ``city_staff_kinds``."""
    return holds_city_role(user, obj.game_id, obj.city_id)


def access_city_by_number(user, game: Game, number) -> City:
    """The city numbered ``number`` (1-based) of ``game``. Public. Raises ``Http404``."""
    pk = _pk(number)
    city = City.objects.filter(game=game, number=pk).first() if pk is not None else None
    if city is None:
        raise Http404("No such city.")
    return city


def access_city_by_id(user, city_id, *, game: Game) -> City:
    """A city of ``game`` by id. Public. Raises ``Http404``."""
    return one_by_id(City.objects.all(), city_id, game=game)


def access_resident_by_id(user, resident_id, *, game: Game | None = None, city: City | None = None) -> Resident:
    """A resident (seat) of ``game`` / ``city`` by id, with its city and game. Public (the city lists); what may be
    known about them is the policy's (``visible_alignment``, ``knows_seat_role``). Raises ``Http404``."""
    return one_by_id(Resident.objects.select_related("city", "game"), resident_id, game=game, city=city)


def access_signup_by_id(user, signup_id, *, game: Game) -> Signup:
    """A sign-up of ``game``, with its user: its player and the Procurator only. Raises ``Http404``."""
    signup = one_by_id(Signup.objects.select_related("game", "user"), signup_id, game=game)
    if not (holds_role(user, game, HOST_STAFF_KIND) or signup.user_id == getattr(user, "pk", None)):
        raise Http404("No such object.")
    return signup
