"""The phase plan and the clock's services (DESIGN.md "The clock"; RULES.md L-DAY-1..3, L-POST-2): the days'
planned times, the clock events laid out from them, day start and night start, the daily post."""
from __future__ import annotations

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cities import clock
from cities.models import Game, GameDay, GameStatus, PostKind, PublicPost, Resident, ScheduledEvent
from cities.services import (
    MAX_POST_LENGTH,
    MAX_SCHEDULE_DAYS,
    _clean_text,
    check_procurator,
    do_create_public_post,
    do_publish_post,
)
from rulesets.lepra.inbox_services import do_lay_spirit_to_rest, do_roll_over_city_inboxes_for_new_day
from inboxes.rendering import render_markdown
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import ruleset_of
from kernel.timezones import time_for
from rulesets.lepra import seats
from rulesets.lepra.events import LepraScheduledKind
from rulesets.lepra.models import VotingSession

from .daily_post import daily_post_record

# --------------------------------------------------------------------------------------------------------------
# The phase plan (DESIGN.md "The clock"; RULES.md L-DAY-1..3, L-POST-2)
# --------------------------------------------------------------------------------------------------------------
#
# The plan is ``GameDay`` rows (``cities.clock`` computes their times) and the ScheduledEvents laid out from them.
# How far ahead: the current day and the next one. While day ``c`` runs (``Game.day_number == c``) the pending
# clock events are, in per-game (due_at, id) order:
#
#   night_start {"day": c}            at day c's ends_at (moved after any later voting_close / court_deadline)
#   night_end {"night": c}            at day c's night_ends_at (the night's resolution: ``roles``)
#   daily_post_draft {"day": c + 1}   at the same instant, created after night_end, so it runs after it
#   day_start {"day": c + 1}          at day c + 1's starts_at
#
# Before day 1 only ``day_start {"day": 1}`` is pending. When day ``c + 1`` starts, day ``c + 2`` is planned and
# the four events of day ``c + 1`` are laid out. Every service that changes the plan re-derives the days that have
# not started and moves the pending events (``due_at``); events that no longer belong to the plan are cancelled
# (``cancelled_at``); done events are never touched.

#: The kinds of scheduled events the phase plan owns (``_sync_clock_events``). Voting and court events belong to
#: ``voting`` (``do_schedule_voting``, ``do_put_before_court``).
CLOCK_EVENT_KINDS = tuple(kind.value for kind in LepraScheduledKind if kind.clock)
#: Events of the day that must run before its night starts (``night_start`` waits for them): the execution voting
#: and the court (``voting``), and judge elections (L-DAY-4).
DAY_DEADLINE_KINDS = tuple(kind.value for kind in LepraScheduledKind if kind.day_deadline)


def _zone(game: Game) -> ZoneInfo:
    return ZoneInfo(game.time_zone)


def _check_game_not_over(game: Game) -> None:
    if game.status == GameStatus.FINISHED:
        raise WrongState(_("The game is over."))


def game_day_of(game: Game, number: int):
    """The ``GameDay`` ``number`` of ``game``, or None when the clock has not planned it."""

    return GameDay.objects.filter(game=game, number=number).first()


def voting_window_limits(game: Game, day: int, now: datetime) -> tuple[datetime | None, datetime]:
    """The limits of L-DAY-3 for the execution voting of game day ``day``: ``(announce_by, ends_by)``, aware UTC.

    ``ends_by``: all voting is over by then: the planned end of the day (the 00:00 ending its last calendar day,
    or the end of a shortened day); without a plan, the 00:00 in the game's zone ending the calendar day of
    ``now``. ``announce_by``: the Tribunes set their times before it, in the first half of the day; None without
    a plan (no day start is known). Used by ``rulesets.lepra.day.services.do_schedule_voting`` / ``do_extend_voting``."""

    plan = game_day_of(game, day)
    if plan is None:
        return None, clock.midnight_after(_zone(game), now)
    return clock.announcement_deadline(plan.starts_at, plan.ends_at), plan.ends_at


def _lock_days(game: Game) -> list:

    return list(GameDay.objects.select_for_update().filter(game=game).order_by("number"))


def _replan(game: Game, *, ensure_through: int | None = None) -> list:
    """Re-derive the times of the days of ``game`` that have not started (``cities.clock.plan_days``) and the
    night ends, creating rows up to ``ensure_through``. Days that started keep their start; days whose night began
    keep their end. The current day's night start is held by its deadlines (``_night_hold``) and the night's end
    and the next day's start move with it (``cities.clock.night_after``). Returns the rows in order (locked)."""
    zone = _zone(game)
    window = timedelta(minutes=game.daily_post_edit_minutes)
    days = _lock_days(game)
    if not days:
        return days

    def times(day):
        return day.starts_at, day.ends_at, day.night_starts_at, day.night_ends_at

    stored = {day.pk: times(day) for day in days}
    last = max(days[-1].number, ensure_through or 0)
    by_number = {d.number: d for d in days}
    for number in range(days[-1].number + 1, last + 1):
        previous = by_number[number - 1]
        starts = clock.next_day_start(zone, game.day_start, previous.ends_at)
        by_number[number] = GameDay(game=game, number=number, starts_at=starts,
                                    ends_at=clock.day_end(zone, starts), night_ends_at=clock.day_end(zone, starts))
    ordered = [by_number[n] for n in sorted(by_number)]
    previous = None
    for day in ordered:
        if previous is not None:
            fixed = day.started_at is not None or day.start_fixed
            planned = day.starts_at if fixed else clock.next_day_start(zone, game.day_start, previous.ends_at)
            if previous.ended_at is None and previous.number == game.day_number:
                previous.night_starts_at = _night_hold(game, previous.ends_at, planned)
            previous.night_ends_at, following = clock.night_after(previous.ends_at, previous.night_starts_at,
                                                                  planned, edit_window=window)
            if day.started_at is None:
                day.starts_at = following
        if day.ended_at is None:
            day.ends_at = clock.day_end(zone, day.starts_at, calendar_days=day.calendar_days,
                                        shortened_hours=day.shortened_hours)
        previous = day
    following = clock.next_day_start(zone, game.day_start, ordered[-1].ends_at)
    if ordered[-1].ended_at is None and ordered[-1].number == game.day_number:
        ordered[-1].night_starts_at = _night_hold(game, ordered[-1].ends_at, following)
    ordered[-1].night_ends_at = clock.night_after(ordered[-1].ends_at, ordered[-1].night_starts_at, following,
                                                  edit_window=window)[0]
    for day in ordered:
        if day.pk is None or times(day) != stored[day.pk]:  # a day whose times did not move is left as it is
            day.save()
    return ordered


