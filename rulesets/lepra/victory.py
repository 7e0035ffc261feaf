"""Victory (RULES.md L-WIN-1, [interp]) as a pure function over per-city counts: no ORM, no clock.

Counts are taken after the night's deaths and after the spirit rule (a spirit is dead: it is not counted).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

HONEST_WIN = "honest"
MAFIA_WIN = "mafia"


@dataclass(frozen=True)
class CityCount:
    """Living residents of one city by side."""

    honest: int
    mafia: int


def decide_winner(counts: Mapping[int, CityCount]) -> str | None:
    """L-WIN-1: "honest" when no mafia is alive in any city; "mafia" when the living mafia are at least as many as
    the living honest residents, all cities together; else None (the game goes on). An empty mapping: None.
    Raises ``ValueError`` for a negative count."""
    if not counts:
        return None
    if any(c.honest < 0 or c.mafia < 0 for c in counts.values()):
        raise ValueError("counts cannot be negative")
    mafia = sum(c.mafia for c in counts.values())
    honest = sum(c.honest for c in counts.values())
    if mafia == 0:
        return HONEST_WIN
    if mafia >= honest:
        return MAFIA_WIN
    return None
