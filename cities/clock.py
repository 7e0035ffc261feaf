"""The phase plan's arithmetic (DESIGN.md "The clock"): pure functions, no ORM, no clock.

Every instant goes in and comes out as an aware UTC ``datetime``; wall-clock times are built in the game's zone
with ``zoneinfo`` (``datetime.combine(date, time, tzinfo=zone)``), never by adding hours to a UTC time, so a day
keeps its local start and its 00:00 across a daylight-saving change (a Europe/London game on the last Sunday of
October starts at 10:00 local on both sides; a Europe/Moscow game's 00:00 is 21:00 UTC every day).

A game day ``n`` runs from ``starts_at`` to ``ends_at``; the night ``n`` follows until the next day's start.
Night ``n`` is resolved at ``night_ends_at``, a little before the next day starts, so that the site can draft the
daily post and the Procurator can edit it before it is published at the day start.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

#: How long before the next day's start the night ends by default (resolution, then the daily post's draft).
NIGHT_END_LEAD = timedelta(hours=1)
#: The shortest night the plan allows between the end of a day and the start of the next one.
MIN_NIGHT = timedelta(minutes=30)
#: A long day lasts 2 or 3 calendar days; 1 is an ordinary day.
MAX_CALENDAR_DAYS = 3
#: A shortened day lasts a few hours [interp: 1 to 12].
MAX_SHORTENED_HOURS = 12


def at_local(zone: ZoneInfo, day: date, wall: time) -> datetime:
    """The instant (aware UTC) at which the clocks of ``zone`` show ``wall`` on ``day``.

    A wall time inside a spring-forward gap resolves with the offset before the gap (``fold=0``)."""
    return datetime.combine(day, wall, tzinfo=zone).astimezone(UTC)


def local_date(zone: ZoneInfo, moment: datetime) -> date:
    """The calendar date in ``zone`` of the aware instant ``moment``."""
    return moment.astimezone(zone).date()


def midnight_after(zone: ZoneInfo, moment: datetime) -> datetime:
    """The 00:00 in ``zone`` that ends the calendar day of ``moment`` (aware UTC): no voting of the day runs past it."""
    return at_local(zone, local_date(zone, moment) + timedelta(days=1), time(0, 0))


def day_end(zone: ZoneInfo, starts_at: datetime, *, calendar_days: int = 1,
            shortened_hours: int | None = None) -> datetime:
    """The end of a game day starting at ``starts_at`` (aware UTC).

    An ordinary day (``calendar_days`` 1) and a long day (2 or 3) end at the 00:00 ending their last calendar day
    in ``zone``; a shortened day ends ``shortened_hours`` after its start, and never after the 00:00 ending its
    calendar day."""
    last = local_date(zone, starts_at) + timedelta(days=calendar_days - 1)
    midnight = at_local(zone, last + timedelta(days=1), time(0, 0))
    if shortened_hours is not None:
        return min(starts_at + timedelta(hours=shortened_hours), midnight)
    return midnight


def next_day_start(zone: ZoneInfo, day_start: time, ends_at: datetime) -> datetime:
    """The start of the day after a day ending at ``ends_at``: the first instant at which the clocks of ``zone``
    show ``day_start`` and that leaves a night of at least ``MIN_NIGHT`` (aware UTC)."""
    earliest = ends_at + MIN_NIGHT
    day = local_date(zone, ends_at)
    while True:
        candidate = at_local(zone, day, day_start)
        if candidate >= earliest:
            return candidate
        day += timedelta(days=1)


def night_end(ends_at: datetime, next_starts_at: datetime, *, lead: timedelta = NIGHT_END_LEAD) -> datetime:
    """When the night between a day ending at ``ends_at`` and the next day starting at ``next_starts_at`` is
    resolved: ``lead`` before the next start, but never in the first half of the night (aware UTC)."""
    return next_starts_at - min(lead, (next_starts_at - ends_at) / 2)


def night_after(ends_at: datetime, night_starts_at: datetime | None, next_starts_at: datetime, *,
                lead: timedelta = NIGHT_END_LEAD, edit_window: timedelta = timedelta(0)) -> tuple[datetime, datetime]:
    """The end of the night after a day ending at ``ends_at`` and the start of the next day, when a deadline of the
    day (a court deadline, a judge election, a voting; ``night_starts_at``, None: none) holds the night's start
    after ``ends_at``: ``(night_ends_at, next_starts_at)``, aware UTC.

    One rule for every boundary: a later night start moves what depends on it, in order. The night lasts at least
    ``MIN_NIGHT`` from its real start before it is resolved, and the next day starts no earlier than
    ``edit_window`` after the resolution (the Procurator edits the daily post drafted then). Without a
    later start the plan is ``night_end(ends_at, next_starts_at)`` and ``next_starts_at`` unchanged. Both results
    never run backwards: each is at least what the unmoved plan gives."""
    planned_end = night_end(ends_at, next_starts_at, lead=lead)
    if night_starts_at is None or night_starts_at <= ends_at:
        return planned_end, next_starts_at
    resolved_at = max(planned_end, night_starts_at + MIN_NIGHT)
    return resolved_at, max(next_starts_at, resolved_at + edit_window)


def announcement_deadline(starts_at: datetime, ends_at: datetime) -> datetime:
    """The end of the first half of a day (the Tribunes announce their voting times before it)."""
    return starts_at + (ends_at - starts_at) / 2


@dataclass(frozen=True)
class DayTimes:
    """One day of the plan: its number, start, end (voting over, night begins) and the end of its night."""

    number: int
    starts_at: datetime
    ends_at: datetime
    night_ends_at: datetime


def plan_days(zone: ZoneInfo, day_start: time, first: int, first_starts_at: datetime, count: int, *,
              calendar_days: dict[int, int] | None = None, shortened_hours: dict[int, int] | None = None,
              fixed_starts: dict[int, datetime] | None = None, lead: timedelta = NIGHT_END_LEAD) -> list[DayTimes]:
    """The times of ``count`` consecutive days from day ``first`` starting at ``first_starts_at``.

    ``calendar_days`` / ``shortened_hours`` / ``fixed_starts`` map day numbers to a long day, a shortened day and a
    start the Procurator fixed by hand; every other day starts at ``day_start`` in ``zone`` after the night that
    follows the previous day (``next_day_start``). Returns the days in order."""
    calendar_days, shortened_hours, fixed_starts = calendar_days or {}, shortened_hours or {}, fixed_starts or {}
    out: list[DayTimes] = []
    starts = first_starts_at
    for number in range(first, first + count):
        ends = day_end(zone, starts, calendar_days=calendar_days.get(number, 1),
                       shortened_hours=shortened_hours.get(number))
        following = fixed_starts.get(number + 1) or next_day_start(zone, day_start, ends)
        out.append(DayTimes(number, starts, ends, night_end(ends, following, lead=lead)))
        starts = following
    return out