def _night_hold(game: Game, ends_at: datetime, before: datetime) -> datetime | None:
    """The latest voting, court or judge election deadline of ``game`` (pending or done, not cancelled) due in
    [``ends_at``, ``before``): the night of the day ending at ``ends_at`` starts after it (L-DAY-3); None when
    none holds it. Elections opening at or after ``ends_at`` belong to the night and the next day (see
    ``_deadline_after``)."""
    events = ScheduledEvent.objects.filter(game=game, cancelled_at__isnull=True)
    later_elections = [e for e in events.filter(kind="election_open", due_at__gte=ends_at)
                       .values_list("payload__election", flat=True) if e is not None]
    return (events.filter(kind__in=DAY_DEADLINE_KINDS, due_at__gte=ends_at, due_at__lt=before)
            .exclude(kind="election_open").exclude(kind="election_close", payload__election__in=later_elections)
            .order_by("-due_at").values_list("due_at", flat=True).first())


def _deadline_after(game: Game, since: datetime, before: datetime) -> datetime | None:
    """The latest pending voting, court or judge election deadline of ``game`` due in [``since``, ``before``), or
    None. A judge election that opens at or after ``since`` (the day is over: a failed election's successor, an
    election after a death at night, L-JUDGE-2/5) belongs to the night and the next day, not to the day: neither
    its opening nor its close holds the night back."""
    pending = ScheduledEvent.objects.filter(game=game, done_at__isnull=True, cancelled_at__isnull=True)
    later_elections = [e for e in pending.filter(kind="election_open", due_at__gte=since)
                       .values_list("payload__election", flat=True) if e is not None]
    latest = (pending.filter(kind__in=DAY_DEADLINE_KINDS, due_at__gte=since, due_at__lt=before)
              .exclude(kind="election_open").exclude(kind="election_close", payload__election__in=later_elections)
              .order_by("-due_at").values_list("due_at", flat=True).first())
    return latest


def _expected_clock_events(game: Game, days: list) -> list[tuple[str, dict, datetime]]:
    """The clock events the plan wants pending for ``game`` now, as (kind, payload, due_at), in creation order."""
    by_number = {d.number: d for d in days}
    current = game.day_number
    if game.status == GameStatus.FINISHED:
        return []
    if current == 0:
        first = by_number.get(1)
        return [("day_start", {"day": 1}, first.starts_at)] if first else []
    today, tomorrow = by_number.get(current), by_number.get(current + 1)
    if today is None or tomorrow is None:
        return []
    expected = []
    if today.ended_at is None:
        night_at = max(today.ends_at, today.night_starts_at or today.ends_at)
        expected.append(("night_start", {"day": current}, night_at))
    expected += [
        ("night_end", {"night": current}, today.night_ends_at),
        ("daily_post_draft", {"day": current + 1}, today.night_ends_at),
        ("day_start", {"day": current + 1}, tomorrow.starts_at),
    ]
    return expected


def _payload_key(kind: str, payload: dict) -> tuple[str, int | None]:
    return kind, payload.get("night" if kind == "night_end" else "day")


