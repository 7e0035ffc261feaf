"""The flip (RULES.md M-VOTE-6, M-NIGHT-4, M-ROLE-1): the words a public announcement uses to reveal an eliminated
player's role, its side and an insane cop's insanity. Pure: no ORM, no clock."""
from __future__ import annotations

from .roles import MAFIA, ROLES


def flip_text(role_key: str, *, sane: bool = True) -> str:
    """The flip of a seat holding ``role_key`` (a key of ``ROLES``; ``sane`` meaningful for cops): e.g.
    "They were the Cop (Town). They were INSANE." Raises ``KeyError`` for an unknown role key."""
    role = ROLES[role_key]
    side = "Mafia" if role.alignment == MAFIA else "Town"
    insane = " They were INSANE." if role.is_cop and not sane else ""
    return f"They were the {role.name} ({side}).{insane}"
