"""The game clock's engine (DESIGN.md "The clock").

Game time is data: ``ScheduledEvent`` rows. The beat tick calls ``dispatch_due_events``, which loops
``try_run_one_due_event``. Guarantees, whatever the tick timing: an event runs at most once (its handler's
changes and ``done_at`` commit in one transaction, and the row is locked with ``SELECT ... FOR UPDATE SKIP
LOCKED`` on PostgreSQL); it runs no earlier than ``due_at``; an event never runs while an earlier event of the
same game is pending (per-game order); a failing handler changes nothing, is retried with back-off and is
reported in the audit log and the log. Events of one kind due at the same planned time in one game (the judge
elections of every city) may run as one batch, in one transaction, with the outcome of running them one by one
(``BATCH_HANDLERS``).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from kernel.audit import record_events
from kernel.errors import NotAllowed, WrongState
from kernel.prepared import PreparedQuery, PreparedUpdate

from .models import ClockPause, Game, GameStatus, PublicPost, ScheduledEvent
from .services import check_procurator, do_publish_post, record_event
from .staff_kinds import host_label

logger = logging.getLogger(__name__)

#: The Celery task that runs ``dispatch_due_events`` (``mafia_site.tasks``; the beat schedules it by this name).
TICK_TASK = "mafia_site.tasks.dispatch_due_events"

Handler = Callable[[ScheduledEvent, datetime], str]

#: kind -> handler(event, now) -> a one-line description of what it did. Handlers run inside the transaction
#: that marks the event done; they change state only through services (``acting_user=None``).
HANDLERS: dict[str, Handler] = {}


#: kind -> precondition(event) -> None when the handler may run, else what it waits for. Checked before the handler,
#: whatever handler is registered: an unmet precondition makes the event wait (``Waits``), never run early.
PRECONDITIONS: dict[str, Callable[[ScheduledEvent], str | None]] = {}


def _night_started(event: ScheduledEvent) -> str | None:
    """``night_end`` {"night": n} runs only once night n has started (its day has ended): a night is never
    resolved before it starts, whatever moved the plan. A finished game's night never starts (a game won by day):
    its ``night_end`` does not wait, or it would hold back the final daily post's ``day_start`` behind it."""
    from .models import GameDay

    night = int(event.payload["night"])
    game = Game.objects.get(pk=event.game_id)
    if game.status != GameStatus.FINISHED and game.day_number == night and GameDay.objects.filter(
            game=event.game_id, number=night, ended_at__isnull=True).exists():
        return f"night {night} has not started yet"
    return None


PRECONDITIONS["night_end"] = _night_started


BatchHandler = Callable[[list[ScheduledEvent], datetime], list[str]]

#: kind -> (handler, batch handler(events, now) -> one description per event). Events of such a kind that fall
#: due at the same planned time, one after the other in their game's order (the judge elections of every city at
#: once), run together in one transaction (``try_run_one_due_event``); the batch handler must do exactly what
#: the handler would do for each event in turn. A kind is batched only while its registered handler is the one
#: the batch handler stands for, and never when it has a precondition.
BATCH_HANDLERS: dict[str, tuple[Handler, BatchHandler]] = {}


def handler(kind: str):
    """Register the decorated function as the handler of scheduled events of ``kind``."""
    def register(func: Handler) -> Handler:
        HANDLERS[kind] = func
        return func
    return register


def batch_handler(kind: str):
    """Register the decorated function as the batch handler of scheduled events of ``kind`` (``BATCH_HANDLERS``),
    standing for the kind's handler registered before it (``handler``), which still runs the events that run
    alone. Raises ``LookupError`` when ``kind`` has no handler yet."""
    def register(func: BatchHandler) -> BatchHandler:
        BATCH_HANDLERS[kind] = (HANDLERS[kind], func)
        return func
    return register


def _batch_handler_of(kind: str) -> BatchHandler | None:
    """The batch handler of ``kind`` while it stands for the kind's registered handler, else None."""
    single, batch = BATCH_HANDLERS.get(kind, (None, None))
    if batch is None or kind in PRECONDITIONS or HANDLERS.get(kind) is not single:
        return None
    return batch