def _sync_clock_events(game: Game, days: list, *, actor, now: datetime, running: int | None = None) -> dict:
    """Make the pending clock events of ``game`` match the plan: move the due time of pending rows, create the
    missing ones (never a second one for an event that already ran), cancel pending future rows the plan no
    longer has. Done rows, and rows already due (one may be the running event), are never cancelled; the event
    ``running`` (the handler calling this, about to be marked done) is left out, so its successor is created.
    Returns counts ``{"moved", "created", "cancelled"}`` and ``"changes"``: each moved event as
    ``{"event", "kind", "from", "to"}`` (ISO times), for the audit log."""
    expected = _expected_clock_events(game, days)
    wanted = {_payload_key(kind, payload) for kind, payload, _due in expected}
    pending = list(ScheduledEvent.objects.select_for_update().filter(
        game=game, kind__in=CLOCK_EVENT_KINDS, done_at__isnull=True, cancelled_at__isnull=True)
        .exclude(pk=running).order_by("id"))
    counts = {"moved": 0, "created": 0, "cancelled": 0}
    changes: list[dict] = []
    kept: dict[tuple[str, int | None], ScheduledEvent] = {}
    for event in pending:
        key = _payload_key(event.kind, event.payload)
        if key in wanted and key not in kept:
            kept[key] = event
        elif event.due_at > now:  # a due one may be running right now (its handler re-plans): left to run
            ScheduledEvent.objects.filter(pk=event.pk, done_at__isnull=True).update(cancelled_at=now)
            counts["cancelled"] += 1
    missing = []
    for kind, payload, due in expected:
        key = _payload_key(kind, payload)
        event = kept.get(key)
        if event is not None:
            if event.due_at != due:
                ScheduledEvent.objects.filter(pk=event.pk, done_at__isnull=True).update(due_at=due)
                counts["moved"] += 1
                changes.append({"event": event.pk, "kind": kind, "from": event.due_at.isoformat(),
                                "to": due.isoformat()})
            continue
        missing.append((kind, payload, due))
    if missing:  # the events that already ran are read once, the missing others created in one insert
        ran = {_payload_key(kind, payload) for kind, payload in ScheduledEvent.objects.filter(
            game=game, kind__in={kind for kind, _payload, _due in missing}, done_at__isnull=False,
        ).values_list("kind", "payload")}
        created = ScheduledEvent.objects.bulk_create([
            ScheduledEvent(game=game, kind=kind, due_at=due, payload=payload, created_at=now, created_by=actor)
            for kind, payload, due in missing if _payload_key(kind, payload) not in ran])
        counts["created"] += len(created)
    if changes:
        counts["changes"] = changes
    return counts


def _plan_payload(days: list) -> list[dict]:
    return [{"day": d.number, "starts_at": d.starts_at.isoformat(), "ends_at": d.ends_at.isoformat(),
             "night_ends_at": d.night_ends_at.isoformat()} for d in days if d.started_at is None or d.ended_at is None]


@transaction.atomic
def do_start_game_clock(game: Game, *, first_day_starts_at: datetime, acting_user,
                        now: datetime | None = None) -> list:
    """Start the clock of ``game`` (L-DAY-1): day ``game.day_number + 1`` starts at ``first_day_starts_at`` (aware,
    in the future); the plan then rolls on by itself (see the comment above ``CLOCK_EVENT_KINDS``).

    Before the game (setup, city lists published; ``day_number`` 0) this lays out day 1 and its ``day_start``
    event: the day start makes the game running. For a game already running on day ``c`` without a plan (a game
    started by hand, like the demo), day ``c`` is taken to be an ordinary day of the calendar day before
    ``first_day_starts_at``, and its night's events are laid out too. Procurator only (``acting_user`` None: the
    site). Returns the planned ``GameDay`` rows. Raises ``NotAllowed``, ``InvalidInput`` (naive or past time) or
    ``WrongState`` (game over, lists not published, clock already started)."""

    now = now or timezone.now()
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    _check_game_not_over(game)
    if game.status == GameStatus.RECRUITMENT or game.lists_published_at is None and game.day_number == 0:
        raise WrongState(_("Publish the city lists before starting the game clock."), rule="L-CITY-4")
    if GameDay.objects.filter(game=game).exists():
        raise WrongState(_("The game clock is already running."), rule="L-DAY-1")
    if first_day_starts_at is None or timezone.is_naive(first_day_starts_at):
        raise InvalidInput(_("The day start must include its time zone."), rule="L-DAY-1")
    if first_day_starts_at <= now:
        raise InvalidInput(_("The day start must be in the future."), rule="L-DAY-1")
    zone = _zone(game)
    current = game.day_number
    if current >= 1:
        previous_date = clock.local_date(zone, first_day_starts_at) - timedelta(days=1)
        starts = clock.at_local(zone, previous_date, game.day_start)
        ends = clock.day_end(zone, starts)
        if ends + clock.MIN_NIGHT > first_day_starts_at:
            raise InvalidInput(_("The next day must start at least %(minutes)d minutes after this day ends "
                                 "(%(end)s).") % {"minutes": clock.MIN_NIGHT.seconds // 60,
                                                  "end": _local_time(game, ends, acting_user)}, rule="L-DAY-1")
        GameDay.objects.create(game=game, number=current, starts_at=starts, ends_at=ends,
                               night_ends_at=clock.night_end(ends, first_day_starts_at), started_at=starts)
    GameDay.objects.create(game=game, number=current + 1, starts_at=first_day_starts_at,
                           ends_at=clock.day_end(zone, first_day_starts_at),
                           night_ends_at=clock.day_end(zone, first_day_starts_at), start_fixed=True)
    days = _replan(game)
    counts = _sync_clock_events(game, days, actor=acting_user, now=now)
    record_event(game, "clock.started", actor=acting_user, at=now,
                 payload={"first_day": current + 1, "starts_at": first_day_starts_at.isoformat(), **counts})
    return days


def _check_clock(game: Game, acting_user) -> Game:
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    _check_game_not_over(game)
    if game_day_of(game, max(game.day_number, 1)) is None:
        raise WrongState(_("The game clock has not been started."), rule="L-DAY-1")
    return game


def _check_voting_fits(game: Game, days: list) -> None:
    """Every scheduled execution voting closes by the (new) end of its day (L-DAY-3)."""

    for day in days:
        late = (VotingSession.objects.filter(game=game, day=day.number, closes_at__gt=day.ends_at)
                .select_related("city").order_by("city__number").first())
        if late is not None:
            raise InvalidInput(_("The voting in %(city)s closes at %(closes)s, after the end of day %(day)d "
                                 "(%(end)s): the Tribune must move it first.")
                               % {"city": late.city.name, "closes": _local_time(game, late.closes_at),
                                  "day": day.number, "end": _local_time(game, day.ends_at)}, rule="L-DAY-3")


