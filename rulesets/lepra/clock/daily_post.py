"""The site's draft of the daily post (RULES.md L-POST-2, L-DEATH-2, L-WIN-1): reads only.

``daily_post_record(game, day, now)`` composes, from the records, the Markdown the site drafts for the post
published at the start of game day ``day``: the victims of night ``day - 1`` with their alignment (L-DEATH-2),
yesterday's results per city (nominees, counted voters by name, changed minds, the court's decision, the executed
and their alignment), the other deaths of the day (suicides, penalties), the sitting judges (elections), and the
scoreboard per city and in total. ``rulesets.lepra.clock.services.do_draft_daily_post`` stores it as an unpublished daily post.

What it discloses and why that is allowed: the alignment of the dead (they are announced in this very post,
L-DEATH-2; the Procurator, who reads the draft before publication, is the one who announces it, L-COURT-4) and the
number of living mafia per city, which anyone can derive from the public mafia count of each city (L-CITY-2) minus
the announced dead mafia. Nothing about a living resident's alignment, the commissar or the godfather is read.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import translation
from django.utils.translation import gettext as _

from cities.models import Alignment, City, Game, GameDay, GameEvent, GameStatus, LifeStatus, Resident
from kernel.rulesets import ruleset_of
from rulesets.lepra import seats
from rulesets.lepra.models import CourtCase, DecisionSource, ExecutionDecision, VotingSession


@dataclass(frozen=True)
class DailyPostRecord:
    """The drafted record: ``title``, Markdown ``body``, and the ids of the dead whose alignment it announces."""

    title: str
    body: str
    announced: list[int]


@dataclass(frozen=True)
class CityScore:
    """L-WIN-1 counts of one city (or the total, ``city`` None): living honest and mafia, dead honest and mafia."""

    city: str | None
    living_honest: int
    living_mafia: int
    dead_honest: int
    dead_mafia: int


def side_of(resident: Resident) -> str:
    """The announced side of a dead ``resident`` (L-DEATH-2): commissar, mafioso or honest, in the active language."""
    if seats.is_commissar(resident):
        return _("commissar")
    return _("mafioso") if resident.alignment == Alignment.MAFIA else _("honest")


def scoreboard(game: Game) -> list[CityScore]:
    """The score of L-WIN-1 per city in city order, then the total (``city`` None). A spirit counts as dead."""
    rows = []
    totals = [0, 0, 0, 0]
    residents = list(Resident.objects.filter(game=game).values_list("city_id", "status", "alignment"))
    for city in City.objects.filter(game=game).order_by("number"):
        counts = [0, 0, 0, 0]
        for city_id, status, alignment in residents:
            if city_id != city.pk:
                continue
            index = (0 if status == LifeStatus.ALIVE else 2) + (1 if alignment == Alignment.MAFIA else 0)
            counts[index] += 1
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        rows.append(CityScore(city.name, *counts))
    rows.append(CityScore(None, *totals))
    return rows


def _deaths(game: Game, since: datetime | None, until: datetime) -> list[tuple[Resident, str, datetime]]:
    """(resident, cause, at) of every ``resident.died`` event of ``game`` in (``since``, ``until``], in order."""
    events = GameEvent.objects.filter(game=game, kind="resident.died", at__lte=until).order_by("at", "id")
    if since is not None:
        events = events.filter(at__gt=since)
    events = list(events)
    residents = Resident.objects.select_related(seats.SEAT).in_bulk([e.payload.get("resident") for e in events])
    return [(residents[e.payload["resident"]], e.payload.get("cause", ""), e.at) for e in events
            if e.payload.get("resident") in residents]


def _touring(game: Game, night: int) -> dict[int, dict]:
    """resident id -> the death entry of the ``night.resolved`` event of ``night`` (touring, by_city), if any."""
    event = GameEvent.objects.filter(game=game, kind="night.resolved", payload__night=night).order_by("-id").first()
    if event is None:
        return {}
    return {d.get("resident"): d for d in event.payload.get("deaths", []) if isinstance(d, dict)}


def _names(result: dict, keys) -> str:
    names = result.get("names", {})
    return ", ".join(names.get(k, k) for k in keys) or "—"


def _day_records(game: Game, day: int) -> tuple[dict, dict, dict]:
    """The voting sessions, court cases and execution decisions of game ``day``, each keyed by city id: three
    statements for every city of ``game`` (the daily post reads them all at once)."""
    sessions = {s.city_id: s for s in VotingSession.objects.filter(game=game, day=day).order_by()}
    cases: dict = {}
    for case in CourtCase.objects.filter(game=game, day=day).select_related("sentenced").order_by("id"):
        cases.setdefault(case.city_id, case)
    decisions = {d.city_id: d for d in ExecutionDecision.objects.filter(game=game, day=day)
                 .select_related("resident", f"resident__{seats.SEAT}").order_by()}
    return sessions, cases, decisions


def _city_results(city: City, records: tuple[dict, dict, dict]) -> list[str]:

    lines = [f"### {city.name}", ""]
    sessions, cases, decisions = records
    session = sessions.get(city.pk)
    result = (session.result or {}) if session is not None else {}
    if session is None or session.closed_at is None:
        lines.append(_("No execution voting was held."))
    else:
        for tally in result.get("nominees", []):
            name = result.get("names", {}).get(tally["nominee"], tally["nominee"])
            if tally.get("void"):
                lines.append(_("- %(name)s: died during voting; the votes are void (%(voters)s).")
                             % {"name": name, "voters": _names(result, tally.get("voters", []))})
                continue
            line = _("- %(name)s: %(count)d (%(voters)s)") % {
                "name": name, "count": tally.get("count", 0), "voters": _names(result, tally.get("voters", []))}
            if tally.get("changed_mind"):
                line += "; " + _("changed their mind: %(names)s") % {"names": _names(result, tally["changed_mind"])}
            lines.append(line)
        if not result.get("nominees"):
            lines.append(_("No nominees."))
    case = cases.get(city.pk)
    if case is not None and case.decided_at is not None and case.sentenced is not None:
        lines.append("")
        lines.append((_("The Supreme Court did not decide; the leader of the vote was executed: %(name)s.")
                      if case.fallback else _("The Supreme Court sentenced %(name)s.")) % {"name": case.sentenced.name})
    decision = decisions.get(city.pk)
    lines.append("")
    if decision is None:
        lines.append(_("Nobody was executed."))
    else:
        if decision.source == DecisionSource.PROCURATOR:
            lines.append(_("Nobody was voted for; the Procurator named the executed."))
        lines.append(_("Executed: %(name)s (%(side)s).") % {"name": decision.resident.name,
                                                             "side": side_of(decision.resident)})
    lines.append("")
    return lines


@dataclass(frozen=True)
class DailyPostContext:
    """What the Lepra daily post of game day ``day`` reads, gathered once (the ``context`` of
    ``LepraRuleset.daily_post_section``): the deaths since the start of day ``day - 1`` as (resident, cause, at),
    the touring entries of night ``day - 1`` by resident id, the cities in order and whether that night was held."""

    day: int
    deaths: list
    touring: dict
    cities: list
    night_held: bool

    @property
    def city_names(self) -> dict[int, str]:
        return {c.pk: c.name for c in self.cities}


def _night_section(game: Game, day: int, ctx: DailyPostContext) -> str:
    """The victims of night ``day - 1`` with their alignment (L-DEATH-2), touring kills and spirits named."""
    city_names = ctx.city_names
    lines = ["## " + _("Night %(night)d") % {"night": day - 1}, ""] if ctx.night_held else []
    victims = [(r, at) for r, cause, at in ctx.deaths if cause == "killed"]
    if not victims and ctx.night_held:
        lines.append(_("Nobody was killed tonight."))
    for resident, _at in victims:
        line = _("- %(name)s (%(city)s): %(side)s") % {"name": resident.name, "city": city_names[resident.city_id],
                                                      "side": side_of(resident)}
        entry = ctx.touring.get(resident.pk, {})
        if entry.get("touring") and entry.get("by_city") in city_names:
            line += "; " + _("killed by the touring mafia of %(city)s") % {"city": city_names[entry["by_city"]]}
        if seats.is_spirit(resident):
            line += "; " + _("a spirit today")
        lines.append(line)
    return "\n".join(lines)


def _results_section(game: Game, day: int, ctx: DailyPostContext) -> str:
    """Yesterday's results per city: nominees and voters, the court, the executed with their alignment."""
    lines = ["", "## " + _("Results of day %(day)d") % {"day": day - 1}, ""]
    records = _day_records(game, day - 1)
    for city in ctx.cities:
        lines += _city_results(city, records)
    return "\n".join(lines)


