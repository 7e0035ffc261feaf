"""The M21 night as nine ordered pure steps on the shared night pipeline (RULES.md M-NIGHT-1..7, M-MAFIA-1,
M-ROLE, M-ROLE-1, M-ITEM-1, M-WIN-1).

``resolve_m21_night(state, actions)`` runs ``NIGHT_STEPS`` through ``roles.night.resolve_night``: the state
(``M21NightState``: seats, mafia kill votes, the night's seed, the game's gadget configuration, the evidence safe,
the stash assignment) builds its own working context, each step (a small class with a ``number`` and a ``key``)
changes it and writes its events into the trace, and the context returns an ``M21NightOutcome``: deaths, saved
players, private results, headlines, the items each player in play holds, the seats' spent uses, the winner if any,
and the trace. No ORM, no clock, no I/O; the only randomness (an insane cop's invented answer, a grenade's risk)
comes from ``random.Random(seed)`` drawn in a fixed order and recorded in the trace, so a stored night can be
resolved again to the same outcome, and ``outcome_from_trace`` re-derives the outcome from the trace alone.

Readings of the seed made here, each marked [interp] where it is made:
- the last submission of an actor's role actions counts (a reporter visits *or* hides), and each item use is its
  own submission; an actor who is not living at the start of the night acts only if busted out (M-NIGHT-7);
- a roleblock (step 2) stops every night action of the blocked player that is not yet done and voids a watch they
  started at step 1 (the hooker's text: "roleblock them for any other night activity"; M-NIGHT-3: "a roleblocked
  player did not go out"); roleblocks of one step are simultaneous, so two roleblockers on each other both block;
- an action on a player who is away (balloon) or hiding (from step 3) fails; the actor still went out (a visit),
  and keeps the use; a use is spent when an action is carried out on its target (M-ROLE coroner: also without an
  attack);
- the ninja is never seen: not by a watch, and not as having gone out (reporter, binoculars, headlines);
- the thief takes every item the target holds; a protection cancels every pending kill on its target except the
  strongman's; the armour cancels one.

What must never leak: an outcome names actors only in the trace and in results addressed to the actor
themselves; the morning post is built from ``deaths`` and ``headlines`` alone (``killer`` is for the coroner's
post mortem and the host).
"""
from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from roles.night import NightStep, resolve_night