def _local_time(game: Game, moment: datetime, viewer=None) -> str:
    """``moment`` as ``viewer`` reads it (their display zone, else the game's) with the zone's abbreviation."""
    return time_for(moment, viewer, game, "Y-m-d H:i")


def _check_future_days_fit(game: Game, days: list, now: datetime) -> None:
    """The re-derived plan still lies ahead: a day that has not started starts in the future (L-DAY-1)."""
    for day in days:
        if day.started_at is None and day.starts_at <= now:
            raise InvalidInput(_("Day %(day)d would start at %(start)s, which is not in the future.")
                               % {"day": day.number, "start": _local_time(game, day.starts_at)}, rule="L-DAY-1")


def _apply_plan_change(game: Game, *, acting_user, now: datetime, kind: str, payload: dict,
                       ensure_through: int | None = None) -> list:
    """Re-derive the plan of ``game`` after a change of the Procurator's, check it, move the pending clock events
    and record ``kind`` (a ``LepraEventKind`` of the clock) with ``payload``, the counts and the plan. Returns the
    plan's ``GameDay`` rows; raises ``InvalidInput`` when the plan no longer fits (L-DAY-1, L-DAY-3)."""
    days = _replan(game, ensure_through=ensure_through)
    _check_future_days_fit(game, days, now)
    _check_voting_fits(game, days)
    counts = _sync_clock_events(game, days, actor=acting_user, now=now)
    record_event(game, kind, actor=acting_user, at=now, payload={**payload, **counts, "plan": _plan_payload(days)})
    return days


@transaction.atomic
def do_set_day_start(game: Game, day_start: time, *, acting_user, now: datetime | None = None) -> list:
    """The Procurator sets the day start time (L-DAY-1): ``day_start`` is a wall-clock time in the game's zone,
    applied to every day that has not started (days whose start the Procurator fixed by hand keep it). The pending
    ``day_start`` / ``night_end`` / ``daily_post_draft`` events move with it. Returns the plan's ``GameDay`` rows.

    Raises ``NotAllowed`` (not the Procurator), ``WrongState`` (game over, no clock) or ``InvalidInput`` (the next
    day would start in the past, L-DAY-1; a scheduled voting would end after its day, L-DAY-3); nothing changes
    then."""
    now = now or timezone.now()
    game = _check_clock(game, acting_user)
    if not isinstance(day_start, time) or day_start.tzinfo is not None:
        raise InvalidInput(_("The day start is a wall-clock time in the game's time zone."), rule="L-DAY-1")
    old = game.day_start
    game.day_start = day_start
    game.save(update_fields=["day_start"])
    return _apply_plan_change(game, acting_user=acting_user, now=now, kind="clock.day_start_set",
                              payload={"from": old.isoformat(), "to": day_start.isoformat()})


def _check_changeable_day(game: Game, day: int, now: datetime, *, rule: str, current_allowed: bool) -> None:

    if day < 1:
        raise InvalidInput(_("There is no day %(day)d.") % {"day": day}, rule=rule)
    if day < game.day_number or (day == game.day_number and not current_allowed):
        raise WrongState(_("Day %(day)d has already started.") % {"day": day}, rule=rule)
    if day == game.day_number:
        plan = game_day_of(game, day)
        if plan.ended_at is not None or now >= clock.announcement_deadline(plan.starts_at, plan.ends_at):
            raise WrongState(_("Day %(day)d is past its first half: its length can no longer change.")
                             % {"day": day}, rule=rule)


@transaction.atomic
def do_declare_long_day(game: Game, day: int, calendar_days: int, *, acting_user,
                        now: datetime | None = None) -> list:
    """The Procurator declares game day ``day`` a long day of ``calendar_days`` calendar days (L-DAY-2: 2 or 3;
    1 makes it an ordinary day again). It ends at the 00:00 ending its last calendar day (L-DAY-3); the days after
    it move. Allowed for a day that has not started, or for the current day during its first half (the Tribunes
    announce their times then). Returns the plan's ``GameDay`` rows.

    Raises ``NotAllowed``, ``WrongState`` (game over, no clock, day started or past its first half) or
    ``InvalidInput`` (not 1-3 days, a shortened day, a voting scheduled after the new end)."""

    now = now or timezone.now()
    game = _check_clock(game, acting_user)
    if not isinstance(calendar_days, int) or not 1 <= calendar_days <= clock.MAX_CALENDAR_DAYS:
        raise InvalidInput(_("A long day lasts 2 or 3 calendar days."), rule="L-DAY-2")
    _check_changeable_day(game, day, now, rule="L-DAY-2", current_allowed=True)
    _replan(game, ensure_through=day)
    target = GameDay.objects.select_for_update().get(game=game, number=day)
    if target.shortened_hours is not None:
        raise InvalidInput(_("Day %(day)d is shortened; a shortened day cannot be long.") % {"day": day},
                           rule="L-DAY-2")
    old = target.calendar_days
    target.calendar_days = calendar_days
    target.save(update_fields=["calendar_days"])
    return _apply_plan_change(game, acting_user=acting_user, now=now, kind="clock.long_day",
                              payload={"day": day, "from": old, "to": calendar_days,
                                       "calendar_days": calendar_days})


