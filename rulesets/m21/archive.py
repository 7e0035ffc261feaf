"""The archive of an M21 game (RULES.md L-ARCH-1..3 for M21, M-SETUP-1, M-VOTE, M-NIGHT-1/4): the sections the
shared archive page asks the ruleset for (``kernel.rulesets.RulesetSpec.archive_section``): the cast with roles,
the vote history per day (the count at the end and the standing votes over the day as a chart), the game thread's
vote receipts, every night's resolution trace (steps, visits, results, deaths, headlines), the role PMs and the
mafia thread with their disclosure, and the verification of the deal.

What must never leak: every section but the disclosure list holds roles, results or the night's actors, known
only to the hosts while the game runs (M-SETUP-4). So a section is given to the game's hosts at any time and to
anyone else, visitors included, only once the game is over (L-ARCH-3); before that it is None and the page shows
nothing of it. The role PMs and the mafia thread are never shown here: the list says how each is disclosed and
links those the viewer may read, as the access policy decides (``inboxes.policies``: a role PM with its player's
consent, L-ARCH-2; the mafia thread to anyone who asks, L-ARCH-1).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.template.loader import render_to_string
from django.utils import translation

from archive.charts import VoteSeries, VoteTable, vote_chart_svg
from cities.models import Game, GameEvent, GameStatus, LifeStatus, Resident
from inboxes import policies
from inboxes.models import Inbox, Message
from rulesets.m21.kinds import M21InboxKind
from kernel.ruleset_parts import ArchiveSection
from voting.forum_tally import ForumDay
from voting.forum_vote import (
    FORUM_NO_LYNCH,
    ForumPost,
    ForumRemoval,
    ForumRemovalCause,
    ForumReplacement,
    ForumSeat,
)

from . import selectors, services
from .console_services import wall_time
from .day_services import day_outcome, display_names, original_texts, renamed_receipt_lines
from .models import M21Day, M21PostReceipt, M21Seat, OrderKind
from .night_models import M21Night
from .night_story import event_sentence, step_title
from .roles import ROLES

#: The sections of an M21 archive page, in order (``M21Ruleset.archive_sections``).
SECTIONS = ("cast", "votes", "receipts", "nights", "disclosure", "deal")
TITLES = {"cast": "Players and roles", "votes": "Vote history", "receipts": "The game thread's vote receipts",
          "nights": "The nights' resolution", "disclosure": "Role PMs and the mafia thread",
          "deal": "Deal verification"}


def may_see_the_record(viewer, game: Game) -> bool:
    """True when ``viewer`` may read the game's full record: the game is over (L-ARCH-3), or they host it."""
    return game.status == GameStatus.FINISHED or services.is_host(viewer, game)


def archive_section(game: Game, key: str, *, viewer) -> ArchiveSection | None:
    """The section ``key`` of ``SECTIONS`` for ``viewer``, rendered in English, or None (see the module docstring).
    Raises ``KeyError`` for an unknown key."""
    build = _BUILDERS[key]
    if key == "disclosure":
        if game.status != GameStatus.FINISHED:
            return None
    elif not may_see_the_record(viewer, game):
        return None
    with translation.override("en"):
        context = build(game, viewer)
        if context is None:
            return None
        html = render_to_string(f"m21/archive/{key}.html", {"game": game, **context})
    return ArchiveSection(key=key, title=TITLES[key], html=html)


# ----------------------------------------------------------------------------------------------------------------
# The sections
# ----------------------------------------------------------------------------------------------------------------


def _cast(game: Game, viewer) -> dict:
    rows = []
    for seat in (M21Seat.objects.filter(resident__game=game).select_related("resident", "resident__user")
                 .order_by("resident__name")):
        role = ROLES[seat.role]
        rows.append({"name": seat.resident.name, "player": seat.resident.user.public_name, "role": role.name,
                     "alignment": role.alignment, "insane": role.is_cop and not seat.sane,
                     "status": seat.resident.get_status_display()})
    return {"rows": rows}


@dataclass
class DayHistory:
    """One day of the vote history: the day row, how it ended and who was imprisoned, the final count rows
    (target, votes, voters), the standing votes of each target over the day and their chart."""

    day: M21Day
    result: str
    rows: list[dict] = field(default_factory=list)
    series: list[VoteSeries] = field(default_factory=list)
    svg: str = ""


