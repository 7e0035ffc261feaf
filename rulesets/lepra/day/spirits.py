"""The spirit rule (RULES.md L-SPIRIT-1) as a pure function: no ORM, no clock."""
from __future__ import annotations


def spirit_rule_applies(living_honest: int, living_mafia: int) -> bool:
    """L-SPIRIT-1: in the morning a city with as many living honest residents as living mafia (and some mafia left)
    turns its honest residents killed that night into spirits for the day. Counts are after the night's deaths."""
    if living_honest < 0 or living_mafia < 0:
        raise ValueError("counts cannot be negative")
    return living_mafia > 0 and living_honest == living_mafia
