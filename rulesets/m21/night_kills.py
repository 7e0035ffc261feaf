"""Steps 8 and 9 of the M21 night (RULES.md M-NIGHT-1, M-NIGHT-2, M-NIGHT-5, M-NIGHT-7, M-MAFIA-1, M-MAFIA-2):
the mafia's kill vote (``kill_tally``, also the mafia thread's live tally), the kills pending until step 9, the
protections, the deaths together, the dawn's results and the stash."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .items import ARMOUR
from .night_context import (
    M21Context,
    M21Step,
    _Kill,
    _name,
)
from .night_data import (
    DESPERADO_BACKFIRE,
    DESPERADO_SHOT,
    IMMUNE,
    MAFIA_KILL,
    SAVED,
    STAYED_HOME,
    STRONGMAN_KILL,
    TARGETED_YOU,
    WENT_OUT_ANSWER,
    M21Death,
    MafiaVote,
    Seat,
)
from .roles import (
    MAFIA,
    TOWN,
)


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
                if not ctx.use_item(chosen):
                    continue
                reached = ctx.reach(actor, target, 8, chosen.item.key)
                ctx.spend_item(actor, chosen.item)  # M-NIGHT-7: spent even on a target away or hiding
                if not reached:
                    continue
                self.pend(ctx, target, chosen.item.key, actor)
                if chosen.item.self_death_chance and ctx.draw(f"{chosen.item.key}_risk:{actor}") < \
                        chosen.item.self_death_chance:
                    self.pend(ctx, actor, f"{chosen.item.key}_backfire", actor)
                continue
            reached = ctx.reach(actor, target, 8, "shoot")
            ctx.spend(actor, chosen.spec.counter)  # M-NIGHT-7: a shot is spent even on a target away or hiding
            if not reached:
                continue
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
        reached = ctx.reach(carrier, target, 8, "kill")
        if unstoppable:
            ctx.spend(carrier, "strongman_left")  # M-NIGHT-7: spent even on a target away or hiding
        if not reached:
            return
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
            reached = ctx.reach(actor, target, 9, _name(chosen))
            # M-NIGHT-7 (and M-ROLE coroner): a protection is spent whenever it is carried out, even on a target
            # away or hiding, and even with no attack.
            if chosen.item is not None:
                ctx.spend_item(actor, chosen.item)
            else:
                ctx.spend(actor, chosen.spec.counter)
            if not reached:
                continue
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
                    line = f"{ctx.seats[target].name} went out last night!"
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