@transaction.atomic
def do_shorten_day(game: Game, day: int, hours: int | None, *, acting_user,
                   next_day_starts_at: datetime | None = None, now: datetime | None = None) -> list:
    """The Procurator shortens game day ``day`` to ``hours`` hours (L-DAY-2: one of the last days of the game,
    a few hours [interp: 1-12]; None makes it an ordinary day again). The day must not have started and cannot be
    day 1 (the elections, L-DAY-5); it still ends by the 00:00 ending its calendar day (L-DAY-3). The next day
    starts at ``next_day_starts_at`` (aware; at least a short night later) or, by default, at the game's day start
    time after the night. Returns the plan's ``GameDay`` rows.

    Raises ``NotAllowed``, ``WrongState`` (game over, no clock, day started) or ``InvalidInput`` (bad hours, a day
    reaching past 00:00, a long day, a bad next start, a voting scheduled after the new end)."""

    now = now or timezone.now()
    game = _check_clock(game, acting_user)
    if hours is not None and (not isinstance(hours, int) or not 1 <= hours <= clock.MAX_SHORTENED_HOURS):
        raise InvalidInput(_("A shortened day lasts 1 to %(max)d hours.") % {"max": clock.MAX_SHORTENED_HOURS},
                           rule="L-DAY-2")
    if day < 2:
        raise InvalidInput(_("Day 1 cannot be shortened."), rule="L-DAY-5")
    _check_changeable_day(game, day, now, rule="L-DAY-2", current_allowed=False)
    _replan(game, ensure_through=day + 1)
    target = GameDay.objects.select_for_update().get(game=game, number=day)
    following = GameDay.objects.select_for_update().get(game=game, number=day + 1)
    if hours is not None:
        if target.calendar_days != 1:
            raise InvalidInput(_("Day %(day)d is a long day; a long day cannot be shortened.") % {"day": day},
                               rule="L-DAY-2")
        end = target.starts_at + timedelta(hours=hours)
        if end > clock.midnight_after(_zone(game), target.starts_at):
            raise InvalidInput(_("A day of %(hours)d hours from %(start)s would end after 00:00.")
                               % {"hours": hours, "start": _local_time(game, target.starts_at, acting_user)}, rule="L-DAY-3")
        if next_day_starts_at is not None:
            if timezone.is_naive(next_day_starts_at):
                raise InvalidInput(_("The day start must include its time zone."), rule="L-DAY-1")
            if next_day_starts_at < end + clock.MIN_NIGHT:
                raise InvalidInput(_("The next day must start at least %(minutes)d minutes after this day ends "
                                     "(%(end)s).") % {"minutes": clock.MIN_NIGHT.seconds // 60,
                                                      "end": _local_time(game, end, acting_user)}, rule="L-DAY-1")
    elif next_day_starts_at is not None:
        raise InvalidInput(_("Only a shortened day fixes the start of the next day."), rule="L-DAY-2")
    old = target.shortened_hours
    target.shortened_hours = hours
    target.save(update_fields=["shortened_hours"])
    following.start_fixed = next_day_starts_at is not None
    if next_day_starts_at is not None:
        following.starts_at = next_day_starts_at
    following.save(update_fields=["start_fixed", "starts_at"])
    return _apply_plan_change(game, acting_user=acting_user, now=now, kind="clock.day_shortened",
                              payload={"day": day, "from": old, "to": hours, "hours": hours,
                                       "next_day_starts_at": next_day_starts_at.isoformat()
                                       if next_day_starts_at else None})


#: The longest edit window a game may give the Procurator before the site publishes a drafted daily post.
MAX_EDIT_WINDOW_MINUTES = 12 * 60


@transaction.atomic
def do_set_daily_post_edit_window(game: Game, minutes: int, *, acting_user, now: datetime | None = None) -> Game:
    """The Procurator sets the shortest time between the site's draft of a daily post and its publication
    (L-POST-2; 0 to ``MAX_EDIT_WINDOW_MINUTES``): a held night then also moves the next day's start by it, and a
    day start publishes a fresher draft only when the window has passed. Returns the game. Raises ``NotAllowed``,
    ``InvalidInput`` or ``WrongState`` (game over)."""
    now = now or timezone.now()
    if acting_user is None:
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-POST-2")
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    _check_game_not_over(game)
    if not isinstance(minutes, int) or not 0 <= minutes <= MAX_EDIT_WINDOW_MINUTES:
        raise InvalidInput(_("The edit window is 0 to %(max)d minutes.") % {"max": MAX_EDIT_WINDOW_MINUTES},
                           rule="L-POST-2")
    old = game.daily_post_edit_minutes
    game.daily_post_edit_minutes = minutes
    game.save(update_fields=["daily_post_edit_minutes"])
    record_event(game, "daily_post.edit_window_set", actor=acting_user, at=now, payload={"old_minutes": old, "minutes": minutes})
    do_replan_clock(game, acting_user=acting_user, reason="daily_post.edit_window_set", now=now)
    return game


# --------------------------------------------------------------------------------------------------------------
# The day start and the night start (scheduler handlers call these; acting_user None = the site)
# --------------------------------------------------------------------------------------------------------------

