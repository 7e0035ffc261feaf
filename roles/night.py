"""Night resolution as a pure pipeline (DESIGN.md "Night resolution"): no ORM, no clock, no I/O.

``resolve_night(state, actions, steps) -> NightOutcome`` walks a ruleset's ordered steps (in the manner of
allauth's login stages). Each step is a small class with a ``key`` and an ``apply(context)`` that reads the
state and the submitted actions and adds pending deaths, private results and public lines to the context. A
ruleset's steps live in its own package (``RulesetSpec.night_steps``); a service of the ruleset applies the
outcome in one transaction.

Shapes: resident, city and action ids are ints; ``NightAction.seq`` orders submissions (last counts).
What must never leak: ``NightOutcome.private`` holds check answers (the commissar's alone) and the
deaths' ``by_city`` of a home kill names no mafioso; the outcome never names who acted.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

HONEST = "honest"
MAFIA = "mafia"

KILL = "kill"
TOUR = "tour"
CHECK = "check"


@dataclass(frozen=True)
class ResidentState:
    """One resident as the night sees it at its start: ``alignment`` "honest" or "mafia"; ``alive`` living;
    ``ranks``: the keys of the ranks the ruleset's steps read ("judge" for a sitting judge, say)."""

    id: int
    city: int
    alignment: str
    alive: bool = True
    ranks: frozenset[str] = frozenset()


@dataclass(frozen=True)
class NightState:
    """The game at night end before resolution: ``night`` number, residents, cities in city order (ids), and the
    touring city of this night (a city id or None)."""

    night: int
    residents: tuple[ResidentState, ...]
    city_order: tuple[int, ...]
    touring_city: int | None = None

    def resident(self, rid: int | None) -> ResidentState | None:
        return next((r for r in self.residents if r.id == rid), None)


@dataclass(frozen=True)
class NightAction:
    """A submitted night action: ``kind`` kill (the city's mafia kill), tour or check; ``city`` the acting city;
    ``target`` a resident id or None ("no kill"); ``seq`` the submission order (the last of a kind and city counts)."""

    kind: str
    city: int
    target: int | None
    seq: int


@dataclass(frozen=True)
class Death:
    """A death of the night: ``cause`` "killed"; ``touring`` True for a touring kill, ``by_city`` the acting
    city's id; ``spirit`` True when the spirit rule keeps the victim for the day."""

    resident: int
    city: int
    cause: str = "killed"
    touring: bool = False
    by_city: int | None = None
    spirit: bool = False


@dataclass(frozen=True)
class PrivateResult:
    """A result for one recipient (a city's commissar): ``key`` "check", ``target``, ``is_mafia``."""

    city: int
    key: str
    target: int
    is_mafia: bool


@dataclass(frozen=True)
class PublicLine:
    """A public fact of the night for the daily post: ``key`` and plain ``params``."""

    key: str
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class NightOutcome:
    """What the night did: deaths (in resolution order), private results, public lines, the touring city, and
    the number of commissar checks made (a count only)."""

    night: int
    deaths: tuple[Death, ...] = ()
    private: tuple[PrivateResult, ...] = ()
    public: tuple[PublicLine, ...] = ()
    touring_city: int | None = None
    checks: int = 0

    def as_dict(self) -> dict:
        """A JSON-ready dict (stored on the NightResolution row)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> NightOutcome:
        """The inverse of ``as_dict``."""
        return cls(
            night=data["night"],
            deaths=tuple(Death(**d) for d in data.get("deaths", ())),
            private=tuple(PrivateResult(**p) for p in data.get("private", ())),
            public=tuple(PublicLine(key=p["key"], params=dict(p.get("params") or {})) for p in data.get("public", ())),
            touring_city=data.get("touring_city"),
            checks=data.get("checks", 0),
        )


@dataclass
class NightContext:
    """The mutable working state passed from step to step."""

    state: NightState
    actions: list[NightAction]
    pending: list[Death] = field(default_factory=list)
    deaths: list[Death] = field(default_factory=list)
    private: list[PrivateResult] = field(default_factory=list)
    public: list[PublicLine] = field(default_factory=list)
    checks: int = 0

    def last_action(self, kind: str, city: int) -> NightAction | None:
        """The last submitted action of ``kind`` by ``city``, or None."""
        found = [a for a in self.actions if a.kind == kind and a.city == city]
        return max(found, key=lambda a: a.seq) if found else None

    def pending_ids(self) -> set[int]:
        return {d.resident for d in self.pending}


class NightStep:
    """One step of a ruleset's night. Subclasses set ``key`` and implement ``apply``."""

    key: str = ""

    def apply(self, ctx: NightContext) -> None:  # pragma: no cover - interface
        raise NotImplementedError


def resolve_night(state: NightState, actions: Iterable[NightAction], steps: Sequence[NightStep]) -> NightOutcome:
    """Resolve one night: run ``steps`` in order over ``state`` and ``actions``. Pure: the same input gives the same
    outcome. Returns a ``NightOutcome``. Raises ``ValueError`` for two steps with the same key.

    A ruleset whose night needs its own working state gives its state a ``new_context(actions)`` method returning a
    context with an ``outcome()`` method (``RulesetSpec.night_state``); the steps then receive that context and the
    call returns what ``outcome()`` returns."""
    keys = [s.key for s in steps]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate night step keys: {keys}")
    new_context = getattr(state, "new_context", None)
    if new_context is not None:
        # A ruleset with its own working state builds its context and outcome itself.
        ctx = new_context(actions)
        for step in steps:
            step.apply(ctx)
        return ctx.outcome()
    ctx = NightContext(state=state, actions=sorted(actions, key=lambda a: a.seq))
    for step in steps:
        step.apply(ctx)
    deaths = ctx.deaths if ctx.deaths else []
    return NightOutcome(night=state.night, deaths=tuple(deaths), private=tuple(ctx.private),
                        public=tuple(ctx.public), touring_city=state.touring_city, checks=ctx.checks)


def check_answer(state: NightState, target: int) -> bool:
    """The true answer to a commissar's question about ``target``: True when mafia."""
    resident = state.resident(target)
    return resident is not None and resident.alignment == MAFIA


def touring_rotation(city_order: Sequence[int], has_living_mafia: dict[int, bool], previous: int | None) -> int | None:
    """The touring city of a night: the city after ``previous`` (the last night's touring
    city, None before the first touring night) in city order, wrapping around, skipping cities without living
    mafia. None when no city has living mafia."""
    order = list(city_order)
    if not order:
        return None
    start = order.index(previous) + 1 if previous in order else 0
    for i in range(len(order)):
        city = order[(start + i) % len(order)]
        if has_living_mafia.get(city):
            return city
    return None
