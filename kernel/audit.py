"""The audit log (DESIGN.md "Services"): ``record_event`` writes one ``GameEvent`` row in the caller's transaction.

Every service writes one row per state change; staff browse them in the console. Payloads carry ids and counts,
never a secret (an alignment, a night target, a check's asker).
"""
from __future__ import annotations

from datetime import datetime

from cities.models import Game, GameEvent

from .live import note_game_changed
from .prepared import PreparedInsert, Statement

_INSERT_EVENT = PreparedInsert(GameEvent)  # one audit row per state change: its INSERT built once


def record_event(game: Game, kind: str, *, actor, at: datetime, payload: dict | None = None,
                 changes_access: bool = True) -> GameEvent:
    """Write one audit row (``GameEvent``) for ``game``: ``kind`` a dotted event kind, ``actor`` the user who acted
    (None = the site or the scheduler), ``at`` the operation's aware UTC time, ``payload`` ids and counts. Call
    inside the service's transaction. Returns the row. Unless ``changes_access`` is False (a change that cannot
    alter who reads what: a plain post), the game's live polls take the full path after the commit
    (``kernel.live``)."""
    if changes_access:
        note_game_changed(game.pk)
    return _INSERT_EVENT(GameEvent(game=game, kind=kind, actor=actor, at=at, payload=payload or {}))


def event_statement(game: Game, kind: str, *, actor, at: datetime, payload: dict | None = None,
                    changes_access: bool = True) -> Statement | None:
    """The audit row ``record_event`` writes, as a statement to run with the service's other last writes
    (``kernel.prepared.execute_together``: one round trip). When the row cannot be such a statement (a save signal
    receiver of ``GameEvent``), it is written now, as ``record_event`` does, and None is returned.
    ``changes_access`` as for ``record_event``."""
    if changes_access:
        note_game_changed(game.pk)
    row = GameEvent(game=game, kind=kind, actor=actor, at=at, payload=payload or {})
    statement = _INSERT_EVENT.statement(row)
    if statement is None:
        _INSERT_EVENT(row)
    return statement


def record_events(game: Game, rows: list[tuple[str, dict]], *, actor, at: datetime) -> list[GameEvent]:
    """Write several audit rows at once (one INSERT): ``rows`` of ``(kind, payload)`` for ``game``, in order, as
    ``record_event`` writes each. For batched services (the deaths of a night, the daily rollover). Returns the
    rows. The game's live polls take the full path after the commit."""
    note_game_changed(game.pk)
    return GameEvent.objects.bulk_create([GameEvent(game=game, kind=kind, actor=actor, at=at, payload=payload or {})
                                          for kind, payload in rows])
