"""Steps 1 to 7 of the M21 night (RULES.md M-NIGHT-1): watching, roleblocks, the reporter's hiding, the
investigations (M-NIGHT-6, M-ROLE-1), the inventor's delivery, the jailbreak and the thief, each a small
``M21Step`` over the night's ``M21Context``."""
from __future__ import annotations

from collections.abc import Sequence

from . import items as item_data
from .items import AWAY, WATCH, WENT_OUT
from .night_context import (
    M21Context,
    M21Step,
    _name,
)
from .night_data import (
    BUSTED_OUT,
    GUILTY,
    INNOCENT,
    NOT_VANILLA,
    VANILLA,
    Seat,
)
from .roles import (
    ROLES,
)


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
            reached = ctx.reach(actor, target, 1, _name(chosen))
            if chosen.item is not None:
                ctx.spend_item(actor, chosen.item)  # M-NIGHT-7: spent even on a target away
                ctx.early_uses.append((actor, chosen.item))
            if not reached:
                continue
            if chosen.item is not None:
                kind = chosen.item.key
                mode = WATCH if chosen.item.effect == WATCH else WENT_OUT
            else:
                kind = chosen.spec.key
                mode = WATCH if kind == "watch" else WENT_OUT
            ctx.watches.append((actor, target, kind if mode == WATCH else f"{kind}:went_out"))
            ctx.event("watching", actor=actor, target=target, kind=kind)


class Roleblocks(M21Step):
    """Step 2: the hooker's and the whiskey's roleblocks, simultaneous (M-NIGHT-1, M-NIGHT-2, M-NIGHT-7: a hooked
    player's whiskey still blocks): the blocked player's later actions fail, and a watch they started at step 1 is
    void with its visit (M-NIGHT-3, M-NIGHT-7); the item of a voided watch is not spent (it is given back)."""

    number, key = 2, "roleblocks"

    def resolve(self, ctx: M21Context) -> None:
        blocks = []
        for chosen in ctx.at_step(2):
            actor, target = chosen.action.actor, chosen.action.target
            if not ctx.can_act(chosen):
                continue
            if chosen.item is not None and not ctx.use_item(chosen):
                continue
            reached = ctx.reach(actor, target, 2, _name(chosen))
            if chosen.item is not None:
                ctx.spend_item(actor, chosen.item)  # M-NIGHT-7: spent even on a target away or hiding
            if reached:
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
        for actor, item in ctx.early_uses:
            if actor in ctx.blocked and item.uses is not None:
                ctx.give_item(actor, item.key, "roleblocked")  # M-NIGHT-7: a roleblocked use is not spent


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
    vanilla role (citizen, goon, godfather) and "not vanilla" for every other, never the role itself; item cop the
    items held at step 4."""
    target_role = ROLES[target.role]
    if cop_role == "cop":
        return GUILTY if target_role.is_mafia and target_role.key != "godfather" else INNOCENT
    if cop_role == "vanilla_cop":
        return VANILLA if target_role.vanilla else NOT_VANILLA
    return list(held)


def investigation_answer(ctx: M21Context, cop: Seat, target: Seat) -> object:
    """The answer ``cop`` receives about ``target`` (M-NIGHT-6, M-ROLE-1): the true answer, or its opposite for an
    insane cop: guilty<->innocent; vanilla<->not vanilla; items -> none and none -> one random item of those that
    could be in play (seeded, recorded)."""
    answer = true_answer(cop.role, target, ctx.items[target.key])
    if cop.sane:
        return answer
    if cop.role == "cop":
        return INNOCENT if answer == GUILTY else GUILTY
    if cop.role == "vanilla_cop":
        return NOT_VANILLA if answer == VANILLA else VANILLA
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
            if not ctx.can_act(chosen):
                continue
            reached = ctx.reach(actor, target, 5, "deliver")
            # M-NIGHT-7: the gadget is spent even when its recipient is away or hiding.
            ctx.role_state[actor]["gadgets_delivered"] = [*ctx.role_state[actor]["gadgets_delivered"], gadget]
            ctx.event("spent", actor=actor, counter="gadgets_delivered", left=None, item=gadget)
            if not reached:
                continue
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
                    ctx.result(seat.key, "safe_robbed", None, [item])


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


