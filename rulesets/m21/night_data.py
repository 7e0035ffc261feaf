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
NOT_VANILLA = "not vanilla"
WENT_OUT_ANSWER = "went out"
STAYED_HOME = "stayed home"
SAVED = "saved"
TARGETED_YOU = "targeted you"
IMMUNE = "immune to gunshots tomorrow"
BUSTED_OUT = "busted out"


@dataclass(frozen=True)
class Seat:
    """One player as the night sees it at its start: ``name`` the display name (the headlines' and the pages'),
    ``role`` key, ``alive``,
    ``imprisoned`` (out of play, M-VOTE-4), ``busted_out`` (hiding after a jailbreak: out of play, may still take
    one unused action, M-NIGHT-7), ``sane`` (M-ROLE-1, meaningful for cops), ``items`` held (item keys, in the
    order received), ``state`` the per-seat role state (``rulesets.m21.roles.seat_state``), ``key`` the seat's
    identity in the night (unique; the hosted night uses the seat's id, a night file the player's name, which is the
    default). Actions, votes, results, deaths and the trace name players by ``key``."""

    name: str
    role: str
    alive: bool = True
    imprisoned: bool = False
    busted_out: bool = False
    sane: bool = True
    items: tuple[str, ...] = ()
    state: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.name)

    @property
    def living(self) -> bool:
        """In play: alive and neither imprisoned nor busted out."""
        return self.alive and not self.imprisoned and not self.busted_out

    @property
    def alignment(self) -> str:
        return ROLES[self.role].alignment


@dataclass(frozen=True)
class MafiaVote:
    """A ``kill name`` line of the mafia thread (M-MAFIA-1): ``voter`` and ``target`` seat keys, ``seq`` the
    order."""

    voter: str
    target: str
    seq: int


@dataclass(frozen=True)
class M21Action:
    """A submitted night action: ``actor`` seat key, ``action`` key (a role action of ``rulesets.m21.roles`` or
    ``use_item``), ``target`` seat key or None, ``item`` key (``deliver``, ``safecrack``, ``use_item``), ``seq`` the
    submission order (the last counts, M-NIGHT-1)."""

    actor: str
    action: str
    target: str | None = None
    item: str | None = None
    seq: int = 0



@dataclass(frozen=True)
class M21Death:
    """A death of the night: ``player``, ``cause`` (mafia, strongman, desperado, desperado_backfire, gun, grenade,
    grenade_backfire, or another item key), ``killer`` the seat key of who carried it out (never in the morning post);
    ``player`` a seat key."""

    player: str
    cause: str
    killer: str | None = None


@dataclass(frozen=True)
class M21Result:
    """A private result for ``player`` (M-NIGHT-4): ``kind`` of result, ``target`` the seat it is about (or None),
    ``answer`` a string or a list (a watch's answer lists seat keys)."""

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

    def as_json(self, names: Mapping[str, str] | None = None) -> dict:
        """The output of ``manage.py resolve_night m21``: plain JSON types. ``names`` maps seat keys to the names
        the JSON uses instead (every player named in it, the trace's included); None keeps the keys."""
        out = {
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
        return _renamed(out, names) if names else out


def _renamed(value: object, names: Mapping[str, str]) -> object:
    """``value`` (plain JSON) with every seat key of ``names`` replaced by its name: strings equal to a key, dict
    keys, and the player after the colon of a risk draw's purpose (``grenade_risk:<key>``)."""
    if isinstance(value, str):
        if value in names:
            return names[value]
        head, sep, tail = value.rpartition(":")
        if sep and tail in names and head.endswith("_risk"):
            return f"{head}:{names[tail]}"
        return value
    if isinstance(value, dict):
        return {_renamed(k, names): _renamed(v, names) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_renamed(v, names) for v in value]
    return value