@handler("publish_post")
def _publish_post(event: ScheduledEvent, now: datetime) -> str:
    """Publish the public post the Procurator scheduled. A post published by hand meanwhile is left."""
    post = PublicPost.objects.get(pk=event.payload["post"], game=event.game_id)
    try:
        do_publish_post(post, acting_user=None, now=now)
    except WrongState:
        return f"post {post.pk} was already published"
    return f"published post {post.pk}: {post.title}"


class Waits(Exception):
    """Raised by a handler whose preconditions are not met yet (the night it resolves has not started): nothing it
    did is kept, the event stays pending and is tried again at ``until`` (default: the next tick), and later
    events of its game wait behind it. ``str()`` says what it waits for (shown on the clock page)."""

    def __init__(self, reason: str, *, until: datetime | None = None) -> None:
        super().__init__(reason)
        self.until = until


@dataclass
class RunResult:
    """What one ``try_run_one_due_event`` call did: the event, whether it succeeded, and a description;
    ``batch``: the results of the events that ran with it in its transaction (``BATCH_HANDLERS``), in order."""

    event_id: int
    kind: str
    game_id: int
    ok: bool
    detail: str
    batch: tuple[RunResult, ...] = ()


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


#: The per-event statements of the dispatcher, compiled once per process (``kernel.prepared``): the earliest
#: runnable due event, locked skipping rows others hold (nothing runs while the clock is paused,
#: ``clock_paused``); an attempt recorded on it; the claimed row locked again to run it; the run marked done.
_CLAIMABLE = PreparedQuery(lambda now: _due_candidates(now).filter(~Exists(ClockPause.objects.all()))
                           .select_for_update(skip_locked=True, of=("self",)).select_related("game")[:1],
                           datetimes=("now",))
_RECORD_ATTEMPT = PreparedUpdate(lambda pk, attempts, now, retry_at: (
    _pending().filter(pk=pk), {"attempts": attempts, "started_at": now, "retry_at": retry_at}),
    ints=("pk", "attempts"), datetimes=("now", "retry_at"))
#: The claimed row is locked waiting, never skipped: another dispatcher's claim may hold it for an instant (its scan
#: locks the row, then finds it claimed and leaves it), and skipping would leave this claim unrun until its back-off.
_CLAIMED = PreparedQuery(lambda pk, claimed_at: _pending().filter(pk=pk, started_at=claimed_at)
                         .select_for_update(of=("self",)).select_related("game").order_by("pk")[:1],
                         ints=("pk",), datetimes=("claimed_at",))
_MARK_DONE = PreparedUpdate(lambda pk, claimed_at, now: (
    ScheduledEvent.objects.filter(pk=pk, done_at__isnull=True, started_at=claimed_at),
    {"done_at": now, "cancelled_at": None, "last_error": "", "retry_at": None, "started_at": None}),
    ints=("pk",), datetimes=("claimed_at", "now"))


def clock_paused() -> ClockPause | None:
    """The site's clock pause (``manage.py clock pause``), or None when the scheduler runs."""
    return ClockPause.objects.first()


def _crash_delay(attempts: int) -> timedelta:
    return timedelta(seconds=min(settings.MAFIA_EVENT_RETRY_MAX_SECONDS,
                                 settings.MAFIA_EVENT_CRASH_RETRY_SECONDS * 2 ** (attempts - 1)))


def _failure_delay(attempts: int) -> timedelta:
    return timedelta(seconds=min(settings.MAFIA_EVENT_RETRY_MAX_SECONDS, 30 * 2 ** (attempts - 1)))


#: ``last_error`` of an attempt that began and never finished.
CRASH_ERROR = "Crashed: the attempt started at {at} never finished (worker killed, time limit or connection lost)"


