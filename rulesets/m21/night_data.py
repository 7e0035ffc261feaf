"""The records of an M21 night (RULES.md M-NIGHT-1..7, M-MAFIA-1, M-ROLE-1): what the pure night reads (``Seat``,
``MafiaVote``, ``M21Action``) and what it returns (``M21Death``, ``M21Result``, ``M21NightOutcome`` and its JSON),
with the death causes and the answers of the night file's output format. Frozen dataclasses, no behaviour."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .roles import (
    ROLES,
)

USE_ITEM = "use_item"

# Death causes (M-NIGHT-2, M-ROLE desperado, M-ITEM-1 grenade).
MAFIA_KILL = "mafia"
STRONGMAN_KILL = "strongman"
DESPERADO_SHOT = "desperado"
DESPERADO_BACKFIRE = "desperado_backfire"
GRENADE_BACKFIRE = "grenade_backfire"

# Answers (the night file's output format).
GUILTY = "guilty"
INNOCENT = "innocent"
VANILLA = "vanilla"
WENT_OUT_ANSWER = "went out"
STAYED_HOME = "stayed home"
SAVED = "saved"
TARGETED_YOU = "targeted you"
IMMUNE = "immune to gunshots tomorrow"
BUSTED_OUT = "busted out"


@dataclass(frozen=True)
class Seat:
    """One player as the night sees it at its start: ``name`` (unique in the game), ``role`` key, ``alive``,
    ``imprisoned`` (out of play, M-VOTE-4), ``busted_out`` (hiding after a jailbreak: out of play, may still take
    one unused action, M-NIGHT-7), ``sane`` (M-ROLE-1, meaningful for cops), ``items`` held (item keys, in the
    order received), ``state`` the per-seat role state (``rulesets.m21.roles.seat_state``)."""

    name: str
    role: str
    alive: bool = True
    imprisoned: bool = False
    busted_out: bool = False
    sane: bool = True
    items: tuple[str, ...] = ()
    state: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def living(self) -> bool:
        """In play: alive and neither imprisoned nor busted out."""
        return self.alive and not self.imprisoned and not self.busted_out

    @property
    def alignment(self) -> str:
        return ROLES[self.role].alignment


@dataclass(frozen=True)
class MafiaVote:
    """A ``kill name`` line of the mafia thread (M-MAFIA-1): ``voter`` and ``target`` names, ``seq`` the order."""

    voter: str
    target: str
    seq: int


@dataclass(frozen=True)
class M21Action:
    """A submitted night action: ``actor`` name, ``action`` key (a role action of ``rulesets.m21.roles`` or
    ``use_item``), ``target`` name or None, ``item`` key (``deliver``, ``safecrack``, ``use_item``), ``seq`` the
    submission order (the last counts, M-NIGHT-1)."""

    actor: str
    action: str
    target: str | None = None
    item: str | None = None
    seq: int = 0



@dataclass(frozen=True)
class M21Death:
    """A death of the night: ``player``, ``cause`` (mafia, strongman, desperado, desperado_backfire, gun, grenade,
    grenade_backfire, or another item key), ``killer`` the name of who carried it out (never in the morning post)."""

    player: str
    cause: str
    killer: str | None = None


@dataclass(frozen=True)
class M21Result:
    """A private result for ``player`` (M-NIGHT-4): ``kind`` of result, ``target`` the name it is about (or None),
    ``answer`` a string or a list."""

    player: str
    kind: str
    target: str | None
    answer: object


@dataclass(frozen=True)
class M21NightOutcome:
    """What the night did. ``deaths`` (together, at step 9), ``saved`` names, ``results``, ``headlines`` (the
    reporter's, public), ``items`` {name: item keys} of every player still in play after the night, ``state``
    {name: role state} of every seat after the night (uses spent), ``confiscated`` the evidence safe after the night,
    ``busted_out`` names, ``winner`` town/mafia/None (M-WIN-1), ``steps`` the trace (one entry per step, the
    submissions first as step 0)."""

    night: int
    seed: int
    deaths: tuple[M21Death, ...]
    saved: tuple[str, ...]
    results: tuple[M21Result, ...]
    headlines: tuple[str, ...]
    items: Mapping[str, tuple[str, ...]]
    state: Mapping[str, Mapping[str, object]]
    confiscated: tuple[str, ...]
    busted_out: tuple[str, ...]
    winner: str | None
    steps: tuple[dict, ...]

    def as_json(self) -> dict:
        """The output of ``manage.py resolve_night m21``: plain JSON types."""
        return {
            "deaths": [{"player": d.player, "cause": d.cause} for d in self.deaths],
            "saved": list(self.saved),
            "results": [{"player": r.player, "kind": r.kind, "target": r.target, "answer": r.answer}
                        for r in self.results],
            "headlines": list(self.headlines),
            "items": {name: list(keys) for name, keys in self.items.items()},
            "state": {name: dict(st) for name, st in self.state.items()},
            "confiscated": list(self.confiscated),
            "busted_out": list(self.busted_out),
            "winner": self.winner,
            "steps": list(self.steps),
        }


