"""The working state of one M21 night (RULES.md M-NIGHT-1..7): ``M21NightState`` (the game at the planned end of the
night) builds an ``M21Context``, which counts the submissions (the last of an actor's counts, M-NIGHT-1), says who
may act on whom, keeps the trace and the seeded draws, and returns the ``M21NightOutcome``; ``M21Step`` is the base
of the nine steps; ``winner`` is M-WIN-1 over the players in play. The readings of the seed are listed in
``rulesets.m21.night``."""
from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from roles.night import NightStep

from . import items as item_data
from .items import Item
from .night_data import (
    USE_ITEM,
    M21Action,
    M21Death,
    M21NightOutcome,
    M21Result,
    MafiaVote,
    Seat,
)
from .roles import (
    ANY_LIVING,
    CONFISCATED_ITEM,
    IMPRISONED,
    MAFIA,
    NO_TARGET,
    OTHER_LIVING,
    TOWN,
    ActionSpec,
    role,
    seat_state,
)


@dataclass(frozen=True)
class M21NightState:
    """The game at the planned end of night ``night``: ``seats``, the mafia's ``votes``, the night's ``seed``
    (recorded with the night), ``gadget_config`` (M-ITEM-1, see ``items.gadget_effects``), ``confiscated`` the items
    in the evidence safe, ``stash_assignment`` (item key, mafioso's seat key) or None (M-MAFIA-2). Players are
    named by their seat keys (``Seat.key``)."""

    night: int
    seed: int
    seats: tuple[Seat, ...]
    votes: tuple[MafiaVote, ...] = ()
    gadget_config: Mapping[str, Mapping[str, object]] | None = None
    confiscated: tuple[str, ...] = ()
    stash_assignment: tuple[str, str] | None = None

    def seat(self, key: str | None) -> Seat | None:
        """The seat whose key is ``key``, or None."""
        return next((s for s in self.seats if s.key == key), None)

    def new_context(self, actions: Iterable[M21Action]) -> M21Context:
        """The working context of ``roles.night.resolve_night``."""
        return M21Context(self, list(actions))



@dataclass
class _Kill:
    target: str
    cause: str
    by: str
    unstoppable: bool = False
    cancelled: bool = False


@dataclass
class _Chosen:
    """A counted submission with what the night needs to resolve it."""

    action: M21Action
    step: int
    spec: ActionSpec | None = None
    item: Item | None = None