@transaction.atomic
def do_begin_day(game: Game, day: int, *, acting_user=None, now: datetime | None = None):
    """Start game day ``day`` (the ``day_start`` event, L-DAY-1): ``day_number`` becomes ``day`` (a game in setup
    becomes running on day 1); the spirits of the day before go to the cemetery (L-SPIRIT-2); every city inbox
    rolls over (L-INBOX-1); the daily post drafted at night end is published, exactly once (L-POST-2); the day
    after is planned and the clock events of this day are laid out; day 1 opens the standing inboxes of the game
    (the ruleset's ``create_standing_inboxes``; Lepra: ``rulesets.lepra.inbox_services.do_open_game_inboxes``). On a finished game only the (final) daily
    post is published. Returns the ``GameDay``. Idempotent: a day that already started raises ``WrongState``
    and changes nothing; so do a missing plan and a day out of turn. Site or Procurator."""

    now = now or timezone.now()
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    plan = game_day_of(game, day)
    if plan is None:
        raise WrongState(_("Day %(day)d is not planned.") % {"day": day}, rule="L-DAY-1")
    if game.status == GameStatus.FINISHED:
        if day >= 2:
            do_publish_daily_post(game, day, acting_user=acting_user, now=now)
        return plan
    if game.day_number >= day or plan.started_at is not None:
        raise WrongState(_("Day %(day)d has already started.") % {"day": day}, rule="L-DAY-1")
    if game.day_number != day - 1:
        raise WrongState(_("Day %(day)d cannot start on day %(current)d.") % {"day": day, "current": game.day_number},
                         rule="L-DAY-1")
    yesterday = game_day_of(game, day - 1)
    if yesterday is not None:
        cutoff = yesterday.started_at or yesterday.starts_at
        for spirit in Resident.objects.filter(seats.rank_q("is_spirit"), game=game, died_at__lte=cutoff).exclude(
                status="alive").order_by("pk"):
            do_lay_spirit_to_rest(spirit, acting_user=None, now=now)
    starting = game.status == GameStatus.SETUP
    if starting:
        game.status = GameStatus.RUNNING
    game.day_number = day
    game.save(update_fields=["status", "day_number"])
    if starting:
        # The game starts: its standing inboxes open (city, personal, cemetery, office, ...; L-INBOX table), or
        # nobody could propose, nominate or post on day 1. Skipped (left to the Procurator) when the staff who
        # organize them are missing.
        try:
            ruleset_of(game).create_standing_inboxes(game, now=now)
        except WrongState:
            pass
    plan.started_at = now
    plan.save(update_fields=["started_at"])
    if day == 1:
        # The standing inboxes open as the game starts (L-INBOX table): no staff page does it, the day start does
        # (inboxes the Procurator opened already are kept).
        ruleset_of(game).create_standing_inboxes(game, now=now)
    rolled = do_roll_over_city_inboxes_for_new_day(game, acting_user=None, now=now)
    post = _publish_daily_post_at_day_start(game, day, acting_user=acting_user, now=now) if day >= 2 else None
    days = _replan(game, ensure_through=day + 1)
    counts = _sync_clock_events(game, days, actor=None, now=now)
    record_event(game, "clock.day_started", actor=acting_user, at=now,
                 payload={"day": day, "inboxes": [i.pk for i in rolled], "post": post.pk if post else None,
                          **counts})
    return game_day_of(game, day)


@transaction.atomic
def do_begin_night(game: Game, day: int, *, acting_user=None, now: datetime | None = None):
    """Close game day ``day`` and start its night (the ``night_start`` event, after the day's last voting and court
    deadline, L-DAY-3): the ``GameDay`` gets ``ended_at``. Returns it. Raises ``WrongState`` (not the current day,
    already night, game over). Site or Procurator."""

    now = now or timezone.now()
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    _check_game_not_over(game)
    plan = GameDay.objects.select_for_update().filter(game=game, number=day).first()
    if plan is None or game.day_number != day:
        raise WrongState(_("Day %(day)d is not the current day.") % {"day": day}, rule="L-DAY-1")
    if plan.ended_at is not None:
        raise WrongState(_("Night %(night)d has already started.") % {"night": day}, rule="L-DAY-1")
    plan.ended_at = now
    plan.save(update_fields=["ended_at"])
    record_event(game, "clock.night_started", actor=acting_user, at=now, payload={"day": day})
    return plan


@transaction.atomic
def do_replan_clock(game: Game, *, acting_user=None, reason: str, now: datetime | None = None,
                    running: int | None = None) -> dict:
    """Re-derive the plan of ``game`` after a deadline of the day changed (a voting scheduled, extended or
    rescheduled; a court deadline; a judge election) or when the night start finds one pending: the night start
    is held after the day's latest deadline, and the night's end, the daily post's draft and the next day's start
    move with it, in order (``cities.clock.night_after``). ``running``: the scheduled event whose handler calls
    this (its successor is laid out). Records ``clock.replanned`` {reason, moved, created, cancelled, changes}
    when anything moved. Returns the counts (empty without a plan). By the site or the staff whose change
    caused it; checks nothing else (the caller did)."""
    now = now or timezone.now()
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status == GameStatus.FINISHED or game_day_of(game, max(game.day_number, 1)) is None:
        return {}
    days = _replan(game)
    counts = _sync_clock_events(game, days, actor=acting_user, now=now, running=running)
    if counts["moved"] or counts["created"] or counts["cancelled"]:
        today = next((d for d in days if d.number == game.day_number), None)
        record_event(game, "clock.replanned", actor=acting_user, at=now, payload={
            "reason": reason, **counts,
            "night_starts_at": today.night_starts_at.isoformat() if today and today.night_starts_at else None})
    return counts


