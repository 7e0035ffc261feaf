"""Lepra's sections of the shared archive pages (``LepraRuleset.archive_section``): the vote tables of each day
and city with the chart of standing votes over the voting window (L-ARCH-3).

Every table is drawn from what the viewer may read: voting inboxes through ``readable_inboxes`` (L-INBOX-9,
L-INBOX-20), the tally only with ``can_see_voting_tally``; a voting the viewer may not read is left out entirely.
"""
from __future__ import annotations

from datetime import datetime

from django.template.loader import render_to_string
from django.utils.translation import gettext as _

from archive.charts import VoteSeries, VoteTable, vote_chart_svg
from cities.models import Game
from inboxes import day_policy, policies
from rulesets.lepra.kinds import LepraInboxKind
from kernel.ruleset_parts import ArchiveSection
from kernel.timezones import display_zone_name
from rulesets.lepra.models import LepraVote, VotingSession

from .day.selectors import tally_box

#: The archive sections Lepra adds to the shared votes page (``LepraRuleset.votes_page_sections``).
VOTES_PAGE_SECTIONS = ("vote_tables",)


def vote_tables_for(viewer, game: Game) -> list[VoteTable]:
    """Every opened voting of ``game`` whose voting inboxes ``viewer`` may read (L-INBOX-9, L-INBOX-20), by day
    and city, with its tally and chart. A voting the viewer may not read is left out entirely."""

    readable = {i.pk: i for i in policies.readable_inboxes(viewer, game).filter(kind=LepraInboxKind.VOTING)
                .select_related("resident", "city")}
    tables = []
    for session in (VotingSession.objects.filter(game=game, opened_at__isnull=False)
                    .select_related("city").order_by("day", "city__number")):
        inboxes = [i for i in readable.values() if i.city_id == session.city_id and i.day_number == session.day]
        if not inboxes or not day_policy.can_see_voting_tally(viewer, session.city, inboxes):
            continue
        opens = session.opened_at or session.opens_at
        closes = session.closed_at or session.closes_at
        series = []
        votes = (LepraVote.objects.filter(inbox__in=inboxes).select_related("retracted_by", "inbox__resident")
                 .order_by("cast_at", "id"))
        by_inbox: dict[int, list[tuple[datetime, int]]] = {i.pk: [] for i in inboxes}
        for vote in votes:
            by_inbox[vote.inbox_id].append((max(vote.cast_at, opens), +1))
            if vote.retracted_by is not None:
                by_inbox[vote.inbox_id].append((vote.retracted_by.received_at, -1))
        day_names = (session.result or {}).get("names", {})  # the names of the day, as the table beside it uses

        def name_of_day(inbox, day_names=day_names) -> str:
            if inbox.resident_id is None:
                return inbox.title
            return day_names.get(str(inbox.resident_id), inbox.resident.name)

        for inbox in sorted(inboxes, key=name_of_day):
            count, points = 0, [(opens, 0)]
            for at, delta in sorted(by_inbox[inbox.pk]):
                count += delta
                points.append((at, count))
            points.append((max(closes, points[-1][0]), count))
            series.append(VoteSeries(nominee=name_of_day(inbox), points=points))
        table = VoteTable(city=session.city, day=session.day, opens_at=opens, closes_at=closes,
                          box=tally_box(session), series=series)
        table.svg = vote_chart_svg(table, zone=display_zone_name(viewer, game))
        tables.append(table)
    return tables


def archive_section(game: Game, key: str, *, viewer) -> ArchiveSection | None:
    """The archive section ``key`` of ``game`` as ``viewer`` may see it, or None when there is nothing of it
    theirs to read. ``"vote_tables"``: every readable voting's tally and chart (``vote_tables_for``). Raises
    ``KeyError`` for a key Lepra does not declare."""
    if key not in VOTES_PAGE_SECTIONS:
        raise KeyError(key)
    tables = vote_tables_for(viewer, game)
    if not tables:
        return None
    html = render_to_string("lepra/archive/vote_tables.html", {"game": game, "tables": tables})
    return ArchiveSection(key=key, title=_("Vote tables"), html=html)