class M21Context:
    """The mutable working state passed from step to step (see the module docstring for the readings)."""

    def __init__(self, state: M21NightState, actions: list[M21Action]) -> None:
        self.state = state
        self.seats = {s.key: s for s in state.seats}
        self.catalogue = item_data.item_catalogue(state.gadget_config)
        self.rng = random.Random(state.seed)
        self.items = {s.key: list(s.items) for s in state.seats}
        self.role_state = {s.key: seat_state(s.role, s.state) for s in state.seats}
        self.confiscated = list(state.confiscated)
        self.blocked: dict[str, int] = {}
        self.away: set[str] = set()
        self.hidden: set[str] = set()
        self.visits: list[tuple[str, str, int]] = []
        self.watches: list[tuple[str, str, str]] = []  # (watcher, target, result kind)
        self.early_uses: list[tuple[str, Item]] = []  # items used at step 1, before a roleblock could void them
        self.kills: list[_Kill] = []
        self.protected: set[str] = set()
        self.armoured: set[str] = set()
        self.investigations: list[tuple[str, str, object]] = []
        self.radios: list[str] = []
        self.deaths: list[M21Death] = []
        self.saved: list[str] = []
        self.results: list[M21Result] = []
        self.headlines: list[str] = []
        self.busted_out: list[str] = []
        self.targeted_town: list[tuple[str, str]] = []  # (desperado, town target)
        self.trace: list[dict] = []
        self._events: list[dict] = []
        self.begin(0, "submissions")
        self.chosen = self._choose(sorted(actions, key=lambda a: a.seq))

    # --- trace -------------------------------------------------------------------------------------------------
    def begin(self, number: int, key: str) -> None:
        """Open the trace entry of step ``number``."""
        self._events = []
        self.trace.append({"step": number, "key": key, "events": self._events})

    def event(self, name: str, /, **data) -> None:
        """Record one event ``name`` of the current step with its ``data``."""
        self._events.append({"event": name, **data})

    def draw(self, purpose: str, population: Sequence | None = None) -> object:
        """A seeded draw, recorded: ``random()`` in [0, 1) without ``population``, else one of it."""
        value = self.rng.random() if population is None else self.rng.choice(list(population))
        self.event("draw", purpose=purpose, value=value)
        return value

    # --- who may act on whom -----------------------------------------------------------------------------------
    def living(self, name: str | None) -> bool:
        seat = self.seats.get(name) if name is not None else None
        return seat is not None and seat.living

    def can_act(self, chosen: _Chosen) -> bool:
        """True when the actor can carry out ``chosen`` now (not away, not roleblocked, M-NIGHT-2); records why not.
        The strongman's kill cannot be roleblocked (M-ROLE strongman)."""
        actor = chosen.action.actor
        if actor in self.away:
            self.event("fails", actor=actor, action=_name(chosen), reason="away")
            return False
        if actor in self.blocked and not (chosen.spec is not None and chosen.spec.key == "strongman_kill"):
            self.event("fails", actor=actor, action=_name(chosen), reason="roleblocked")
            return False
        return True

    def reach(self, actor: str, target: str, step: int, action: str, *, visit: bool = True) -> bool:
        """Go to ``target`` (a visit when ``visit``, M-NIGHT-3) and say whether the action can work on them: it fails
        on a player away (balloon) or hiding (from step 3)."""
        if visit and target != actor:
            self.visits.append((actor, target, step))
            self.event("visit", actor=actor, target=target)
        if target in self.away:
            self.event("fails", actor=actor, action=action, target=target, reason="target away")
            return False
        if target in self.hidden:
            self.event("fails", actor=actor, action=action, target=target, reason="target hiding")
            return False
        return True

    def spend(self, actor: str, counter: str) -> None:
        self.role_state[actor][counter] = int(self.role_state[actor][counter]) - 1
        self.event("spent", actor=actor, counter=counter, left=self.role_state[actor][counter])

    def holds(self, actor: str, key: str) -> bool:
        return key in self.items[actor]

    def take_item(self, holder: str, key: str, reason: str) -> None:
        self.items[holder].remove(key)
        self.event("item", holder=holder, item=key, change="lost", reason=reason)

    def give_item(self, holder: str, key: str, reason: str) -> None:
        self.items[holder].append(key)
        self.event("item", holder=holder, item=key, change="gained", reason=reason)

    def use_item(self, chosen: _Chosen) -> bool:
        """True when the actor still holds the item of ``chosen`` (a thief may have taken it); records why not."""
        if self.holds(chosen.action.actor, chosen.action.item):
            return True
        self.event("fails", actor=chosen.action.actor, action=_name(chosen), reason="no longer holds the item")
        return False

    def spend_item(self, actor: str, item: Item) -> None:
        if item.uses is not None:
            self.take_item(actor, item.key, "used")

    def result(self, player: str, kind: str, target: str | None, answer: object) -> None:
        self.results.append(M21Result(player, kind, target, answer))
        self.event("result", player=player, kind=kind, target=target, answer=answer)

    def at_step(self, step: int) -> list[_Chosen]:
        """The counted submissions resolved at ``step``, in submission order."""
        return [c for c in self.chosen if c.step == step]

    # --- the submissions ---------------------------------------------------------------------------------------
    def _choose(self, actions: list[M21Action]) -> list[_Chosen]:
        """M-NIGHT-1: the last of an actor's role actions counts, and the last use of each item; invalid
        submissions are set aside with the reason (they change nothing)."""
        last: dict[tuple[str, str], M21Action] = {}
        for action in actions:
            group = f"item:{action.item}" if action.action == USE_ITEM else "role"
            last[(action.actor, group)] = action
        counted = {id(a) for a in last.values()}
        chosen = []
        for action in actions:
            if id(action) not in counted:
                self.event("replaced", actor=action.actor, action=action.action, seq=action.seq)
                continue
            reason, entry = self._check(action)
            if reason:
                self.event("ignored", actor=action.actor, action=action.action, seq=action.seq, reason=reason)
            else:
                self.event("counted", actor=action.actor, action=action.action, target=action.target,
                           item=action.item, seq=action.seq, step=entry.step)
                chosen.append(entry)
        return chosen

    def _check(self, action: M21Action) -> tuple[str | None, _Chosen | None]:
        seat = self.seats.get(action.actor)
        if seat is None:
            return "no such player", None
        if not (seat.living or (seat.alive and seat.busted_out)):
            return "the actor is not in play", None
        if action.action == USE_ITEM:
            item = self.catalogue.get(action.item or "")
            if item is None:
                return f"unknown item {action.item!r}", None
            if item.phase not in ("night", "any"):
                return f"the {item.key} is not used at night", None
            reason = self._check_target(seat, action, item.target)
            return reason, (None if reason else _Chosen(action, item.step, item=item))
        spec = role(seat.role).action(action.action)
        if spec is None or spec.phase == "day":
            return f"the {seat.role} has no night action {action.action!r}", None
        if spec.counter is not None and int(self.role_state[seat.key][spec.counter]) <= 0:
            return f"no uses of {action.action!r} left", None
        if spec.key == "deliver":
            if action.item not in item_data.GADGET_KEYS:
                return f"a delivery needs a gadget ({', '.join(item_data.GADGET_KEYS)})", None
            if action.item in self.role_state[seat.key]["gadgets_delivered"]:
                return f"the {action.item} was already invented", None
        if spec.key == "safecrack":
            if action.item not in self.confiscated:
                return "that item is not in the evidence safe", None
            return (None, _Chosen(action, spec.step, spec=spec)) if action.target is None else (
                "a safecrack takes no target", None)
        reason = self._check_target(seat, action, spec.target)
        return reason, (None if reason else _Chosen(action, spec.step, spec=spec))

    def _check_target(self, seat: Seat, action: M21Action, kind: str) -> str | None:
        if kind == NO_TARGET:
            return "this action takes no target" if action.target is not None else None
        if action.target is None:
            return "a target is needed"
        target = self.seats.get(action.target)
        if target is None:
            return f"no player {action.target!r}"
        if kind == IMPRISONED:
            return None if target.alive and target.imprisoned else "the target is not imprisoned"
        if kind == CONFISCATED_ITEM:
            return "a safecrack takes no target"
        if not target.living:
            return "the target is not in play"
        if kind == OTHER_LIVING and target.key == seat.key:
            return "the actor cannot target themselves"
        if kind not in (OTHER_LIVING, ANY_LIVING):
            return f"target kind {kind} is not a night target"
        return None

    # --- the end -----------------------------------------------------------------------------------------------
    def outcome(self) -> M21NightOutcome:
        dead = {d.player for d in self.deaths}
        in_play = [s.key for s in self.state.seats if s.living and s.key not in dead]
        return M21NightOutcome(
            night=self.state.night, seed=self.state.seed, deaths=tuple(self.deaths), saved=tuple(self.saved),
            results=tuple(self.results), headlines=tuple(self.headlines),
            items=MappingProxyType({n: tuple(self.items[n]) for n in in_play}),
            state=MappingProxyType({n: MappingProxyType(dict(st)) for n, st in self.role_state.items()}),
            confiscated=tuple(self.confiscated), busted_out=tuple(self.busted_out),
            winner=winner([s for s in self.state.seats if s.key in in_play]),
            steps=tuple(self.trace),
        )


def _name(chosen: _Chosen) -> str:
    return chosen.item.key if chosen.item is not None else chosen.action.action


def winner(living: Iterable[Seat]) -> str | None:
    """M-WIN-1 over the players in play: "town" when no mafia remain, "mafia" when the mafia are at least half of
    the living [interp], else None."""
    seats = [s for s in living if s.living]
    mafia = sum(1 for s in seats if s.alignment == MAFIA)
    if mafia == 0:
        return TOWN
    if 2 * mafia >= len(seats):
        return MAFIA
    return None


class M21Step(NightStep):
    """One M-NIGHT-1 step: ``number`` 1..9 and ``key``; ``resolve(ctx)`` does the work, ``apply`` opens the trace."""

    number: int = 0

    def apply(self, ctx: M21Context) -> None:
        ctx.begin(self.number, self.key)
        self.resolve(ctx)

    def resolve(self, ctx: M21Context) -> None:  # pragma: no cover - interface
        raise NotImplementedError


