"""The access policy's ``access_<noun>_by_id`` functions for the objects a request names besides inboxes (DESIGN.md
"The access policy": the only way a request id becomes an object, in the manner of Zulip's ``access_stream_by_id``).

Each function takes the viewer and the id as the request gave it: the object's opaque public id
(``kernel.public_ids``) for the models that have one (cities, residents, sessions, cases, requests, demands, offers: a
sequential id would count what the viewer may not see), else its database id, an int or a string of
ASCII digits; a malformed id is treated as a missing one, narrows to the scope the page is about (``game=``, ``city=``), and returns the object or raises
``Http404``, the same one for a malformed, a missing and a forbidden id, so that a page never tells whether an
object it may not show exists. Who may see what follows ``inboxes.policies``:

- cities, residents, voting sessions and court cases are public facts of a game (its lists, its day page);
- a proxy request and a suicide declaration are written in the resident's personal inbox: their resident and the
  city's Tribune (or stand-in) only;
- a speech request: its resident, the city's Tribune and the Procurator;
- a judge removal demand: public in its game (announced in its city; the service decides who may confirm it);
- a commissar offer: its candidate and the Procurator;
- a sign-up: its player and the Procurator (the setup page).

The services still decide what the viewer may *do* with the object; these functions decide only whether the
request may name it at all. ``access_inbox_by_id`` lives with the inbox rules in ``inboxes.policies``.
"""
from __future__ import annotations

from django.db.models import Model, QuerySet
from django.http import Http404

from cities.models import HOST_STAFF_KIND, City, Game, Resident, Signup
from inboxes.day_policy import can_see_speech_requests
from kernel.public_ids import is_database_id, is_public_id
from roles.models import CommissarOffer
from voting.models import CourtCase, ProxyRequest, RemovalDemand, SpeechRequest, SuicideDeclaration, VotingSession

from .policies import holds_city_role, holds_role, seat_in


def _pk(raw) -> int | None:
    """The primary key a request gave (an int or a string of ASCII digits within a bigint), or None when
    malformed ('²' and '٣' are digits to ``str.isdigit``, not ids)."""
    if not is_database_id(raw.strip() if isinstance(raw, str) else raw):
        return None
    pk = int(raw)
    return pk if pk > 0 else None


def _one(queryset: QuerySet, raw_id, *, game: Game | None = None, city: City | None = None) -> Model:
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


def _own(user, resident: Resident) -> bool:
    seat = seat_in(user, resident.game_id)
    return seat is not None and seat.pk == resident.pk


def _is_city_tribune(user, obj) -> bool:
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
    return _one(City.objects.all(), city_id, game=game)


def access_resident_by_id(user, resident_id, *, game: Game | None = None, city: City | None = None) -> Resident:
    """A resident (seat) of ``game`` / ``city`` by id, with its city and game. Public (the city lists); what may be
    known about them is the policy's (``visible_alignment``, ``knows_seat_role``). Raises ``Http404``."""
    return _one(Resident.objects.select_related("city", "game"), resident_id, game=game, city=city)


def access_voting_session_by_id(user, session_id, *, game: Game | None = None,
                                city: City | None = None) -> VotingSession:
    """An execution voting session by id. Public (the day page). Raises ``Http404``."""
    return _one(VotingSession.objects.select_related("city", "game"), session_id, game=game, city=city)


def access_court_case_by_id(user, case_id, *, game: Game | None = None, city: City | None = None) -> CourtCase:
    """A Supreme Court case by id. Public (announced in the city). Raises ``Http404``."""
    return _one(CourtCase.objects.select_related("city", "game", "session"), case_id, game=game, city=city)


def access_proxy_request_by_id(user, request_id, *, game: Game | None = None,
                               city: City | None = None) -> ProxyRequest:
    """A proxy request: its resident and the city's Tribune only. Raises ``Http404``."""
    proxy = _one(ProxyRequest.objects.select_related("city", "game", "resident"), request_id, game=game, city=city)
    if not (_is_city_tribune(user, proxy) or _own(user, proxy.resident)):
        raise Http404("No such object.")
    return proxy


def access_suicide_declaration_by_id(user, declaration_id, *, game: Game | None = None,
                                     city: City | None = None) -> SuicideDeclaration:
    """A suicide declaration: its resident and the city's Tribune only. Raises ``Http404``."""
    declaration = _one(SuicideDeclaration.objects.select_related("city", "game", "resident"), declaration_id,
                       game=game, city=city)
    if not (_is_city_tribune(user, declaration) or _own(user, declaration.resident)):
        raise Http404("No such object.")
    return declaration


def access_speech_request_by_id(user, request_id, *, game: Game | None = None,
                                city: City | None = None) -> SpeechRequest:
    """A confrontation or last-word request: its resident, the city's Tribune and the Procurator.
    Raises ``Http404``."""
    speech = _one(SpeechRequest.objects.select_related("city", "game", "resident"), request_id, game=game, city=city)
    if not (can_see_speech_requests(user, speech.city) or _own(user, speech.resident)):
        raise Http404("No such object.")
    return speech


def access_removal_demand_by_id(user, demand_id, *, game: Game | None = None,
                                city: City | None = None) -> RemovalDemand:
    """A judge removal demand by id: public in its game (announced in its city); the service decides
    who may confirm it. Raises ``Http404``."""
    return _one(RemovalDemand.objects.select_related("city", "game", "inbox", "judge"), demand_id,
                game=game, city=city)


def access_commissar_offer_by_id(user, offer_id, *, game: Game | None = None) -> CommissarOffer:
    """A commissar offer: its candidate and the Procurator only. Raises ``Http404``."""
    offer = _one(CommissarOffer.objects.select_related("city", "game", "candidate", "inbox"), offer_id, game=game)
    if not (holds_role(user, offer.game_id, HOST_STAFF_KIND) or _own(user, offer.candidate)):
        raise Http404("No such object.")
    return offer


def access_signup_by_id(user, signup_id, *, game: Game) -> Signup:
    """A sign-up of ``game``, with its user: its player and the Procurator only. Raises ``Http404``."""
    signup = _one(Signup.objects.select_related("game", "user"), signup_id, game=game)
    if not (holds_role(user, game, HOST_STAFF_KIND) or signup.user_id == getattr(user, "pk", None)):
        raise Http404("No such object.")
    return signup
