"""Lepra's lines on the archive's timeline (``RulesetSpec.timeline_line``, read by ``archive.selectors``): the words
of each kind ``events.LepraEventKind`` declares with a ``timeline`` (L-ARCH-3). A voting's opening and close, an
execution decided and a case before the court are shown while the game runs, in the city they are announced in; a
judge election's results and a night's outcome only after the game (their payloads are the night issue's and the
precincts': only the fact is shown)."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from .events import LepraEventKind as K

#: A line: (text in the active language, its City or None), or None when the event is not shown.
Line = tuple[str, Any] | None


def _voting(event, payload: dict, residents: Mapping, related: Mapping, finished: bool) -> Line:
    session = related.get("sessions", {}).get(payload.get("session"))
    if session is None:
        return None
    if event.kind == K.VOTING_OPENED:
        return _("Voting opened in %(city)s") % {"city": session.city.name}, session.city
    # The leader is the leading seat's id as a string (the tally's key): a page shows its name, never a database id.
    leader = str(payload.get("leader") or "")
    seat = residents.get(int(leader)) if leader.isdigit() else None
    return (_("Voting closed in %(city)s; leader: %(leader)s") % {
        "city": session.city.name, "leader": seat.name if seat is not None else "—"}, session.city)


def _execution(event, payload: dict, residents: Mapping, related: Mapping, finished: bool) -> Line:
    """A decision to execute (the voting's or the court's): a seat of no city is named only after the game."""
    resident = residents.get(payload.get("resident"))
    if resident is None or (resident.city_id is None and not finished):
        return None
    return _("Decision: %(name)s is to be executed") % {"name": resident.name}, resident.city


def _case(event, payload: dict, residents: Mapping, related: Mapping, finished: bool) -> Line:
    case = related.get("cases", {}).get(payload.get("case"))
    if case is None:
        return None
    return _("The voting of %(city)s goes before the court") % {"city": case.city.name}, case.city


#: The kinds shown while the game runs -> their line (from the event, its payload, the seats by id, the records of
#: ``notifications.timeline_records`` and whether the game is over).
_WHILE_RUNNING: dict[str, Callable[..., Line]] = {
    K.VOTING_OPENED: _voting,
    K.VOTING_CLOSED: _voting,
    K.VOTING_EXECUTION_DECIDED: _execution,
    K.COURT_SENTENCED: _execution,
    K.COURT_CASE_OPENED: _case,
}
#: The kinds shown only after the game -> their words (lazily translated: the active language is the page's).
_AFTER_THE_GAME: dict[str, Any] = {
    K.ELECTION_CLOSED: gettext_lazy("Judge election results"),
    K.NIGHT_RESOLVED: gettext_lazy("Night outcome"),
}


def timeline_line(event, shown: str, *, residents: Mapping, cities: Mapping, finished: bool,
                  related: Mapping) -> Line:
    """The timeline's line of ``event`` (a Lepra kind with a ``timeline``; ``shown`` is that line's kind), as
    ``RulesetSpec.timeline_line``: ``(text, city)`` or None. A kind without words of its own is shown after the
    game as ``shown``."""
    payload = event.payload if isinstance(event.payload, dict) else {}
    wording = _WHILE_RUNNING.get(event.kind)
    if wording is not None:
        return wording(event, payload, residents, related, finished)
    if not finished:
        return None
    city = cities.get(payload.get("city")) if isinstance(payload.get("city"), int) else None
    words = _AFTER_THE_GAME.get(event.kind)
    return (str(words) if words is not None else shown), city
