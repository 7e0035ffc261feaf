"""Viewer-scoped reads of the sanctions' player pages: the complaints of no confidence a resident may follow."""
from __future__ import annotations

from cities.models import Game
from inboxes import policies

from .models import NoConfidenceCase, NoConfidenceTarget


def no_confidence_cases_for(viewer, game: Game) -> list[NoConfidenceCase]:
    """The complaints of no confidence ``viewer`` may follow on their page: their own complaints
    about the Arbiter, and the complaints of their city's mafia about the Consigliere when they read that inbox
    (``policies.can_read_inbox``: the mafia of the city, living at its filing). Newest first."""
    seat = policies.seat_in(viewer, game)
    if seat is None:
        return []
    cases = (NoConfidenceCase.objects.filter(game=game, city_id=seat.city_id).select_related("inbox__game", "city")
             .order_by("-filed_at", "-id"))
    return [c for c in cases if (c.complainant_id == seat.pk) or
            (c.target == NoConfidenceTarget.CONSIGLIERE and policies.can_read_inbox(viewer, c.inbox))]