def replacements_since(day: M21Day) -> list[tuple[int, dict]]:
    """Every replacement of a seat of ``day``'s game from the day's start on (L-REPLACE-1), oldest first, as
    (resident id, payload with ``old_user``, ``old_name``, ``new_user``, ``new_name``): those during the day (its
    orders) and every later one (the audit log's ``resident.replaced``), so that a past day is read with the
    accounts and names it had even when a seat was replaced days later."""
    rows = [(order.at, order.pk, order.seat_id, order.payload)
            for order in day.orders.filter(kind=OrderKind.REPLACEMENT, at=day.starts_at)]
    rows += [(event.at, event.pk, event.payload["resident"], event.payload)
             for event in GameEvent.objects.filter(game=day.game, kind="resident.replaced", at__gt=day.starts_at)]
    return [(seat, payload) for _at, _pk, seat, payload in sorted(rows, key=lambda row: (row[0], row[1]))]


def standing_votes(day: M21Day) -> list[VoteSeries]:
    """The standing votes of every target of ``day`` over the day (a step function, aware UTC), re-derived from
    the game thread's posts and the day's removals and replacements as ``services.day_outcome`` reads them (but
    for any day of the game: the seats are those living when the day began), each record fed in order to
    ``voting.forum_tally.ForumDay``; the day's end freezes the count. Targets by name, most votes first."""
    game = day.game
    residents = list(Resident.objects.filter(game=game).select_related("user").order_by("id"))
    label, account = {r.pk: r.name for r in residents}, {r.pk: r.user_id for r in residents}
    for seat, payload in reversed(replacements_since(day)):  # the names and accounts at the start of the day
        label[seat], account[seat] = payload["old_name"], payload["old_user"]
    # The living when the day began: alive now, or gone after its start (a night's deaths are at the night's
    # planned end, which is the next day's start, so they are not seats of that day).
    living = [r for r in residents if r.status == LifeStatus.ALIVE or (r.died_at and r.died_at > day.starts_at)]
    forum = ForumDay(services.vote_rules(game.m21),
                     [ForumSeat(seat=label[r.pk], account=f"u{account[r.pk]}") for r in living])
    end = day.ended_at or day.deadline
    records: list[tuple[datetime, int, object]] = []
    messages = list(Message.objects.filter(inbox=day.thread, received_at__gte=day.starts_at, received_at__lte=end,
                                           author_resident__isnull=False).order_by("received_at", "id"))
    originals = original_texts(messages)  # an edit changes no vote: the text as first posted counts
    for message in messages:
        records.append((message.received_at, 1, message))
    for order in day.orders.filter(kind__in=(OrderKind.REMOVAL, OrderKind.REPLACEMENT), at__lte=end):
        records.append((order.at, 0, order))
    records.sort(key=lambda item: (item[0], item[1], item[2].pk))
    points: dict[str, list[tuple[datetime, int]]] = {}
    last: dict[str, int] = {}
    for seq, (at, _kind, item) in enumerate(records, start=1):
        if isinstance(item, Message):
            forum.apply(ForumPost(seq=seq, author=f"u{item.author_user_id}", text=originals.get(item.pk, item.body)))
        elif item.kind == OrderKind.REMOVAL:
            cause = ForumRemovalCause(item.payload.get("cause", ForumRemovalCause.REMOVED))
            forum.apply(ForumRemoval(seq=seq, seat=label[item.seat_id], cause=cause))
        else:
            forum.apply(ForumReplacement(seq=seq, seat=label[item.seat_id], account=f"u{item.payload['new_user']}",
                                         names=(item.payload["new_name"],)))
        counts = {target: len(voters) for target, voters in forum.count().votes.items()}
        for target in set(counts) | set(last):
            if counts.get(target, 0) != last.get(target, 0):
                points.setdefault(target, [(day.starts_at, 0)]).append((at, counts.get(target, 0)))
        last = counts
    names = display_names(day.game)
    shown = {target: "No Lynch" if target == FORUM_NO_LYNCH else names.get(target, target) for target in points}
    return [VoteSeries(nominee=shown[t], points=[*p, (max(end, p[-1][0]), p[-1][1])])
            for t, p in sorted(points.items(), key=lambda kv: (-kv[1][-1][1], shown[kv[0]]))]


