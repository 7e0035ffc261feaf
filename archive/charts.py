"""The standing-votes chart and the map of the game, rendered on the server as SVG. Pages stay readable
without JavaScript: the SVG is inline markup. A ruleset fills ``VoteTable``/``VoteSeries`` from its own day
votes (its archive sections) and draws them with ``vote_chart_svg``.

The map is drawn from what the viewer may read: memberships of readable inboxes only, staff through
``visible_staff``, alignments through ``visible_alignment``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.template.loader import render_to_string
from django.utils.translation import gettext

from cities.models import City, Game, Resident
from cities.staff_kinds import staff_kind_label
from inboxes import knowledge, policies, policy_tables
from inboxes.models import Membership
from kernel.rulesets import ruleset_of
from kernel.timezones import zoned_time


@dataclass
class VoteSeries:
    """The standing votes of one nominee over the window: ``points`` [(aware UTC, count)] as a step function."""

    nominee: str
    points: list[tuple[datetime, int]]


@dataclass
class VoteTable:
    """One day and city (``city`` None for a ruleset without cities): a ruleset's tally ``box`` (who voted for
    whom, who changed their mind) and the standing votes over the voting window as an SVG chart."""

    city: City | None
    day: int
    opens_at: datetime
    closes_at: datetime
    box: object
    series: list[VoteSeries] = field(default_factory=list)
    svg: str = ""


_COLOURS = ["#b22222", "#1f4e9c", "#2e8b57", "#8b6914", "#6a3d9a", "#d2691e", "#008b8b", "#555555"]


def vote_chart_svg(table: VoteTable, width: int = 640, height: int = 240, *, zone: str = "UTC") -> str:
    """The standing votes of each nominee over the voting window, as an SVG step chart drawn from the template
    ``archive/svg/vote_chart.svg``: a ``viewBox`` of ``width`` × ``height`` user units (no fixed size: it scales to
    its column), one ``<path class="series" data-nominee=... data-final=...>`` per nominee, a legend with the
    names of the series (the names of the day), and the window's start and end as wall-clock times in ``zone``
    (the viewer's display zone) with the zone's abbreviation. A table without a city (a ruleset without cities) is
    titled by its day alone and has no ``data-city``."""
    left, right, top, bottom = 40, 160, 10, 30
    span = max((table.closes_at - table.opens_at).total_seconds(), 1.0)
    peak = max([c for s in table.series for _t, c in s.points] + [1])

    def x(at: datetime) -> float:
        return left + (width - left - right) * min(max((at - table.opens_at).total_seconds() / span, 0.0), 1.0)

    def y(count: int) -> float:
        return top + (height - top - bottom) * (1 - count / peak)

    city_number = table.city.number if table.city else None
    series = []
    for n, s in enumerate(table.series):
        moves = [f"M{x(at):.1f},{y(count):.1f}" if k == 0 else f"H{x(at):.1f}V{y(count):.1f}"
                 for k, (at, count) in enumerate(s.points)]
        series.append({"name": s.nominee, "final": s.points[-1][1] if s.points else 0, "d": "".join(moves),
                       "colour": _COLOURS[n % len(_COLOURS)], "legend_y": top + 14 + 16 * n})
    chart = {
        "id": f"vote-chart-{table.day}-{city_number}" if table.city else f"vote-chart-{table.day}",
        "title": f"{table.city.name} · {table.day}" if table.city else gettext("Day %(n)s") % {"n": table.day},
        "width": width, "height": height, "left": left, "top": top, "plot_right": width - right,
        "base": f"{y(0):.1f}", "peak": peak, "peak_x": left - 6, "peak_y": f"{y(peak) + 4:.1f}",
        "axis_y": height - 8, "legend_x": width - right + 8, "city_number": city_number, "day": table.day,
        "start_label": zoned_time(table.opens_at, zone, "H:i"), "end_label": zoned_time(table.closes_at, zone, "H:i"),
        "series": series,
    }
    return render_to_string("archive/svg/vote_chart.svg", {"c": chart}).strip()


def game_map_svg(viewer, game: Game) -> str:
    """The map of ``game`` as the viewer may know it (like the three-city diagram of the rules): one ``<g
    class="city" data-city=N data-residents=R>`` per city with its Tribune and residents (a resident's alignment
    only as ``visible_alignment`` shows it), the game-wide staff (``visible_staff``), and one ``<g class="inbox"
    data-kind=... data-members=M>`` per inbox the viewer may read (``readable_inboxes``) with lines to the cities
    of its members. Nothing of an unreadable inbox appears, not even its existence. A game whose ruleset has no
    cities (``RulesetSpec.has_cities``) has one ``<g class="players" data-residents=R>`` of all its seats instead.
    Drawn by the template ``archive/svg/game_map.svg`` (scaled by its ``viewBox``); returns the SVG markup."""

    if ruleset_of(game).has_cities:  # (city id, number, name) per city; one group of every seat otherwise
        cities = list(City.objects.filter(game=game).order_by("number").values_list("pk", "number", "name"))
    else:
        cities = [(None, None, gettext("Players"))]
    residents = list(Resident.objects.filter(game=game).select_related("game").order_by("name"))
    if game.lists_published_at is None and game.status != "finished":
        residents = []  # the city lists are not public yet
    staff = knowledge.visible_staff(viewer, game)
    inboxes = list(policies.readable_inboxes(viewer, game).filter(rolled_over_at__isnull=True)
                   .exclude(kind__in=sorted(policy_tables.kinds_of(game, "map_hidden_kinds")))
                   .order_by("kind", "city__number", "pk"))
    member_rows = list(Membership.objects.filter(inbox__in=inboxes, state__in=policy_tables.READING_STATES)
                       .values_list("inbox_id", "resident__city_id"))
    col_w, row_h = 260, 14
    per_city = {pk: [r for r in residents if r.city_id == pk] for pk, _number, _name in cities}
    tallest = max([len(v) for v in per_city.values()] + [1])
    game_staff = [r for r in staff if r.city_id is None]  # a city's staff role is drawn with its city
    city_top = 20 + 20 * max(len(game_staff), 1)
    city_h = 40 + row_h * tallest
    inbox_top = city_top + city_h + 50
    inbox_w, inbox_cols = 290, max(len(cities), 2)
    width = max(col_w * max(len(cities), 1) + 20, (inbox_w + 10) * inbox_cols + 10)
    height = inbox_top + 20 + 24 * ((len(inboxes) + inbox_cols - 1) // inbox_cols)
    centres, city_rows = {}, []
    for n, (city_id, number, name) in enumerate(cities):
        x0 = 10 + col_w * n
        centres[city_id] = (x0 + (col_w - 20) / 2, city_top + city_h)
        city_role = next((r for r in staff if r.city_id == city_id), None)
        city_rows.append({
            "number": number, "name": name, "x": x0, "text_x": x0 + 8, "name_y": city_top + 18,
            "city_role_y": city_top + 34,
            "city_role": ({"kind": city_role.kind, "label": staff_kind_label(game, city_role.kind),
                           "name": city_role.user.public_name} if city_role else None),
            "residents": [{"name": r.name, "alignment": knowledge.visible_alignment(viewer, r),
                           "dead": r.status != "alive", "y": city_top + 50 + row_h * k}
                          for k, r in enumerate(per_city[city_id])],
        })
    inbox_rows = []
    for n, inbox in enumerate(inboxes):
        x0 = 10 + (inbox_w + 10) * (n % inbox_cols)
        y0 = inbox_top + 24 * (n // inbox_cols)
        member_cities = [c for i, c in member_rows if i == inbox.pk]
        lines = []
        for city_id in sorted(set(member_cities)):
            cx, cy = centres.get(city_id, (x0, y0))
            lines.append({"x1": f"{x0 + inbox_w / 2:.1f}", "y1": y0 - 14, "x2": f"{cx:.1f}", "y2": cy})
        inbox_rows.append({"kind": inbox.kind, "members": len(member_cities), "lines": lines, "x": x0,
                           "text_x": x0 + 4, "y": y0, "box_y": y0 - 14, "title": inbox.title[:44]})
    game_map = {
        "title": game.title, "width": width, "height": height, "city_top": city_top, "city_w": col_w - 20,
        "city_h": city_h, "inbox_w": inbox_w, "cities": city_rows, "inboxes": inbox_rows,
        "city_count": sum(1 for _pk, number, _name in cities if number is not None),
        # Each role as the game's ruleset names it (its host: a Procurator or a Host, say), as on the game page.
        "staff": [{"kind": role.kind, "name": role.user.public_name, "y": 20 + 20 * n,
                   "label": staff_kind_label(game, role.kind)} for n, role in enumerate(game_staff)],
    }
    return render_to_string("archive/svg/game_map.svg", {"m": game_map}).strip()
