"""The game clock's engine (DESIGN.md "The clock").

Game time is data: ``ScheduledEvent`` rows. The beat tick calls ``dispatch_due_events``, which loops
``try_run_one_due_event``. Guarantees, whatever the tick timing: an event runs at most once (its handler's
changes and ``done_at`` commit in one transaction, and the row is locked with ``SELECT ... FOR UPDATE SKIP
LOCKED`` on PostgreSQL); it runs no earlier than ``due_at``; an event never runs while an earlier event of the
same game is pending (per-game order); a failing handler changes nothing, is retried with back-off and is
reported in the audit log and the log.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone, translation

from .errors import WrongState
from .models import Game, GameStatus, PublicPost, ScheduledEvent
from .services import (
    do_begin_day,
    do_begin_night,
    do_draft_daily_post,
    do_publish_post,
    pending_day_deadline,
    record_event,
)

logger = logging.getLogger(__name__)

Handler = Callable[[ScheduledEvent, datetime], str]

#: kind -> handler(event, now) -> a one-line description of what it did. Handlers run inside the transaction
#: that marks the event done; they change state only through services (``acting_user=None``).
HANDLERS: dict[str, Handler] = {}


def handler(kind: str):
    """Register the decorated function as the handler of scheduled events of ``kind``."""
    def register(func: Handler) -> Handler:
        HANDLERS[kind] = func
        return func
    return register


@handler("publish_post")
def _publish_post(event: ScheduledEvent, now: datetime) -> str:
    """Publish the public post the Procurator scheduled (L-POST). A post published by hand meanwhile is left."""
    post = PublicPost.objects.get(pk=event.payload["post"], game=event.game_id)
    try:
        do_publish_post(post, acting_user=None, now=now)
    except WrongState:
        return f"post {post.pk} was already published"
    return f"published post {post.pk}: {post.title}"


# ----------------------------------------------------------------------------------------------------------------
# The phase plan's events (issue 6; see the comment above ``cities.services.CLOCK_EVENT_KINDS``). ``night_end`` is
# the night resolution's, registered by ``roles``.
# ----------------------------------------------------------------------------------------------------------------

@handler("day_start")
def _day_start(event: ScheduledEvent, now: datetime) -> str:
    """Start game day ``payload["day"]`` (L-DAY-1, L-POST-2): ``cities.services.do_begin_day``. A day that
    already started is left as it is (a repeated or duplicated event changes nothing)."""
    day = event.payload["day"]
    try:
        plan = do_begin_day(event.game, day, acting_user=None, now=now)
    except WrongState as exc:
        return f"day {day} not started: {exc}"
    if event.game.status == GameStatus.FINISHED:
        return f"game over: daily post of day {day} published"
    return f"day {day} started; its night resolves at {plan.night_ends_at.isoformat()}"


@handler("night_start")
def _night_start(event: ScheduledEvent, now: datetime) -> str:
    """Close game day ``payload["day"]`` (L-DAY-3): ``cities.services.do_begin_night``. While a voting or court
    deadline of that day is still pending at or after this event's due time (a court deadline past 00:00, a
    voting moved late), the night waits: a new ``night_start`` is laid out at that deadline, created after it so
    that the per-game (due_at, id) order runs it afterwards."""
    day = event.payload["day"]
    game = Game.objects.get(pk=event.game_id)
    if game.status == GameStatus.FINISHED:
        return "game over"
    later = pending_day_deadline(game, event.due_at, day)
    if later is not None:
        ScheduledEvent.objects.create(game=game, kind="night_start", due_at=max(later, event.due_at),
                                      payload={"day": day}, created_at=now)
        return f"night {day} waits for the deadline at {later.isoformat()}"
    try:
        do_begin_night(game, day, acting_user=None, now=now)
    except WrongState as exc:
        return f"night {day} not started: {exc}"
    return f"night {day} started"


@handler("daily_post_draft")
def _daily_post_draft(event: ScheduledEvent, now: datetime) -> str:
    """Draft the daily post of game day ``payload["day"]`` after the night's resolution (L-POST-2):
    ``cities.services.do_draft_daily_post`` (an existing draft is kept)."""
    day = event.payload["day"]
    post = do_draft_daily_post(event.game, day, acting_user=None, now=now)
    return f"daily post of day {day} drafted: post {post.pk}"


@dataclass
class RunResult:
    """What one ``try_run_one_due_event`` call did: the event, whether it succeeded, and a description."""

    event_id: int
    kind: str
    game_id: int
    ok: bool
    detail: str


def _pending():
    return ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True)


def _due_candidates(now: datetime):
    earlier_pending = _pending().filter(game=OuterRef("game")).filter(
        Q(due_at__lt=OuterRef("due_at")) | Q(due_at=OuterRef("due_at"), id__lt=OuterRef("id"))
    )
    return (
        _pending()
        .filter(due_at__lte=now)
        .filter(Q(retry_at__isnull=True) | Q(retry_at__lte=now))
        .filter(~Exists(earlier_pending))
        .order_by("due_at", "id")
    )


def try_run_one_due_event(now: datetime | None = None) -> RunResult | None:
    """Run the earliest due event whose game has no earlier pending event; None when nothing is runnable.

    ``now`` (aware UTC) is captured once and given to the handler. One transaction: lock the row (skipping rows
    another dispatcher holds), run the handler in a savepoint, mark done. On a handler error the savepoint rolls
    back, ``attempts``/``last_error``/``retry_at`` are recorded with a ``scheduler.event_failed`` audit row, and
    the result has ``ok=False``; the event is retried after ``retry_at`` and blocks later events of its game.
    """
    given_now = now
    with transaction.atomic():
        # Read the clock once the transaction holds its locks (SQLite may wait for another dispatcher here),
        # so that times stamped by successive events never run backwards.
        now = given_now or timezone.now()
        event = (
            _due_candidates(now)
            .select_for_update(skip_locked=True, of=("self",))
            .select_related("game")
            .first()
        )
        if event is None:
            return None
        func = HANDLERS.get(event.kind)
        try:
            with transaction.atomic():
                if func is None:
                    raise LookupError(f"no handler for scheduled event kind {event.kind!r}")
                # Site messages and refusals are in the game's language, whatever a previous request left active.
                with translation.override(event.game.language):
                    detail = func(event, now)
                # The conditional update is the last guard against a double run: if another dispatcher finished
                # this row meanwhile (possible on SQLite, which cannot lock rows), roll the handler back.
                claimed = _pending().filter(pk=event.pk).update(
                    done_at=now, last_error="", retry_at=None, attempts=event.attempts + 1)
                if claimed != 1:
                    raise _AlreadyDone()
                record_event(event.game, f"scheduler.{event.kind}", actor=None, at=now,
                             payload={"event": event.pk, "detail": detail})
        except _AlreadyDone:
            return RunResult(event.pk, event.kind, event.game_id, False, "already run by another dispatcher")
        except Exception as exc:  # noqa: BLE001 - any handler failure is recorded, never half-applied
            attempts = event.attempts + 1
            delay = min(settings.MAFIA_EVENT_RETRY_MAX_SECONDS, 30 * 2 ** (attempts - 1))
            error = f"{type(exc).__name__}: {exc}"
            _pending().filter(pk=event.pk).update(attempts=attempts, last_error=error[:2000],
                                                 retry_at=now + timedelta(seconds=delay))
            record_event(event.game, "scheduler.event_failed", actor=None, at=now,
                         payload={"event": event.pk, "kind": event.kind, "attempts": attempts, "error": error[:500]})
            logger.error("scheduled event %s (%s) failed, attempt %s: %s", event.pk, event.kind, attempts, error)
            return RunResult(event.pk, event.kind, event.game_id, False, error)
        return RunResult(event.pk, event.kind, event.game_id, True, detail)


class _AlreadyDone(Exception):
    """Another dispatcher marked the event done while this one ran it."""


def dispatch_due_events(now: datetime | None = None, *, limit: int | None = None) -> int:
    """Run due events one by one until none is runnable or ``limit`` (default ``MAFIA_DISPATCH_BATCH``) ran.

    Each event gets a fresh ``now`` unless one is given. Returns how many events ran successfully.
    """
    limit = limit or settings.MAFIA_DISPATCH_BATCH
    done = 0
    failed_ids: set[int] = set()
    for _ in range(limit):
        result = try_run_one_due_event(now)
        if result is None:
            break
        if result.ok:
            done += 1
        elif result.event_id in failed_ids:
            break
        else:
            failed_ids.add(result.event_id)
    return done


class _Rollback(Exception):
    """Raised to roll a preview back."""


def preview_due_events(now: datetime | None = None, *, limit: int | None = None) -> list[RunResult]:
    """What ``dispatch_due_events(now)`` would do, without changing anything (``run_due_events --dry-run``).

    Runs the real handlers inside one transaction and rolls it all back, so the preview shows real outcomes
    (including failures) in the real order. Returns the RunResults in run order.
    """
    now = now or timezone.now()
    limit = limit or settings.MAFIA_DISPATCH_BATCH
    results: list[RunResult] = []
    try:
        with transaction.atomic():
            for _ in range(limit):
                result = try_run_one_due_event(now)
                if result is None or (not result.ok and any(r.event_id == result.event_id for r in results)):
                    break
                results.append(result)
            raise _Rollback()
    except _Rollback:
        pass
    return results


def advance_clock(until: datetime, *, game=None, max_steps: int = 10_000) -> int:
    """Run the plan up to ``until`` (aware UTC) as a beat that never misses a tick would: dispatch at each pending
    event's due time (or retry time) in order, so every handler sees ``now`` = its own due time; then at ``until``.
    ``game`` narrows the look-ahead to one game (events of other games due meanwhile run too, at the same ticks).
    For simulations and tests (``time_machine`` not needed: ``now`` is passed down). Returns how many events ran.
    A failing event stops the advance once its retry time is past ``until``."""
    total = 0
    last_tick = None
    for _ in range(max_steps):
        events = _pending().filter(due_at__lte=until)
        if game is not None:
            events = events.filter(game=game)
        ticks = [max(due, retry or due) for due, retry in events.values_list("due_at", "retry_at")]
        tick = min((t for t in ticks if t <= until), default=None)
        if tick is None or tick == last_tick:
            break
        total += dispatch_due_events(now=tick)
        last_tick = tick
    return total + dispatch_due_events(now=until)
