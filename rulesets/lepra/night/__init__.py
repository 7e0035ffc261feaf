"""The Lepra ruleset's night (RULES.md L-NIGHT, L-DAY-5, L-SPIRIT-1) as pipeline steps for ``roles.night``.

``NIGHT_STEPS`` is the ordered list the Lepra spec declares (``LepraRuleset.night_steps``) and
``rulesets.lepra.night.services.do_resolve_night`` runs through ``ruleset_of(game)``. Each step is pure.
"""
from __future__ import annotations

from roles.night import CHECK, HONEST, KILL, MAFIA, TOUR, Death, NightContext, NightStep, PrivateResult, PublicLine
from rulesets.lepra.day.spirits import spirit_rule_applies

#: The first night with kills, touring and checks (L-DAY-5: night 1 only elects the godfathers).
FIRST_ACTION_NIGHT = 2
#: The rank a night step reads on a ``ResidentState``: a sitting judge is never a touring target (L-JUDGE-7).
JUDGE = "judge"


class FirstNightQuiet(NightStep):
    """L-DAY-5: on night 1 the mafia kill nobody, nobody tours, commissars check nobody: every action is void."""

    key = "first_night_quiet"

    def apply(self, ctx: NightContext) -> None:
        if ctx.state.night < FIRST_ACTION_NIGHT:
            ctx.actions = []


class MafiaKill(NightStep):
    """L-NIGHT-1/2/6: each city's last kill decision counts; a target must be a living honest resident of the
    city; "no kill" (target None) and no decision at all kill nobody."""

    key = "mafia_kill"

    def apply(self, ctx: NightContext) -> None:
        for city in ctx.state.city_order:
            action = ctx.last_action(KILL, city)
            if action is None or action.target is None:
                continue
            target = ctx.state.resident(action.target)
            if target is None or not target.alive or target.city != city or target.alignment != HONEST:
                continue
            if target.id not in ctx.pending_ids():
                ctx.pending.append(Death(resident=target.id, city=city, touring=False, by_city=city))


class Touring(NightStep):
    """L-NIGHT-4, L-JUDGE-7: the touring city's last touring decision kills one living resident of another city,
    a mafioso there too, but never that city's sitting judge."""

    key = "touring"

    def apply(self, ctx: NightContext) -> None:
        city = ctx.state.touring_city
        if city is None:
            return
        ctx.public.append(PublicLine("touring_city", {"city": city}))
        action = ctx.last_action(TOUR, city)
        if action is None or action.target is None:
            return
        target = ctx.state.resident(action.target)
        if target is None or not target.alive or target.city == city or JUDGE in target.ranks:
            return
        if target.id not in ctx.pending_ids():
            ctx.pending.append(Death(resident=target.id, city=target.city, touring=True, by_city=city))


class CommissarChecks(NightStep):
    """L-NIGHT-5: the night's checks, answered truthfully (the site answered each at once); counted."""

    key = "commissar_checks"

    def apply(self, ctx: NightContext) -> None:
        for action in ctx.actions:
            if action.kind != CHECK or action.target is None:
                continue
            target = ctx.state.resident(action.target)
            if target is None:
                continue
            ctx.private.append(PrivateResult(city=action.city, key="check", target=target.id,
                                             is_mafia=target.alignment == MAFIA))
            ctx.checks += 1


class Deaths(NightStep):
    """The pending kills happen together (L-DEATH-1)."""

    key = "deaths"

    def apply(self, ctx: NightContext) -> None:
        ctx.deaths = list(ctx.pending)
        for death in ctx.deaths:
            ctx.public.append(PublicLine("killed", {"resident": death.resident, "city": death.city,
                                                    "touring": death.touring}))


class SpiritRule(NightStep):
    """L-SPIRIT-1: in the morning, in a city with as many living honest residents as living mafia, the honest
    residents killed that night become spirits for the day."""

    key = "spirit_rule"

    def apply(self, ctx: NightContext) -> None:
        dead = {d.resident for d in ctx.deaths}
        result = []
        for death in ctx.deaths:
            living = [r for r in ctx.state.residents if r.city == death.city and r.alive and r.id not in dead]
            honest = sum(1 for r in living if r.alignment == HONEST)
            victim = ctx.state.resident(death.resident)
            spirit = (victim is not None and victim.alignment == HONEST
                      and spirit_rule_applies(honest, len(living) - honest))
            result.append(Death(resident=death.resident, city=death.city, cause=death.cause, touring=death.touring,
                                by_city=death.by_city, spirit=spirit))
        ctx.deaths = result


#: The Lepra night, in order (L-NIGHT, L-DAY-5, L-SPIRIT-1).
NIGHT_STEPS: tuple[NightStep, ...] = (FirstNightQuiet(), MafiaKill(), Touring(), CommissarChecks(), Deaths(),
                                      SpiritRule())
