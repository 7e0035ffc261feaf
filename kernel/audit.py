"""The audit log (DESIGN.md "Services"): ``record_event`` writes one ``GameEvent`` row in the caller's transaction.

Every service writes one row per state change; staff browse them in the console. Payloads carry ids and counts,
never a secret (an alignment, a night target, a check's asker).
"""
from __future__ import annotations

from datetime import datetime

from cities.models import Game, GameEvent

from .prepared import PreparedInsert, Statement

_INSERT_EVENT = PreparedInsert(GameEvent)  # one audit row per state change: its INSERT built once


def record_event(game: Game, kind: str, *, actor, at: datetime, payload: dict | None = None) -> GameEvent:
    """Write one audit row (``GameEvent``) for ``game``: ``kind`` a dotted event kind, ``actor`` the user who acted
    (None = the site or the scheduler), ``at`` the operation's aware UTC time, ``payload`` ids and counts. Call
    inside the service's transaction. Returns the row. An audit row tells no live poll anything: the rows that
    change who reads what renew the versions of the readers they concern themselves (``kernel.live``)."""
    return _INSERT_EVENT(GameEvent(game=game, kind=kind, actor=actor, at=at, payload=payload or {}))


def event_statement(game: Game, kind: str, *, actor, at: datetime, payload: dict | None = None) -> Statement | None:
    """The audit row ``record_event`` writes, as a statement to run with the service's other last writes
    (``kernel.prepared.execute_together``: one round trip). When the row cannot be such a statement (a save signal
    receiver of ``GameEvent``), it is written now, as ``record_event`` does, and None is returned."""
    row = GameEvent(game=game, kind=kind, actor=actor, at=at, payload=payload or {})
    statement = _INSERT_EVENT.statement(row)
    if statement is None:
        _INSERT_EVENT(row)
    return statement


def record_events(game: Game, rows: list[tuple[str, dict]], *, actor, at: datetime) -> list[GameEvent]:
    """Write several audit rows at once (one INSERT): ``rows`` of ``(kind, payload)`` for ``game``, in order, as
    ``record_event`` writes each. For batched services (the deaths of a night, the daily rollover). Returns the
    rows."""
    return GameEvent.objects.bulk_create([GameEvent(game=game, kind=kind, actor=actor, at=at, payload=payload or {})
                                          for kind, payload in rows])