def _votes(game: Game, viewer) -> dict:
    names = display_names(game)
    days = []
    for day in M21Day.objects.filter(game=game).select_related("imprisoned", "game", "game__m21").order_by("number"):
        result = day.result or {}
        if day.imprisoned is not None:
            outcome = f"{day.imprisoned.name} was imprisoned"
        elif result.get("no_lynch"):
            outcome = "No Lynch: nobody was imprisoned"
        elif day.ended_at is not None:
            outcome = "Nobody was imprisoned (a tie or no votes)"
        elif game.status == GameStatus.FINISHED:
            outcome = "The game ended during the day"
        else:
            outcome = "The day was still open"
        how = {"end_hammer": "the hammer", "majority": "a majority", "deadline": "the deadline",
               "close_proceedings": "the Judge's close proceedings"}.get(day.how, "")
        votes = (result.get("count") or {}).get("votes", [])
        if day.ended_at is None and game.status == GameStatus.FINISHED and game.ended_at is not None:
            # A side won during the day (a removal by the host): the count as it stood when the game ended.
            standing = day_outcome(day, now=game.ended_at).report.count.votes
            votes = [{"target": target, "count": len(voters), "voters": voters} for target, voters in standing.items()]
        rows = [{"target": "No Lynch" if v["target"] == FORUM_NO_LYNCH else names.get(v["target"], v["target"]),
                 "count": v["count"], "voters": [names.get(voter, voter) for voter in v["voters"]]}
                for v in votes]
        history = DayHistory(day=day, result=f"{outcome}{' (' + how + ')' if how else ''}.", rows=rows,
                             series=standing_votes(day))
        table = VoteTable(city=None, day=day.number, opens_at=day.starts_at, closes_at=day.ended_at or day.deadline,
                          box=None, series=history.series)
        history.svg = vote_chart_svg(table, zone=game.time_zone)
        days.append(history)
    return {"days": days}


def _receipts(game: Game, viewer) -> dict:
    days = []
    names = display_names(game)
    for day in M21Day.objects.filter(game=game).order_by("number"):
        posts = [{"author": names.get(r.message.author_name, r.message.author_name),
                  "at": wall_time(r.message.received_at, game), "lines": renamed_receipt_lines(r.lines, names)}
                 for r in M21PostReceipt.objects.filter(day=day).select_related("message")
                 .order_by("message__received_at", "message_id")]
        days.append({"number": day.number, "posts": posts})
    thread = services.thread_of(game)
    return {"days": days, "thread": thread if thread and policies.can_read_inbox(viewer, thread) else None}


def _nights(game: Game, viewer) -> dict:
    nights = []
    for night in M21Night.objects.filter(game=game, resolved_at__isnull=False).order_by("number"):
        out = night.outcome or {}
        steps = out.get("steps", [])
        made = [(e["actor"], e["target"]) for s in steps for e in s["events"] if e["event"] == "visit"]
        for s in steps:
            for e in s["events"]:
                if e["event"] == "visit_void" and (e["actor"], e["target"]) in made:
                    made.remove((e["actor"], e["target"]))
        nights.append({
            "number": night.number, "seed": night.seed, "deaths": out.get("deaths", []),
            "saved": out.get("saved", []), "headlines": out.get("headlines", []),
            "results": [{**r, "answer": ", ".join(r["answer"]) if isinstance(r["answer"], list) else r["answer"]}
                        for r in out.get("results", [])],
            "visits": made,
            "steps": [{"step": s["step"], "key": s["key"], "title": step_title(s["key"]),
                       "events": [event_sentence(e) for e in s["events"]]} for s in steps],
        })
    return {"nights": nights}


def _disclosure(game: Game, viewer) -> dict:
    rows = []
    for inbox in (Inbox.objects.filter(game=game, kind__in=(M21InboxKind.MAFIA_THREAD, M21InboxKind.ROLE_PM))
                  .select_related("game", "resident").order_by("kind", "title", "pk")):
        if inbox.kind == M21InboxKind.MAFIA_THREAD:
            rule = "open to anyone logged in who asks (one click, logged)"
        else:
            rule = "disclosed with the player's consent"
        rows.append({"inbox": inbox, "rule": rule, "disclosed": policies.is_disclosed(inbox),
                     "readable": policies.can_read_inbox(viewer, inbox)})
    return {"rows": rows}


def _deal(game: Game, viewer) -> dict | None:
    check = selectors.deal_check(game)
    settings = selectors.settings_of(game)
    if check is None and (settings is None or not settings.deal_commitment):
        return None
    return {"check": check, "commitment": settings.deal_commitment}


_BUILDERS = {"cast": _cast, "votes": _votes, "receipts": _receipts, "nights": _nights, "disclosure": _disclosure,
             "deal": _deal}