def _other_deaths_section(game: Game, day: int, ctx: DailyPostContext) -> str:
    """Suicides and penalties since yesterday's start, with their alignment; "" when there were none."""
    others = [(r, cause) for r, cause, _at in ctx.deaths if cause in ("suicide", "penalty")]
    if not others:
        return ""
    city_names = ctx.city_names
    lines = ["## " + _("Other deaths"), ""]
    for resident, cause in others:
        label = _("suicide") if cause == "suicide" else _("penalty")
        lines.append(_("- %(name)s (%(city)s): %(side)s, %(cause)s") % {
            "name": resident.name, "city": city_names[resident.city_id], "side": side_of(resident), "cause": label})
    lines.append("")
    return "\n".join(lines)


def _judges_section(game: Game, day: int, ctx: DailyPostContext) -> str:
    """The sitting judge of each city (or none)."""
    lines = ["## " + _("Judges"), ""]
    judges = {r.city_id: r.name for r in Resident.objects.filter(seats.rank_q("is_judge"), game=game,
                                                                 status=LifeStatus.ALIVE)}
    for city in ctx.cities:
        lines.append(_("- %(city)s: %(judge)s") % {"city": city.name, "judge": judges.get(city.pk) or _("no judge")})
    return "\n".join(lines)


def _score_section(game: Game, day: int, ctx: DailyPostContext) -> str:
    """The L-WIN-1 score per city and in total."""
    lines = ["", "## " + _("Score"), ""]
    for score in scoreboard(game):
        lines.append(_("- %(city)s: living %(honest)d honest, %(mafia)d mafia; dead %(dead_honest)d honest, "
                       "%(dead_mafia)d mafia") % {
            "city": score.city or _("All cities"), "honest": score.living_honest, "mafia": score.living_mafia,
            "dead_honest": score.dead_honest, "dead_mafia": score.dead_mafia})
    return "\n".join(lines)