def _claim_one_due_event(given_now: datetime | None) -> tuple[ScheduledEvent, datetime] | None:
    """Record an attempt on the earliest runnable due event, in its own committed transaction (so that a crash
    of the handler leaves a trace): ``attempts`` + 1, ``started_at`` = now, and ``retry_at`` pushed by the crash
    back-off, so that no dispatcher takes it again before the handler had its chance. An attempt found still
    started (nobody holds the row: its worker died) is recorded as a crash first (``last_error``, a
    ``scheduler.event_crashed`` audit row). Returns the claimed event and the claim time, or None."""
    with transaction.atomic():
        # Read the clock once the transaction holds its locks (SQLite may wait for another dispatcher here),
        # so that times stamped by successive events never run backwards.
        now = given_now or timezone.now()
        found = _CLAIMABLE(now=now)
        if not found:
            return None
        event = found[0]
        attempts = event.attempts + 1
        changes = {"attempts": attempts, "started_at": now, "retry_at": now + _crash_delay(attempts)}
        if event.started_at is None:
            _RECORD_ATTEMPT(pk=event.pk, attempts=attempts, now=now, retry_at=changes["retry_at"])
        else:
            error = CRASH_ERROR.format(at=event.started_at.isoformat())
            changes["last_error"] = error
            record_event(event.game, "scheduler.event_crashed", actor=None, at=now,
                         payload={"event": event.pk, "kind": event.kind, "attempts": event.attempts,
                                  "started_at": event.started_at.isoformat()})
            logger.error("scheduled event %s (%s): %s", event.pk, event.kind, error)
            _pending().filter(pk=event.pk).update(**changes)
        for name, value in changes.items():
            setattr(event, name, value)
        event.companions = _claim_companions(event, now)  # read by try_run_one_due_event
        return event, now


def _claim_companions(event: ScheduledEvent, now: datetime) -> list[int]:
    """The ids of the events that run with ``event`` in one batch (``BATCH_HANDLERS``), their attempt recorded as
    ``event``'s is: the pending events of its game due at the same planned time that follow it in the game's
    order (due time, then id), as long as they are of its kind and never tried (a failed or crashed one runs
    alone, after its back-off, and so do the events behind it). Read once unlocked (the game's order as it
    stands), then locked skipping rows that others hold: the batch ends at the first row not obtained, so no
    event ever runs before an earlier one of its game. Empty for a kind without a batch handler."""
    if _batch_handler_of(event.kind) is None:
        return []
    following = (_pending().filter(game=event.game_id, due_at=event.due_at, id__gt=event.pk)
                 .order_by("id").values_list("id", "kind", "attempts", "started_at", "retry_at")
                 [:max(settings.MAFIA_DISPATCH_BATCH - 1, 0)])
    wanted = []
    for pk, kind, attempts, started_at, retry_at in following:
        if kind != event.kind or attempts or started_at is not None or retry_at is not None:
            break
        wanted.append(pk)
    if not wanted:
        return []
    locked = set(_pending().filter(pk__in=wanted, attempts=0, started_at__isnull=True, retry_at__isnull=True)
                 .select_for_update(skip_locked=True).values_list("id", flat=True))
    companions = []
    for pk in wanted:
        if pk not in locked:
            break
        companions.append(pk)
    if companions:
        _pending().filter(pk__in=companions).update(attempts=1, started_at=now, retry_at=now + _crash_delay(1))
    return companions


def _release_companions(ids: list[int], claimed_at: datetime) -> None:
    """Undo the claim of a batch's companions (``_claim_companions``): they are pending and never tried again,
    as before the claim, and run on their own later."""
    if ids:
        _pending().filter(pk__in=ids, started_at=claimed_at).update(attempts=0, started_at=None, retry_at=None)