def night_cutoff(game: Game, night: int) -> datetime | None:
    """The planned end of ``night`` (aware UTC; ``GameDay.night_ends_at``), or None without a plan: decisions,
    checks and godfather votes of the night are cut off there, however late the resolution runs (DESIGN.md
    "The clock", L-NIGHT-6)."""
    plan = game_day_of(game, night)
    return plan.night_ends_at if plan is not None else None


def hold_night_start(game: Game, day: int, *, until: datetime, now: datetime) -> ScheduledEvent:
    """Lay out a ``night_start`` of ``day`` at ``until`` (aware UTC) for a game without a phase plan whose day still
    has a deadline pending (L-DAY-3: the night waits for it). Runs in the caller's transaction (the scheduler's)."""
    return ScheduledEvent.objects.create(game=game, kind="night_start", due_at=until, payload={"day": day},
                                         created_at=now)


def pending_day_deadline(game: Game, since: datetime, day: int) -> datetime | None:
    """The latest pending voting, court or judge election deadline of ``game`` due from ``since`` until the
    planned start of day ``day + 1`` before any hold (its fixed start, or the day start after day ``day``'s end:
    the bound ``_replan`` uses), i.e. the night of ``day`` waits for it; or None."""
    plan, following = game_day_of(game, day), game_day_of(game, day + 1)
    if following is not None and (following.started_at is not None or following.start_fixed):
        before = following.starts_at
    elif plan is not None:
        before = clock.next_day_start(_zone(game), game.day_start, plan.ends_at)
    else:
        before = since + timedelta(days=MAX_SCHEDULE_DAYS)
    return _deadline_after(game, since, before)


def _publish_daily_post_at_day_start(game: Game, day: int, *, acting_user, now: datetime) -> PublicPost:
    """The day start's publication of the daily post (L-POST-2): at once when the draft is at least
    ``game.daily_post_edit_minutes`` old (or the Procurator starts the day), else a ``daily_post_publish``
    event publishes it when the Procurator's edit window has passed (after an outage the draft, the resolution and
    the day start may run in one tick). Returns the post (unpublished while it waits)."""
    plan = _daily_day(game, day)
    post = plan.post if plan.post_id is not None else do_draft_daily_post(game, day, acting_user=None, now=now)
    ready_at = post.created_at + timedelta(minutes=game.daily_post_edit_minutes)
    if acting_user is not None or post.published_at is not None or ready_at <= now:
        return do_publish_daily_post(game, day, acting_user=acting_user, now=now)
    PublicPost.objects.filter(pk=post.pk).update(publish_at=ready_at)
    if not ScheduledEvent.objects.filter(game=game, kind="daily_post_publish", payload__day=day,
                                         cancelled_at__isnull=True).exists():
        ScheduledEvent.objects.create(game=game, kind="daily_post_publish", due_at=ready_at, payload={"day": day},
                                      created_at=now)
    record_event(game, "daily_post.held", actor=None, at=now,
                 payload={"day": day, "post": post.pk, "drafted_at": post.created_at.isoformat(),
                          "publish_at": ready_at.isoformat()})
    return post


# --------------------------------------------------------------------------------------------------------------
# The daily post (RULES.md L-POST-2, L-DEATH-2)
# --------------------------------------------------------------------------------------------------------------

def _daily_day(game: Game, day: int):

    if day < 2:
        raise InvalidInput(_("The first daily post is published on day 2."), rule="L-POST-2")
    plan = GameDay.objects.select_for_update().filter(game=game, number=day).first()
    if plan is None:
        raise WrongState(_("Day %(day)d is not planned.") % {"day": day}, rule="L-POST-2")
    return plan


@transaction.atomic
def do_draft_daily_post(game: Game, day: int, *, acting_user=None, now: datetime | None = None) -> PublicPost:
    """Draft the daily post published at the start of game ``day`` (L-POST-2): the site's record
    (``rulesets.lepra.clock.daily_post.daily_post_record``: night victims with alignment, yesterday's results per city, the
    judges, the scoreboard) followed by the Procurator's free text written so far. Stored as an unpublished daily
    ``PublicPost`` (the author is the site) linked to the ``GameDay``; only the Procurator sees it before
    publication. Idempotent: when the draft exists it is returned unchanged (the Procurator's edits are kept).
    By the site at night end (``daily_post_draft`` event) or the Procurator. Raises ``NotAllowed``,
    ``InvalidInput`` (day < 2) or ``WrongState`` (day not planned)."""

    now = now or timezone.now()
    check_procurator(game, acting_user)
    game = Game.objects.get(pk=game.pk)
    plan = _daily_day(game, day)
    if plan.post_id is not None:
        return plan.post
    record = daily_post_record(game, day, now)
    body = record.body + (f"\n\n{plan.free_text.strip()}" if plan.free_text.strip() else "")
    post = do_create_public_post(game, kind=PostKind.DAILY, title=record.title, body=body[:MAX_POST_LENGTH],
                                 acting_user=None, publish=False, now=now)
    post.publish_at = plan.starts_at
    post.save(update_fields=["publish_at"])
    plan.post = post
    plan.announced = record.announced
    plan.save(update_fields=["post", "announced"])
    record_event(game, "daily_post.drafted", actor=acting_user, at=now,
                 payload={"day": day, "post": post.pk, "announced": record.announced})
    return post


