"""Who may still come back from the penitentiary (RULES.md M-SETUP-3 [interp], M-ROLE jailbreaker): an imprisoned
player is out for good, and so joins the spectators' thread, only once no bust-out can bring them back. The access
policy asks this through ``M21Ruleset.seats_held_back``; nothing is stored, so a seat joins by itself the moment the
last way back closes (the jailbreaker dies, is imprisoned or spends the power, the game ends). Read-only."""
from __future__ import annotations

from django.db.models import Q

from cities.models import Game, GameStatus, LifeStatus

from .models import M21Seat
from .roles import IMPRISONED, ROLES

#: (role key, state counter) of every action that brings an imprisoned player back into play (the bust-out).
BUST_OUT_ACTIONS: tuple[tuple[str, str | None], ...] = tuple(
    (role.key, action.counter) for role in ROLES.values() for action in role.actions if action.target == IMPRISONED)


def _may_bust_out(role: str, state: dict) -> bool:
    return any(role == key and (counter is None or int(state.get(counter, 0) or 0) > 0)
               for key, counter in BUST_OUT_ACTIONS)


def seats_held_back(game: Game) -> frozenset[int]:
    """Ids of ``game``'s imprisoned seats that may not read the spectators' thread now (M-SETUP-3 [interp]):

    - every imprisoned seat while a living seat can still bust one out (its bust-out not spent);
    - a busted-out seat until its one unused action is taken or its night has passed (it is in play meanwhile).

    None once the game is not running. One query (the imprisoned and the seats with a bust-out)."""
    if game.status != GameStatus.RUNNING:
        return frozenset()
    roles = {key for key, _ in BUST_OUT_ACTIONS}
    rows = list(M21Seat.objects.filter(resident__game=game)
                .filter(Q(resident__status=LifeStatus.IMPRISONED) | Q(role__in=roles))
                .values_list("resident_id", "resident__status", "role", "state"))
    return _held_back(rows)


def _held_back(rows) -> frozenset[int]:
    imprisoned = [(pk, state or {}) for pk, status, _role, state in rows if status == LifeStatus.IMPRISONED]
    if any(status == LifeStatus.ALIVE and _may_bust_out(role, state or {}) for _pk, status, role, state in rows):
        return frozenset(pk for pk, _state in imprisoned)
    return frozenset(pk for pk, state in imprisoned if state.get("busted_out") and not state.get("busted_out_acted"))