def try_run_one_due_event(now: datetime | None = None) -> RunResult | None:
    """Run the earliest due event whose game has no earlier pending event; None when nothing is runnable (or the
    clock is paused).

    Two transactions. The first records the attempt (``_claim_one_due_event``) and commits, so that a worker
    killed in the handler, a dropped connection or a time limit leaves ``attempts``/``started_at`` behind: the
    clock page shows it, and the next attempt after the crash back-off records the crash. The second locks the
    row again (waiting out another dispatcher's claim; gone when another re-claimed it after its back-off), runs the handler in a savepoint with ``now``
    (aware UTC, captured once; cut-offs inside the handlers are the planned times, never ``now``) and marks the
    event done. On a handler error the savepoint rolls back, ``last_error``/``retry_at`` are recorded with a
    ``scheduler.event_failed`` audit row, and the result has ``ok=False``; the event is retried after
    ``retry_at`` and blocks later events of its game. An event of a kind with a batch handler runs with the
    events of its kind that follow it at the same planned time (``_claim_companions``, ``_run_batch``): their
    results are ``RunResult.batch``.
    """
    claimed = _claim_one_due_event(now)
    if claimed is None:
        return None
    event, claimed_at = claimed
    given_now = now
    with transaction.atomic():
        now = max(given_now or timezone.now(), claimed_at)
        found = _CLAIMED(pk=event.pk, claimed_at=claimed_at)
        locked = found[0] if found else None
        if locked is None:
            _release_companions(getattr(event, "companions", []), claimed_at)
            return RunResult(event.pk, event.kind, event.game_id, False, "already run by another dispatcher")
        companions, event = getattr(event, "companions", []), locked
        if companions:
            batch = _run_batch(event, companions, now, claimed_at)
            if batch is not None:
                return batch
        func = HANDLERS.get(event.kind)
        try:
            with transaction.atomic():
                if func is None:
                    raise LookupError(f"no handler for scheduled event kind {event.kind!r}")
                precondition = PRECONDITIONS.get(event.kind)
                unmet = precondition(event) if precondition is not None else None
                if unmet is not None:
                    raise Waits(unmet)
                # Site messages and refusals are in the game's language, whatever a previous request left active.
                with translation.override(event.game.language):
                    detail = func(event, now)
                # The conditional update is the last guard against a double run: if another dispatcher finished
                # this row meanwhile (possible on SQLite, which cannot lock rows), roll the handler back. A
                # cancellation seen here is the handler's own: a row cancelled by anyone else before the run is
                # neither claimed nor locked above (both read ``_pending()``), and the lock or SQLite's write lock
                # keeps others from cancelling it meanwhile. A handler that ends its game cancels the game's
                # pending events, this one among them, and the event still counts as run: done.
                done = _MARK_DONE(pk=event.pk, claimed_at=claimed_at, now=now)
                if done != 1:
                    raise _AlreadyDone()
                record_event(event.game, f"scheduler.{event.kind}", actor=None, at=now,
                             payload={"event": event.pk, "detail": detail})
        except _AlreadyDone:
            return RunResult(event.pk, event.kind, event.game_id, False, "already run by another dispatcher")
        except Waits as wait:
            until = wait.until or now + timedelta(seconds=settings.MAFIA_DISPATCH_INTERVAL_SECONDS)
            _pending().filter(pk=event.pk).update(last_error=f"Waits: {wait}"[:2000], started_at=None,
                                                 retry_at=max(until, now))
            record_event(event.game, "scheduler.event_waits", actor=None, at=now,
                         payload={"event": event.pk, "kind": event.kind, "reason": str(wait)[:500],
                                  "until": until.isoformat()})
            return RunResult(event.pk, event.kind, event.game_id, False, f"waits: {wait}")
        except Exception as exc:  # noqa: BLE001 - any handler failure is recorded, never half-applied
            attempts = event.attempts
            error = f"{type(exc).__name__}: {exc}"
            _pending().filter(pk=event.pk).update(last_error=error[:2000], started_at=None,
                                                 retry_at=now + _failure_delay(attempts))
            record_event(event.game, "scheduler.event_failed", actor=None, at=now,
                         payload={"event": event.pk, "kind": event.kind, "attempts": attempts, "error": error[:500]})
            logger.error("scheduled event %s (%s) failed, attempt %s: %s", event.pk, event.kind, attempts, error)
            return RunResult(event.pk, event.kind, event.game_id, False, error)
        return RunResult(event.pk, event.kind, event.game_id, True, detail)


class _AlreadyDone(Exception):
    """Another dispatcher marked the event done while this one ran it."""


