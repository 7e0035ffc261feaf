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

This module holds the night's order (``NIGHT_STEPS``), its entry point and the trace audit, and names every public
record of the night for its callers; the parts live by subject: ``night_data`` (the input and output records, death
causes, answers), ``night_context`` (the state, its working context, ``M21Step``, ``winner``), ``night_steps``
(steps 1-7) and ``night_kills`` (the kill vote, steps 8-9).

Readings of the seed made here, each marked [interp] where it is made:
- the last submission of an actor's role actions counts (a reporter visits *or* hides), and each item use is its
  own submission; an actor who is not living at the start of the night acts only if busted out (M-NIGHT-7);
- a roleblock (step 2) voids every night activity of the blocked player: the actions not yet done fail and a watch
  they started at step 1 is void, its item given back (M-NIGHT-7; the hooker's text: "roleblock them for any other
  night activity"; M-NIGHT-3: "a roleblocked player did not go out"); roleblocks of step 2 are simultaneous, so a
  hooked player's whiskey still blocks its target and two roleblockers on each other both block;
- an action on a player who is away (balloon) or hiding (from step 3) fails; the actor still went out (a visit);
  a limited use (a bag, a shot, an item, a gadget, the strongman's kill) is spent whenever the action is carried
  out, on a target away or hiding too, and never when the actor is roleblocked or away (M-NIGHT-7; M-ROLE
  coroner: also without an attack);
- the ninja is never seen: not by a watch, and not as having gone out (reporter, binoculars, headlines);
- the thief takes every item the target holds; a protection cancels every pending kill on its target except the
  strongman's; the armour cancels one.

What must never leak: an outcome names actors only in the trace and in results addressed to the actor
themselves; the morning post is built from ``deaths`` and ``headlines`` alone (``killer`` is for the coroner's
post mortem and the host).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from roles.night import resolve_night

from .night_context import M21Context, M21NightState, M21Step, winner
from .night_data import (
    BUSTED_OUT,
    DESPERADO_BACKFIRE,
    DESPERADO_SHOT,
    GRENADE_BACKFIRE,
    GUILTY,
    IMMUNE,
    INNOCENT,
    MAFIA_KILL,
    SAVED,
    STAYED_HOME,
    STRONGMAN_KILL,
    TARGETED_YOU,
    USE_ITEM,
    VANILLA,
    WENT_OUT_ANSWER,
    M21Action,
    M21Death,
    M21NightOutcome,
    M21Result,
    MafiaVote,
    Seat,
)
from .night_kills import Kills, KillTally, Protections, kill_decision, kill_tally
from .night_steps import (
    InventorDelivers,
    Investigations,
    Jailbreak,
    ReporterHides,
    Roleblocks,
    StartWatching,
    ThiefRobs,
    investigation_answer,
    true_answer,
)

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
    items = {s.key: list(s.items) for s in state.seats}
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
    in_play = [s.key for s in state.seats if s.living and s.key not in dead]
    return {"deaths": deaths, "saved": saved, "results": results, "headlines": headlines,
            "items": {n: items[n] for n in in_play}}


__all__ = [
    "BUSTED_OUT", "DESPERADO_BACKFIRE", "DESPERADO_SHOT", "GRENADE_BACKFIRE", "GUILTY", "IMMUNE", "INNOCENT",
    "MAFIA_KILL", "NIGHT_STEPS", "SAVED", "STAYED_HOME", "STRONGMAN_KILL", "TARGETED_YOU", "USE_ITEM", "VANILLA",
    "WENT_OUT_ANSWER", "InventorDelivers", "Investigations", "Jailbreak", "KillTally", "Kills", "M21Action",
    "M21Context", "M21Death", "M21NightOutcome", "M21NightState", "M21Result", "M21Step", "MafiaVote", "Protections",
    "ReporterHides", "Roleblocks", "Seat", "StartWatching", "ThiefRobs", "investigation_answer", "kill_decision",
    "kill_tally", "outcome_from_trace", "resolve_m21_night", "true_answer", "winner",
]