def _game_over_section(game: Game, day: int, ctx: DailyPostContext) -> str:
    """"The game is over." once the game is finished, else ""."""
    return "\n" + "**" + _("The game is over.") + "**" if game.status == GameStatus.FINISHED else ""


#: The Lepra daily post's sections by key (``LepraRuleset.daily_post_sections`` gives their order): each takes
#: ``(game, day, DailyPostContext)`` and returns Markdown, "" for nothing.
DAILY_POST_SECTIONS = {
    "night": _night_section,
    "results": _results_section,
    "other_deaths": _other_deaths_section,
    "judges": _judges_section,
    "score": _score_section,
    "game_over": _game_over_section,
}


def daily_post_record(game: Game, day: int, now: datetime) -> DailyPostRecord:
    """The site's draft of the daily post published at the start of game ``day`` (>= 2), as of ``now`` (aware
    UTC), in the game's language (Russian for Lepra). Reads ``GameDay`` rows for the windows: deaths after the
    start of day ``day - 1`` up to ``now``; a death with cause killed is a victim of night ``day - 1``. The body
    is ``ruleset_of(game).daily_post_text``: the ruleset's ``daily_post_sections`` in order."""

    yesterday = GameDay.objects.filter(game=game, number=day - 1).first()
    since = (yesterday.started_at or yesterday.starts_at) if yesterday is not None else None
    deaths = _deaths(game, since, now)
    # A game won by day (an execution, L-WIN-1) has no night after that day: nothing to report of it.
    night_held = game.status != GameStatus.FINISHED or GameEvent.objects.filter(
        game=game, kind="night.resolved", payload__night=day - 1).exists()
    context = DailyPostContext(day=day, deaths=deaths, touring=_touring(game, day - 1),
                               cities=list(City.objects.filter(game=game).order_by("number")), night_held=night_held)
    with translation.override(game.language):
        title = _("Day %(day)d") % {"day": day}
        body = ruleset_of(game).daily_post_text(game, day, context)
    announced = sorted({r.pk for r, _cause, _at in deaths}
                       | set(Resident.objects.filter(game=game, alignment_announced=False, died_at__lte=now)
                             .exclude(status=LifeStatus.ALIVE).values_list("pk", flat=True)))
    return DailyPostRecord(title=title, body=body.strip(), announced=announced)