def _run_batch(event: ScheduledEvent, companion_ids: list[int], now: datetime,
               claimed_at: datetime) -> RunResult | None:
    """Run ``event`` (locked) and the companions claimed with it (``_claim_companions``) in one savepoint of the
    caller's transaction through the kind's batch handler, mark them all done and audit each as a lone run is
    audited (``scheduler.<kind>``, its own detail; the handler's own rows come first). The batch ends at the first
    companion not locked here. Returns the result (``RunResult.batch``: the companions'), or None when the batch
    did not run: it failed (rolled back whole, logged), or no companion was left; the companions are then
    released, pending as before, and the caller runs ``event`` alone, so that a failure is ``event``'s own or
    is met again when the failing event's turn comes (every outcome is that of the events run one by one)."""
    batch_handler = _batch_handler_of(event.kind)
    rows = {} if batch_handler is None else {
        e.pk: e for e in _pending().filter(pk__in=companion_ids, started_at=claimed_at)
        .select_for_update(skip_locked=True, of=("self",))}
    companions = []
    for pk in companion_ids:
        if pk not in rows:
            break
        companions.append(rows[pk])
    _release_companions(companion_ids[len(companions):], claimed_at)
    if not companions:
        return None
    events = [event, *companions]
    for companion in companions:
        companion.game = event.game  # one game: its row is read once
    try:
        with transaction.atomic():
            with translation.override(event.game.language):
                details = batch_handler(events, now)
            if len(details) != len(events):
                raise LookupError(f"the batch handler of {event.kind!r} described {len(details)} of {len(events)} "
                                  "events")
            # As in a lone run, a cancellation of ``event`` seen here is its handler's own; a companion cancelled
            # meanwhile (a handler that ended the game) would never have run alone: the batch is not kept.
            done = ScheduledEvent.objects.filter(
                Q(pk=event.pk) | Q(cancelled_at__isnull=True), pk__in=[e.pk for e in events], done_at__isnull=True,
                started_at=claimed_at,
            ).update(done_at=now, cancelled_at=None, last_error="", retry_at=None, started_at=None)
            if done != len(events):
                raise _AlreadyDone()
            record_events(event.game, [(f"scheduler.{event.kind}", {"event": e.pk, "detail": detail})
                                       for e, detail in zip(events, details, strict=True)], actor=None, at=now)
    except Exception as exc:  # noqa: BLE001 - the events then run one by one, where a failure is recorded
        logger.warning("batch of %s scheduled events %s (%s) not run together, run one by one: %s: %s",
                       len(events), event.pk, event.kind, type(exc).__name__, exc)
        _release_companions([c.pk for c in companions], claimed_at)
        return None
    results = [RunResult(e.pk, e.kind, e.game_id, True, detail) for e, detail in zip(events, details, strict=True)]
    return RunResult(event.pk, event.kind, event.game_id, True, details[0], batch=tuple(results[1:]))


#: The session settings of a clock tick (``clock_session_limits``) and the settings that give them, in ms.
CLOCK_SESSION_LIMITS = (("lock_timeout", "MAFIA_CLOCK_LOCK_TIMEOUT_MS"),
                        ("statement_timeout", "MAFIA_CLOCK_STATEMENT_TIMEOUT_MS"),
                        ("idle_in_transaction_session_timeout", "MAFIA_CLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS"))