@transaction.atomic
def do_publish_daily_post(game: Game, day: int, *, acting_user=None, now: datetime | None = None) -> PublicPost:
    """Publish the daily post of game ``day`` at the day start (L-POST-2), drafting it first if the draft is
    missing, and announce the alignment of the dead it names (L-DEATH-2: ``alignment_announced``). Exactly once:
    a published post is returned as it is. Site (the ``day_start`` or ``daily_post_publish`` event) or the
    Procurator ("publish now", once the day has started: the site otherwise waits for the edit window).
    Raises ``NotAllowed``, ``InvalidInput`` (day < 2) or ``WrongState`` (day not planned or not started)."""
    now = now or timezone.now()
    check_procurator(game, acting_user)
    game = Game.objects.get(pk=game.pk)
    plan = _daily_day(game, day)
    if acting_user is not None and plan.started_at is None and game.status != GameStatus.FINISHED:
        raise WrongState(_("The daily post is published when day %(day)d starts.") % {"day": day}, rule="L-POST-2")
    post = plan.post if plan.post_id is not None else do_draft_daily_post(game, day, acting_user=acting_user, now=now)
    plan.refresh_from_db()
    post = PublicPost.objects.select_for_update().get(pk=post.pk)
    if post.published_at is None:
        post = do_publish_post(post, acting_user=acting_user, now=now)
    Resident.objects.filter(pk__in=plan.announced, alignment_announced=False).exclude(status="alive").update(
        alignment_announced=True)
    return post


def _editable_daily_post(post: PublicPost, acting_user) -> PublicPost:
    if acting_user is None:
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-POST-2")
    check_procurator(post.game, acting_user)
    post = PublicPost.objects.select_for_update(of=("self",)).select_related("game").get(pk=post.pk)
    if post.kind != PostKind.DAILY:
        raise InvalidInput(_("This is not a daily post."), rule="L-POST-2")
    return post


@transaction.atomic
def do_edit_daily_post(post: PublicPost, *, title: str, body: str, acting_user,
                       now: datetime | None = None) -> PublicPost:
    """The Procurator edits the drafted daily ``post`` before its publication (L-POST-2): new title and text
    (Markdown). Raises ``NotAllowed`` (not the Procurator), ``InvalidInput`` (empty, too long, not a daily post)
    or ``WrongState`` (published: append instead)."""
    now = now or timezone.now()
    post = _editable_daily_post(post, acting_user)
    if post.published_at is not None:
        raise WrongState(_("The daily post is published: you can only append to it now."), rule="L-POST-2")
    post.title = _clean_text(title, field=_("title"), max_length=200)
    post.body = _clean_text(body, field=_("text"), max_length=MAX_POST_LENGTH)
    post.body_html = render_markdown(post.body)
    post.save(update_fields=["title", "body", "body_html"])
    record_event(post.game, "daily_post.edited", actor=acting_user, at=now,
                 payload={"post": post.pk, "length": len(post.body)})
    return post


@transaction.atomic
def do_append_to_daily_post(post: PublicPost, text: str, *, acting_user, now: datetime | None = None) -> PublicPost:
    """The Procurator appends ``text`` (Markdown) to the published daily ``post`` (L-POST-2), under a line with
    the time in the game's zone. Raises ``NotAllowed``, ``InvalidInput`` (empty, too long) or ``WrongState``
    (not published yet: edit the draft instead)."""
    now = now or timezone.now()
    post = _editable_daily_post(post, acting_user)
    if post.published_at is None:
        raise WrongState(_("The daily post is not published yet: edit the draft instead."), rule="L-POST-2")
    text = _clean_text(text, field=_("text"), max_length=MAX_POST_LENGTH)
    with translation.override(post.game.language):
        heading = _("Added at %(time)s") % {"time": _local_time(post.game, now)}
    body = f"{post.body}\n\n---\n\n*{heading}*\n\n{text}"
    if len(body) > MAX_POST_LENGTH:
        raise InvalidInput(_("The daily post would become too long."), rule="L-POST-2")
    post.body = body
    post.body_html = render_markdown(body)
    post.save(update_fields=["body", "body_html"])
    record_event(post.game, "daily_post.appended", actor=acting_user, at=now,
                 payload={"post": post.pk, "length": len(text)})
    return post


@transaction.atomic
def do_set_daily_post_text(game: Game, day: int, text: str, *, acting_user, now: datetime | None = None):
    """The Procurator writes the free text (press, contests) of the daily post of game ``day`` before the site
    drafts it (L-POST-2); the draft appends it to the record. Empty text clears it. Returns the ``GameDay``.
    Raises ``NotAllowed``, ``InvalidInput`` (day < 2, too long) or ``WrongState`` (the draft exists: edit it)."""
    now = now or timezone.now()
    if acting_user is None:
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-POST-2")
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    _check_game_not_over(game)
    plan = _daily_day(game, day)
    if plan.post_id is not None:
        raise WrongState(_("The daily post is drafted already: edit the draft instead."), rule="L-POST-2")
    text = (text or "").strip()
    if len(text) > MAX_POST_LENGTH // 2:
        raise InvalidInput(_("The %(field)s is too long: %(length)d characters, at most %(max)d.")
                           % {"field": _("text"), "length": len(text), "max": MAX_POST_LENGTH // 2})
    plan.free_text = text
    plan.save(update_fields=["free_text"])
    record_event(game, "daily_post.text_set", actor=acting_user, at=now, payload={"day": day, "length": len(text)})
    return plan
