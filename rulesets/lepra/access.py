"""Lepra's ``access_<noun>_by_id`` functions (DESIGN.md "The access policy"), for the objects of its day, court,
judges and setup that a request names: the engine's shared lookup (``inboxes.access.one_by_id``: a public id,
narrowed to the page's ``game=`` / ``city=``, one ``Http404`` for a malformed, a missing and a forbidden id) with
Lepra's rule of who may name each:

- voting sessions and court cases are public facts of a game (its day page);
- a proxy request and a suicide declaration are written in the resident's personal inbox: their resident and the
  city's Tribune (or stand-in) only;
- a speech request: its resident, the city's Tribune and the Procurator;
- a judge removal demand: public in its game (announced in its city; the service decides who may confirm it);
- a commissar offer: its candidate and the Procurator (L-COMM).
"""
from __future__ import annotations

from django.http import Http404

from cities.models import City, Game
from inboxes.access import is_city_staff, is_own_seat, one_by_id
from inboxes.day_policy import can_see_speech_requests
from inboxes.policies import holds_role
from rulesets.lepra.models import (
    CommissarOffer,
    CourtCase,
    ProxyRequest,
    RemovalDemand,
    SpeechRequest,
    SuicideDeclaration,
    VotingSession,
)
from rulesets.lepra.staff_kinds import StaffKind


def access_voting_session_by_id(user, session_id, *, game: Game | None = None,
                                city: City | None = None) -> VotingSession:
    """An execution voting session by id. Public (the day page). Raises ``Http404``."""
    return one_by_id(VotingSession.objects.select_related("city", "game"), session_id, game=game, city=city)


def access_court_case_by_id(user, case_id, *, game: Game | None = None, city: City | None = None) -> CourtCase:
    """A Supreme Court case by id. Public (announced in the city). Raises ``Http404``."""
    return one_by_id(CourtCase.objects.select_related("city", "game", "session"), case_id, game=game, city=city)


def access_proxy_request_by_id(user, request_id, *, game: Game | None = None,
                               city: City | None = None) -> ProxyRequest:
    """A proxy request: its resident and the city's Tribune only. Raises ``Http404``."""
    proxy = one_by_id(ProxyRequest.objects.select_related("city", "game", "resident"), request_id, game=game, city=city)
    if not (is_city_staff(user, proxy) or is_own_seat(user, proxy.resident)):
        raise Http404("No such object.")
    return proxy


def access_suicide_declaration_by_id(user, declaration_id, *, game: Game | None = None,
                                     city: City | None = None) -> SuicideDeclaration:
    """A suicide declaration: its resident and the city's Tribune only. Raises ``Http404``."""
    declaration = one_by_id(SuicideDeclaration.objects.select_related("city", "game", "resident"), declaration_id,
                       game=game, city=city)
    if not (is_city_staff(user, declaration) or is_own_seat(user, declaration.resident)):
        raise Http404("No such object.")
    return declaration


def access_speech_request_by_id(user, request_id, *, game: Game | None = None,
                                city: City | None = None) -> SpeechRequest:
    """A confrontation or last-word request: its resident, the city's Tribune and the Procurator.
    Raises ``Http404``."""
    speech = one_by_id(SpeechRequest.objects.select_related("city", "game", "resident"), request_id, game=game, city=city)
    if not (can_see_speech_requests(user, speech.city) or is_own_seat(user, speech.resident)):
        raise Http404("No such object.")
    return speech


def access_removal_demand_by_id(user, demand_id, *, game: Game | None = None,
                                city: City | None = None) -> RemovalDemand:
    """A judge removal demand by id: public in its game (announced in its city); the service decides
    who may confirm it. Raises ``Http404``."""
    return one_by_id(RemovalDemand.objects.select_related("city", "game", "inbox", "judge"), demand_id,
                game=game, city=city)


def access_commissar_offer_by_id(user, offer_id, *, game: Game | None = None) -> CommissarOffer:
    """A commissar offer: its candidate and the Procurator only. Raises ``Http404``."""
    offer = one_by_id(CommissarOffer.objects.select_related("city", "game", "candidate", "inbox"), offer_id, game=game)
    if not (holds_role(user, offer.game_id, StaffKind.PROCURATOR) or is_own_seat(user, offer.candidate)):
        raise Http404("No such object.")
    return offer