from . import items as item_data
from .items import ARMOUR, AWAY, WATCH, WENT_OUT, Item
from .roles import (
    ANY_LIVING,
    CONFISCATED_ITEM,
    IMPRISONED,
    MAFIA,
    NO_TARGET,
    OTHER_LIVING,
    ROLES,
    TOWN,
    ActionSpec,
    role,
    seat_state,
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
class M21NightState:
    """The game at the planned end of night ``night``: ``seats``, the mafia's ``votes``, the night's ``seed``
    (recorded with the night), ``gadget_config`` (M-ITEM-1, see ``items.gadget_effects``), ``confiscated`` the items
    in the evidence safe, ``stash_assignment`` (item key, mafioso name) or None (M-MAFIA-2)."""

    night: int
    seed: int
    seats: tuple[Seat, ...]
    votes: tuple[MafiaVote, ...] = ()
    gadget_config: Mapping[str, Mapping[str, object]] | None = None
    confiscated: tuple[str, ...] = ()
    stash_assignment: tuple[str, str] | None = None

    def seat(self, name: str | None) -> Seat | None:
        return next((s for s in self.seats if s.name == name), None)

    def new_context(self, actions: Iterable[M21Action]) -> M21Context:
        """The working context of ``roles.night.resolve_night``."""
        return M21Context(self, list(actions))


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
        self.seats = {s.name: s for s in state.seats}
        self.catalogue = item_data.item_catalogue(state.gadget_config)
        self.rng = random.Random(state.seed)
        self.items = {s.name: list(s.items) for s in state.seats}
        self.role_state = {s.name: seat_state(s.role, s.state) for s in state.seats}
        self.confiscated = list(state.confiscated)
        self.blocked: dict[str, int] = {}
        self.away: set[str] = set()
        self.hidden: set[str] = set()
        self.visits: list[tuple[str, str, int]] = []
        self.watches: list[tuple[str, str, str]] = []  # (watcher, target, result kind)
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
        if spec.counter is not None and int(self.role_state[seat.name][spec.counter]) <= 0:
            return f"no uses of {action.action!r} left", None
        if spec.key == "deliver":
            if action.item not in item_data.GADGET_KEYS:
                return f"a delivery needs a gadget ({', '.join(item_data.GADGET_KEYS)})", None
            if action.item in self.role_state[seat.name]["gadgets_delivered"]:
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
        if kind == OTHER_LIVING and target.name == seat.name:
            return "the actor cannot target themselves"
        if kind not in (OTHER_LIVING, ANY_LIVING):
            return f"target kind {kind} is not a night target"
        return None

    # --- the end -----------------------------------------------------------------------------------------------
    def outcome(self) -> M21NightOutcome:
        dead = {d.player for d in self.deaths}
        in_play = [s.name for s in self.state.seats if s.living and s.name not in dead]
        return M21NightOutcome(
            night=self.state.night, seed=self.state.seed, deaths=tuple(self.deaths), saved=tuple(self.saved),
            results=tuple(self.results), headlines=tuple(self.headlines),
            items=MappingProxyType({n: tuple(self.items[n]) for n in in_play}),
            state=MappingProxyType({n: MappingProxyType(dict(st)) for n, st in self.role_state.items()}),
            confiscated=tuple(self.confiscated), busted_out=tuple(self.busted_out),
            winner=winner([s for s in self.state.seats if s.name in in_play]),
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


class StartWatching(M21Step):
    """Step 1 (M-NIGHT-1): balloons take off first (M-NIGHT-7: away from the start of the night, M-ITEM-1), then the
    reporter, binoculars, goggles and the watcher start watching. Their answers are computed at dawn from the
    visits that happened (M-NIGHT-3)."""

    number, key = 1, "start_watching"

    def resolve(self, ctx: M21Context) -> None:
        for chosen in ctx.at_step(1):
            if chosen.item is not None and chosen.item.effect == AWAY and ctx.use_item(chosen):
                actor = chosen.action.actor
                ctx.away.add(actor)
                ctx.spend_item(actor, chosen.item)
                ctx.event("away", player=actor)
        for chosen in ctx.at_step(1):
            if chosen.item is not None and chosen.item.effect == AWAY:
                continue
            actor, target = chosen.action.actor, chosen.action.target
            if not ctx.can_act(chosen):
                continue
            if chosen.item is not None and not ctx.use_item(chosen):
                continue
            if not ctx.reach(actor, target, 1, _name(chosen)):
                continue
            if chosen.item is not None:
                ctx.spend_item(actor, chosen.item)
                kind = chosen.item.key
                mode = WATCH if chosen.item.effect == WATCH else WENT_OUT
            else:
                kind = chosen.spec.key
                mode = WATCH if kind == "watch" else WENT_OUT
            ctx.watches.append((actor, target, kind if mode == WATCH else f"{kind}:went_out"))
            ctx.event("watching", actor=actor, target=target, kind=kind)


class Roleblocks(M21Step):
    """Step 2: the hooker's and the whiskey's roleblocks, simultaneous (M-NIGHT-1, M-NIGHT-2): the blocked player's
    later actions fail and a watch they started is void (M-NIGHT-3 [interp])."""

    number, key = 2, "roleblocks"

    def resolve(self, ctx: M21Context) -> None:
        blocks = []
        for chosen in ctx.at_step(2):
            actor, target = chosen.action.actor, chosen.action.target
            if not ctx.can_act(chosen):
                continue
            if chosen.item is not None and not ctx.use_item(chosen):
                continue
            if not ctx.reach(actor, target, 2, _name(chosen)):
                continue
            if chosen.item is not None:
                ctx.spend_item(actor, chosen.item)
            blocks.append((actor, target))
        for actor, target in blocks:
            ctx.blocked.setdefault(target, 2)
            ctx.event("roleblocked", actor=actor, target=target)
        for watcher, target, kind in list(ctx.watches):
            if watcher in ctx.blocked:
                ctx.watches.remove((watcher, target, kind))
                for visit in [v for v in ctx.visits if v[0] == watcher and v[2] == 1]:
                    ctx.visits.remove(visit)
                    ctx.event("visit_void", actor=watcher, target=visit[1], step=1)
                ctx.event("watch_void", actor=watcher, target=target)


class ReporterHides(M21Step):
    """Step 3: a reporter who hides makes every later action on them fail that night (M-ROLE reporter)."""

    number, key = 3, "reporter_hides"

    def resolve(self, ctx: M21Context) -> None:
        for chosen in ctx.at_step(3):
            actor = chosen.action.actor
            if not ctx.can_act(chosen):
                continue
            ctx.hidden.add(actor)
            ctx.spend(actor, chosen.spec.counter)
            ctx.event("hiding", player=actor)


class Investigations(M21Step):
    """Step 4: every cop's investigation (M-NIGHT-6, M-ROLE-1) and the police radio (M-ITEM-1)."""

    number, key = 4, "investigations"

    def resolve(self, ctx: M21Context) -> None:
        radios = []
        for chosen in ctx.at_step(4):
            actor, target = chosen.action.actor, chosen.action.target
            if chosen.item is not None:
                if ctx.can_act(chosen) and ctx.use_item(chosen):
                    ctx.spend_item(actor, chosen.item)
                    radios.append(actor)
                continue
            if not ctx.can_act(chosen) or not ctx.reach(actor, target, 4, "investigate"):
                continue
            answer = investigation_answer(ctx, ctx.seats[actor], ctx.seats[target])
            ctx.investigations.append((actor, target, answer))
            ctx.result(actor, "investigate", target, answer)
        for actor in radios:
            heard = [{"target": t, "answer": a} for _, t, a in ctx.investigations]
            ctx.result(actor, "police_radio", None, heard)


def true_answer(cop_role: str, target: Seat, held: Sequence[str]) -> object:
    """The sane answer of M-NIGHT-6: cop guilty/innocent (the godfather innocent); vanilla cop "vanilla" for a
    vanilla role (citizen, goon, godfather, M-NIGHT-7) else the role key; item cop the items held at step 4."""
    target_role = ROLES[target.role]
    if cop_role == "cop":
        return GUILTY if target_role.is_mafia and target_role.key != "godfather" else INNOCENT
    if cop_role == "vanilla_cop":
        return VANILLA if target_role.vanilla else target_role.key
    return list(held)


def investigation_answer(ctx: M21Context, cop: Seat, target: Seat) -> object:
    """The answer ``cop`` receives about ``target`` (M-NIGHT-6, M-ROLE-1): the true answer, or its opposite for an
    insane cop: guilty<->innocent; a non-vanilla role -> "vanilla" and vanilla -> a random non-vanilla role; items ->
    none and none -> one random item of those that could be in play (seeded, recorded)."""
    answer = true_answer(cop.role, target, ctx.items[target.name])
    if cop.sane:
        return answer
    if cop.role == "cop":
        return INNOCENT if answer == GUILTY else GUILTY
    if cop.role == "vanilla_cop":
        if answer != VANILLA:
            return VANILLA
        return ctx.draw("insane_vanilla_cop", [k for k, r in ROLES.items() if not r.vanilla])
    if answer:
        return []
    return [ctx.draw("insane_item_cop", item_data.ITEM_KEYS)]


class InventorDelivers(M21Step):
    """Step 5: the inventor delivers the gadget of the night to its recipient, who is told what it does
    (M-ROLE inventor, M-ITEM-1)."""

    number, key = 5, "inventor_delivers"

    def resolve(self, ctx: M21Context) -> None:
        for chosen in ctx.at_step(5):
            actor, target, gadget = chosen.action.actor, chosen.action.target, chosen.action.item
            if not ctx.can_act(chosen) or not ctx.reach(actor, target, 5, "deliver"):
                continue
            ctx.role_state[actor]["gadgets_delivered"] = [*ctx.role_state[actor]["gadgets_delivered"], gadget]
            ctx.event("spent", actor=actor, counter="gadgets_delivered", left=None, item=gadget)
            ctx.give_item(target, gadget, "delivered")
            ctx.result(target, "received", None, [gadget])


class Jailbreak(M21Step):
    """Step 6: the jailbreaker busts out an imprisoned player or steals a confiscated item; the item cop is told
    (M-ROLE jailbreaker)."""

    number, key = 6, "jailbreak"

    def resolve(self, ctx: M21Context) -> None:
        for chosen in ctx.at_step(6):
            actor = chosen.action.actor
            if not ctx.can_act(chosen):
                continue
            ctx.spend(actor, chosen.spec.counter)
            if chosen.spec.key == "bust_out":
                target = chosen.action.target
                ctx.visits.append((actor, target, 6))
                ctx.event("visit", actor=actor, target=target)
                ctx.busted_out.append(target)
                ctx.event("busted_out", player=target)
                ctx.result(target, "busted_out", None, BUSTED_OUT)
                ctx.result(actor, "bust_out", target, BUSTED_OUT)
                continue
            item = chosen.action.item
            ctx.confiscated.remove(item)
            ctx.event("safe", item=item, change="stolen")
            ctx.give_item(actor, item, "safecrack")
            ctx.result(actor, "safecrack", None, [item])
            for seat in ctx.state.seats:
                if seat.role == "item_cop":
                    ctx.result(seat.name, "safe_robbed", None, [item])


class ThiefRobs(M21Step):
    """Step 7: the thief takes every item the target holds and may use them (M-ROLE thief [interp: every item])."""

    number, key = 7, "thief_robs"

    def resolve(self, ctx: M21Context) -> None:
        for chosen in ctx.at_step(7):
            actor, target = chosen.action.actor, chosen.action.target
            if not ctx.can_act(chosen) or not ctx.reach(actor, target, 7, "rob"):
                continue
            taken = list(ctx.items[target])
            for key in taken:
                ctx.take_item(target, key, "robbed")
                ctx.give_item(actor, key, "robbed")
            ctx.result(actor, "rob", target, taken)
            if taken:
                ctx.result(target, "robbed", None, taken)


@dataclass(frozen=True)
class KillTally:
    """The mafia's kill vote at one moment (M-MAFIA-1, M-NIGHT-7): ``counts`` {target: votes} in order of each
    target's oldest current vote, ``target`` the decided target or None, ``carriers`` the current voters for it,
    newest first (who carries out the kill, then who steps in), ``tie_broken_by`` None, "godfather" or "oldest
    vote", ``void`` the (voter, target, reason) of votes that do not count."""

    counts: Mapping[str, int]
    target: str | None
    carriers: tuple[str, ...]
    tie_broken_by: str | None
    void: tuple[tuple[str, str, str], ...]


def kill_tally(seats: Mapping[str, Seat], votes: Iterable[MafiaVote]) -> KillTally:
    """M-MAFIA-1, M-NIGHT-7: the target with the most current votes of the living mafia (each mafioso's last vote
    counts; a vote on a mafioso or on a player not in play is void); a tie goes to the godfather's vote while he is
    in play, otherwise to the tied target with the oldest vote. Pure; the mafia thread's live tally and the night's
    step 8 both use it."""
    void = []
    current: dict[str, MafiaVote] = {}
    for vote in sorted(votes, key=lambda v: v.seq):
        voter = seats.get(vote.voter)
        if voter is None or not voter.living or voter.alignment != MAFIA:
            void.append((vote.voter, vote.target, "not a living mafioso"))
            continue
        current[vote.voter] = vote
    valid = {}
    for voter, vote in current.items():
        target = seats.get(vote.target)
        if target is None or not target.living or target.alignment == MAFIA:
            void.append((voter, vote.target, "not a town player in play"))
            continue
        valid[voter] = vote
    tally: dict[str, list[MafiaVote]] = {}
    for vote in sorted(valid.values(), key=lambda v: v.seq):
        tally.setdefault(vote.target, []).append(vote)
    counts = MappingProxyType({t: len(v) for t, v in tally.items()})
    if not tally:
        return KillTally(counts, None, (), None, tuple(void))
    top = max(counts.values())
    tied = [t for t, n in counts.items() if n == top]
    target, broken = (tied[0], None) if len(tied) == 1 else (None, None)
    if target is None:
        godfather = next((v for n, v in valid.items() if seats[n].role == "godfather"), None)
        if godfather is not None and godfather.target in tied:
            target, broken = godfather.target, "godfather"
        else:
            target, broken = min(tied, key=lambda t: tally[t][0].seq), "oldest vote"
    carriers = tuple(v.voter for v in sorted(tally[target], key=lambda v: -v.seq))
    return KillTally(counts, target, carriers, broken, tuple(void))


def kill_decision(ctx: M21Context) -> tuple[str | None, tuple[str, ...]]:
    """The night's kill decision (``kill_tally`` over the votes at the planned end of the night), traced. Returns
    (target or None, its voters newest first)."""
    tally = kill_tally(ctx.seats, ctx.state.votes)
    for voter, target, reason in tally.void:
        ctx.event("vote_void", voter=voter, target=target, reason=reason)
    ctx.event("tally", counts=dict(tally.counts))
    if tally.tie_broken_by:
        ctx.event("tie_broken", by=tally.tie_broken_by, target=tally.target)
    return tally.target, tally.carriers


class Kills(M21Step):
    """Step 8: the desperado's shots, night guns and grenades, and the mafia kill, simultaneous; every kill is
    pending until step 9 (M-NIGHT-2, M-NIGHT-5, M-NIGHT-7, M-MAFIA-1, M-ROLE desperado and strongman)."""

    number, key = 8, "kills"

    def resolve(self, ctx: M21Context) -> None:
        self.mafia_kill(ctx)
        for chosen in ctx.at_step(8):
            actor, target = chosen.action.actor, chosen.action.target
            if chosen.spec is not None and chosen.spec.key == "strongman_kill":
                continue
            if not ctx.can_act(chosen):
                continue
            if chosen.item is not None:
                if not ctx.use_item(chosen) or not ctx.reach(actor, target, 8, chosen.item.key):
                    continue
                ctx.spend_item(actor, chosen.item)
                self.pend(ctx, target, chosen.item.key, actor)
                if chosen.item.self_death_chance and ctx.draw(f"{chosen.item.key}_risk:{actor}") < \
                        chosen.item.self_death_chance:
                    self.pend(ctx, actor, f"{chosen.item.key}_backfire", actor)
                continue
            if not ctx.reach(actor, target, 8, "shoot"):
                continue
            ctx.spend(actor, chosen.spec.counter)
            if ctx.seats[target].alignment == TOWN:
                self.pend(ctx, actor, DESPERADO_BACKFIRE, actor)
                ctx.targeted_town.append((actor, target))
            else:
                self.pend(ctx, target, DESPERADO_SHOT, actor)

    @staticmethod
    def pend(ctx: M21Context, target: str, cause: str, by: str, unstoppable: bool = False) -> None:
        ctx.kills.append(_Kill(target, cause, by, unstoppable))
        ctx.event("kill_pending", target=target, cause=cause, by=by, unstoppable=unstoppable)

    def mafia_kill(self, ctx: M21Context) -> None:
        target, voters = kill_decision(ctx)
        strongman = next((c for c in ctx.at_step(8) if c.spec is not None and c.spec.key == "strongman_kill"), None)
        if target is None:
            if strongman is not None:
                ctx.event("fails", actor=strongman.action.actor, action="strongman_kill", reason="no kill decided")
            return
        carrier, unstoppable = None, False
        if strongman is not None and ctx.can_act(strongman):
            carrier, unstoppable = strongman.action.actor, True
        else:
            for voter in voters:
                if voter in ctx.away or voter in ctx.blocked:
                    ctx.event("cannot_carry", actor=voter, reason="away" if voter in ctx.away else "roleblocked")
                    continue
                carrier = voter
                break
        if carrier is None:
            ctx.event("no_kill", target=target, reason="no voter for the target can act")
            return
        ctx.event("carries_out", actor=carrier, target=target)
        if not ctx.reach(carrier, target, 8, "kill"):
            return
        if unstoppable:
            ctx.spend(carrier, "strongman_left")
        self.pend(ctx, target, STRONGMAN_KILL if unstoppable else MAFIA_KILL, carrier, unstoppable)


class Protections(M21Step):
    """Step 9: the coroner's bag and first-aid kits protect; a protection cancels every pending kill on its target
    except the strongman's, the armour cancels one; then the deaths happen together; results of the watches,
    desperado notices; the items of the dead leave play; the stash assignment is collected (M-NIGHT-2..5,
    M-MAFIA-2, M-ITEM-1)."""

    number, key = 9, "protections"

    def resolve(self, ctx: M21Context) -> None:
        for chosen in ctx.at_step(9):
            actor, target = chosen.action.actor, chosen.action.target
            if chosen.item is not None and chosen.item.effect == ARMOUR:
                if chosen.item.passive:
                    ctx.event("wearing", player=actor, item=chosen.item.key, note="always worn")
                elif ctx.can_act(chosen) and ctx.use_item(chosen):
                    ctx.spend_item(actor, chosen.item)
                    ctx.armoured.add(actor)
                    ctx.event("wearing", player=actor, item=chosen.item.key, note="worn tonight")
                continue
            if not ctx.can_act(chosen):
                continue
            if chosen.item is not None and not ctx.use_item(chosen):
                continue
            if not ctx.reach(actor, target, 9, _name(chosen)):
                continue
            if chosen.item is not None:
                ctx.spend_item(actor, chosen.item)
            else:
                ctx.spend(actor, chosen.spec.counter)
            ctx.protected.add(target)
            ctx.event("protected", target=target)
        self.cancel_kills(ctx)
        self.deaths(ctx)
        self.dawn(ctx)

    @staticmethod
    def cancel_kills(ctx: M21Context) -> None:
        for name in dict.fromkeys(k.target for k in ctx.kills):
            pending = [k for k in ctx.kills if k.target == name and not k.cancelled]
            saved_by = []
            if name in ctx.protected:
                for kill in pending:
                    if not kill.unstoppable:
                        kill.cancelled = True
                        ctx.event("kill_cancelled", target=name, cause=kill.cause, by="protection")
                if any(k.cancelled for k in pending):
                    saved_by.append("protection")
            stoppable = [k for k in pending if not k.cancelled and not k.unstoppable]
            armour = next((k for k in ctx.items[name]
                           if ctx.catalogue[k].effect == ARMOUR and ctx.catalogue[k].passive), None)
            if stoppable and (armour is not None or name in ctx.armoured):
                stoppable[0].cancelled = True
                ctx.event("kill_cancelled", target=name, cause=stoppable[0].cause, by=armour or "armour")
                if armour is not None:
                    ctx.take_item(name, armour, "used")
                else:
                    ctx.armoured.discard(name)
                saved_by.append("armour")
            if saved_by and not any(not k.cancelled for k in ctx.kills if k.target == name):
                ctx.saved.append(name)
                ctx.event("saved", player=name)
                ctx.result(name, "saved", None, SAVED)

    @staticmethod
    def deaths(ctx: M21Context) -> None:
        for name in dict.fromkeys(k.target for k in ctx.kills):
            standing = [k for k in ctx.kills if k.target == name and not k.cancelled]
            if standing:
                death = M21Death(name, standing[0].cause, standing[0].by)
                ctx.deaths.append(death)
                ctx.event("death", player=name, cause=death.cause, killer=death.killer)
        dead = {d.player for d in ctx.deaths}
        for desperado, target in ctx.targeted_town:
            if desperado in dead and any(k.target == desperado and k.cause == DESPERADO_BACKFIRE and not k.cancelled
                                         for k in ctx.kills):
                ctx.result(target, "desperado", desperado, TARGETED_YOU)
        for kill in ctx.kills:
            if kill.cause == DESPERADO_SHOT and not kill.cancelled and kill.target in dead:
                ctx.result(kill.by, "immunity", kill.target, IMMUNE)

    @staticmethod
    def dawn(ctx: M21Context) -> None:
        ninjas = {n for n, s in ctx.seats.items() if s.role == "ninja"}
        seen = [(v, t) for v, t, _ in ctx.visits if v not in ninjas]
        for watcher, target, kind in ctx.watches:
            if kind.endswith(":went_out"):
                kind = kind.split(":")[0]
                went = any(v == target for v, _ in seen)
                ctx.result(watcher, kind, target, WENT_OUT_ANSWER if went else STAYED_HOME)
                if went and kind == "visit":
                    line = f"{target} went out last night!"
                    if line not in ctx.headlines:
                        ctx.headlines.append(line)
                        ctx.event("headline", text=line)
            else:
                visitors = list(dict.fromkeys(v for v, t in seen if t == target and v != watcher))
                ctx.result(watcher, kind, target, visitors)
        dead = {d.player for d in ctx.deaths}
        for name in ctx.seats:
            if name in dead and ctx.items[name]:
                for key in list(ctx.items[name]):
                    ctx.take_item(name, key, "left play")
        if ctx.state.stash_assignment is not None:
            key, holder = ctx.state.stash_assignment
            seat = ctx.seats.get(holder)
            if seat is not None and seat.living and seat.alignment == MAFIA and holder not in dead:
                ctx.give_item(holder, key, "stash")
            else:
                ctx.event("stash_uncollected", item=key, holder=holder)


#: The M21 night in the order of M-NIGHT-1.
NIGHT_STEPS: tuple[M21Step, ...] = (StartWatching(), Roleblocks(), ReporterHides(), Investigations(),
                                    InventorDelivers(), Jailbreak(), ThiefRobs(), Kills(), Protections())


def resolve_m21_night(state: M21NightState, actions: Iterable[M21Action]) -> M21NightOutcome:
    """Resolve one M21 night through the shared pipeline (``roles.night.resolve_night``) with ``NIGHT_STEPS``.
    Pure and deterministic for a given state (seed included). Raises ``ValueError`` for an impossible roster
    (unknown role, a seat state field the role lacks) or gadget configuration."""
    return resolve_night(state, actions, NIGHT_STEPS)


def outcome_from_trace(state: M21NightState, steps: Sequence[Mapping]) -> dict:
    """Re-derive an outcome's JSON parts (deaths, saved, results, headlines, items) from its trace alone and the
    night's starting items: the audit of a stored night (DESIGN.md "Night resolution")."""
    events = [e for s in steps for e in s["events"]]
    items = {s.name: list(s.items) for s in state.seats}
    deaths, saved, results, headlines = [], [], [], []
    for e in events:
        kind = e["event"]
        if kind == "death":
            deaths.append({"player": e["player"], "cause": e["cause"]})
        elif kind == "saved":
            saved.append(e["player"])
        elif kind == "result":
            results.append({"player": e["player"], "kind": e["kind"], "target": e["target"], "answer": e["answer"]})
        elif kind == "headline":
            headlines.append(e["text"])
        elif kind == "item":
            if e["change"] == "gained":
                items[e["holder"]].append(e["item"])
            else:
                items[e["holder"]].remove(e["item"])
    dead = {d["player"] for d in deaths}
    in_play = [s.name for s in state.seats if s.living and s.name not in dead]
    return {"deaths": deaths, "saved": saved, "results": results, "headlines": headlines,
            "items": {n: items[n] for n in in_play}}