@contextmanager
def clock_session_limits() -> Iterator[None]:
    """Within the block, this process's PostgreSQL session runs with the clock's own bounds (``MAFIA_CLOCK_*``
    settings, ms): a handler waits at most ``MAFIA_CLOCK_LOCK_TIMEOUT_MS`` for a row another transaction holds
    (then it fails like any handler error: recorded, retried after its back-off, the later events of its game
    waiting), a statement runs at most ``MAFIA_CLOCK_STATEMENT_TIMEOUT_MS`` and a transaction left idle
    ``MAFIA_CLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS`` ends the session (the attempt recorded before the handler then
    shows a crash): a hung handler never keeps its locks, nor the other games' events, for long. Afterwards the
    session's own settings (``DATABASE_*_TIMEOUT_MS``) are back. One statement on entry, one on exit; nothing on
    SQLite (no row locks, no such settings)."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join("set_config(%s, %s, false)" for _ in CLOCK_SESSION_LIMITS),
                       [value for name, setting in CLOCK_SESSION_LIMITS
                        for value in (name, f"{int(getattr(settings, setting))}ms")])
    try:
        yield
    finally:
        # A session ended by a timeout, or a transaction the tick's caller left broken, has nothing to reset (a new
        # connection starts with the site's settings).
        if connection.connection is not None and not connection.needs_rollback:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("; ".join(f"RESET {name}" for name, _setting in CLOCK_SESSION_LIMITS))
            except DatabaseError as exc:
                logger.warning("could not reset the clock's session limits, closing the connection: %s", exc)
                if not connection.in_atomic_block:
                    connection.close()


def dispatch_due_events(now: datetime | None = None, *, limit: int | None = None) -> int:
    """Run due events one by one until none is runnable or ``limit`` (default ``MAFIA_DISPATCH_BATCH``) ran.

    Each event gets a fresh ``now`` unless one is given. Returns how many events ran successfully (0 while the
    clock is paused). A lost database connection ends the tick (the claimed attempt stays recorded and is
    retried after the crash back-off); the connection is closed so that the next tick opens a fresh one."""
    limit = limit or settings.MAFIA_DISPATCH_BATCH
    done = 0
    failed_ids: set[int] = set()
    for _step in range(limit):
        try:
            result = try_run_one_due_event(now)
        except (InterfaceError, OperationalError) as exc:
            logger.error("scheduler tick stopped: database unavailable: %s", exc)
            if not connection.in_atomic_block:
                connection.close()
            break
        if result is None:
            break
        if result.ok:
            done += 1 + len(result.batch)
        elif result.event_id in failed_ids:
            break
        else:
            failed_ids.add(result.event_id)
    return done


# ----------------------------------------------------------------------------------------------------------------
# Staff actions on the clock: retry now, pause and resume (DESIGN.md "The clock")
# ----------------------------------------------------------------------------------------------------------------

@transaction.atomic
def do_retry_scheduled_event(event: ScheduledEvent, *, acting_user, now: datetime | None = None) -> ScheduledEvent:
    """The Procurator asks for a failing or crashed ``event`` to be tried again at once instead of after its
    back-off: ``retry_at`` becomes ``now`` and a tick is queued after the commit. Returns the event. Raises
    ``NotAllowed`` (not the game's Procurator) or ``WrongState`` (done, cancelled, never tried, or not due)."""

    now = now or timezone.now()
    if acting_user is None:
        raise NotAllowed(_("Only the %(host)s of this game may do this.") % {"host": host_label(event.game)})
    event = ScheduledEvent.objects.select_for_update(of=("self",)).select_related("game").get(pk=event.pk)
    check_procurator(event.game, acting_user)
    if event.done_at is not None or event.cancelled_at is not None:
        raise WrongState(_("This event is no longer pending."))
    if event.attempts == 0 or event.due_at > now:
        raise WrongState(_("This event has not failed: it runs at its time."))
    ScheduledEvent.objects.filter(pk=event.pk).update(retry_at=now)
    event.retry_at = now
    record_event(event.game, "scheduler.retry_requested", actor=acting_user, at=now,
                 payload={"event": event.pk, "kind": event.kind, "attempts": event.attempts})
    transaction.on_commit(_queue_tick)
    return event


def _queue_tick() -> None:
    """Ask the worker for a tick now (best effort: the beat's next tick comes anyway)."""
    try:
        # By name: the task module (an interface, mafia_site.tasks) imports this engine, not the other way round.
        current_app.send_task(TICK_TASK, expires=settings.MAFIA_DISPATCH_TICK_EXPIRES_SECONDS)
    except Exception as exc:  # noqa: BLE001 - a broker outage must not fail the staff action
        logger.warning("could not queue a scheduler tick: %s", exc)


def do_pause_clock(*, reason: str = "", now: datetime | None = None) -> ClockPause:
    """Pause the site's scheduler (``manage.py clock pause``; an operator action, not a game's): no event runs
    until ``do_resume_clock``; a running handler finishes. Pages say the clock is paused. Idempotent. Audited in
    every running game. Returns the pause."""
    now = now or timezone.now()
    with transaction.atomic():
        pause, created = ClockPause.objects.get_or_create(key="site", defaults={"paused_at": now,
                                                                                "reason": reason[:200]})
        if created:
            for game in Game.objects.exclude(status=GameStatus.FINISHED).order_by("pk"):
                record_event(game, "clock.paused", actor=None, at=now, payload={"reason": reason[:200]})
    return pause


def do_resume_clock(*, now: datetime | None = None) -> bool:
    """Resume the site's scheduler: due events run at the next tick, in order, with their planned cut-offs.
    Returns False when it was not paused. Audited in every running game."""
    now = now or timezone.now()
    with transaction.atomic():
        pause = ClockPause.objects.select_for_update().first()
        if pause is None:
            return False
        for game in Game.objects.exclude(status=GameStatus.FINISHED).order_by("pk"):
            record_event(game, "clock.resumed", actor=None, at=now,
                         payload={"paused_at": pause.paused_at.isoformat()})
        ClockPause.objects.filter(pk=pause.pk).delete()
    return True


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
            for _step in range(limit):
                result = try_run_one_due_event(now)
                if result is None or (not result.ok and any(r.event_id == result.event_id for r in results)):
                    break
                results.extend((result, *result.batch))
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
    for _step in range(max_steps):
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
