"""The days of an M21 game (RULES.md M-VOTE-1..9, M-SETUP-3, M-ROLE judge): starting a day, re-deriving it from the
game thread's posts and the day's orders (``rulesets.m21.day.run_m21_day``), the receipts of posts, the hammer, the
deadline at its planned time, the tie waiting for the Judge's casting vote, the Judge's two powers, and what a
decided day does (imprisonment, the spectators' thread, the must-vote list, the night on the clock).

A post received after the deadline carries no vote however late the clock runs: the deadline is the day's planned
time."""
from __future__ import annotations

import re
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from cities.models import (
    Game,
    GameEvent,
    GameStatus,
    LifeStatus,
    Resident,
    ScheduledEvent,
)
from cities.services import record_event
from inboxes import policies, viewer_reads
from inboxes.models import Inbox, Membership, MembershipState, Message, MessageRevision
from rulesets.m21.kinds import M21InboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from voting.forum_vote import (
    FORUM_NO_LYNCH,
    ForumDayEndHow,
    ForumPost,
    ForumRemoval,
    ForumRemovalCause,
    ForumReplacement,
    ForumSeat,
)
from voting.parsing import parse_forum_post

from .day import DayState, DeadlinePasses, JudgeCasts, JudgeCloses, M21DayOutcome, M21DayRun, vote_count_text
from .flips import flip_text
from .game_end import _finish_if_won
from .models import DayStatus, M21Day, M21DayOrder, M21PostReceipt, M21Seat, OrderKind
from .roles import CASTING_VOTE_WINDOW_MINUTES
from .service_common import (
    M21Refusal,
    _check_host,
    _check_m21,
    _wall,
    phase_end,
    site_message,
    start_night,
    thread_of,
    vote_rules,
)

#: M-VOTE-5's offences in words, for the host's must-vote list.
OFFENCE_WORDS = {"no_vote_at_end": "no vote in place at the end", "never_voted": "never voted",
                 "fewer_than_two_posts": "fewer than two posts"}


def open_day(game: Game, *, lock: bool = False) -> M21Day | None:
    """The game's day that is open or waiting for the Judge's casting vote, or None (night, not started, over)."""
    qs = M21Day.objects.filter(game=game, status__in=(DayStatus.OPEN, DayStatus.AWAITING_CASTING_VOTE))
    if lock:
        qs = qs.select_for_update()
    return qs.order_by("-number").first()


def current_day(game: Game) -> M21Day | None:
    """The game's latest day, whatever its state."""
    return M21Day.objects.filter(game=game).order_by("-number").first()


@transaction.atomic
def do_start_m21_day(game: Game, number: int, *, planned_at: datetime, acting_user=None,
                     now: datetime | None = None) -> M21Day:
    """Start day ``number`` at its planned time ``planned_at`` (M-SETUP-2): the deadline is the phase shift nearest
    ``day_hours`` after ``planned_at`` (``phase_end``); the clock gets ``m21_day_deadline`` at that time; the game thread
    announces it. By the site (the clock) or a host. Raises ``WrongState`` for a day that exists or a game that
    is not running."""
    now = now or timezone.now()
    settings = _check_m21(game)
    _check_host(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status != GameStatus.RUNNING:
        raise WrongState("The game is not running.")
    if M21Day.objects.filter(game=game, number=number).exists() or open_day(game) is not None:
        raise WrongState(f"Day {number} has already started.")
    thread = thread_of(game)
    deadline = phase_end(planned_at, settings.day_hours, game.time_zone, settings.phase_shift)
    day = M21Day.objects.create(game=game, number=number, thread=thread, starts_at=planned_at, deadline=deadline)
    _store_run(day, _start_run(day)[0])
    game.day_number = number
    game.save(update_fields=["day_number"])
    ScheduledEvent.objects.create(game=game, kind="m21_day_deadline", due_at=deadline,
                                  payload={"day": number}, created_at=now, created_by=acting_user)
    site_message(thread, f"**Day {number} has begun.** It ends at the deadline, "
                          f"{_wall(deadline, game)}, unless the hammer falls first.", max(now, planned_at))
    record_event(game, "m21.day_started", actor=acting_user, at=now,
                 payload={"day": number, "starts_at": planned_at.isoformat(), "deadline": deadline.isoformat()})
    return day



def _seat_names(day: M21Day) -> dict[int, str]:
    """Resident id -> the seat's label for the day: its name when the day began (a replacement keeps the label
    and adds the new name, L-REPLACE-1)."""
    names = {}
    for order in day.orders.filter(kind=OrderKind.REPLACEMENT).order_by("at", "id"):
        names.setdefault(order.seat_id, order.payload["old_name"])
    return names


def _seats_at_start(day: M21Day, residents: list[Resident]) -> tuple[dict[int, str], dict[int, int]]:
    """Resident id -> the seat's name and account when ``day`` began: every replacement since (the day's own
    orders, and the audit log's later ones) undone, newest first (L-REPLACE-1)."""
    label, account = {r.pk: r.name for r in residents}, {r.pk: r.user_id for r in residents}
    rows = [(order.at, order.pk, order.seat_id, order.payload)
            for order in day.orders.filter(kind=OrderKind.REPLACEMENT, at=day.starts_at)]
    rows += [(event.at, event.pk, event.payload["resident"], event.payload)
             for event in GameEvent.objects.filter(game=day.game, kind="resident.replaced", at__gt=day.starts_at)]
    for _at, _pk, seat, payload in sorted(rows, key=lambda row: (row[0], row[1]), reverse=True):
        label[seat], account[seat] = payload["old_name"], payload["old_user"]
    return label, account


def _start_run(day: M21Day) -> tuple[M21DayRun, dict[int, str]]:
    """A new run of ``day`` over the residents living when it began (those removed or imprisoned this day
    included), with the Judge's power as it was at its start, and the seats' labels (resident id -> label)."""
    game = day.game
    removed_today = set(day.orders.filter(kind=OrderKind.REMOVAL).values_list("seat_id", flat=True))
    residents = list(Resident.objects.filter(game=game).select_related("m21_seat").order_by("id"))
    label, account = _seats_at_start(day, residents)
    # Alive now, or gone after the day's start (a night's deaths are at the night's planned end, the next day's
    # start, so a past day is read with the seats it had).
    living_at_start = [r for r in residents if r.status == LifeStatus.ALIVE or r.pk in removed_today
                       or day.imprisoned_id == r.pk or (r.died_at is not None and r.died_at > day.starts_at)]
    seats = [ForumSeat(seat=label[r.pk], account=f"u{account[r.pk]}") for r in living_at_start]
    judge = next((r for r in living_at_start if r.m21_seat.role == "judge"), None)
    judge_power_left = bool(judge and judge.m21_seat.state.get("judge_power_left", 0) > 0) or (
        judge is not None and day.result is not None and day.result.get("judge_power") is not None)
    run = M21DayRun(vote_rules(game.m21), seats, judge=label[judge.pk] if judge else None,
                    judge_power_left=judge_power_left)
    return run, label


def original_texts(messages: list[Message]) -> dict[int, str]:
    """Message id -> the text as first posted, for the edited ones among ``messages``: an edit never changes what
    a post's commands did (M-VOTE-1, M-VOTE-7; the receipt shows it)."""
    originals: dict[int, str] = {}
    for message_id, body in (MessageRevision.objects.filter(message__in=[m.pk for m in messages if m.edited_at])
                             .order_by("replaced_at", "id").values_list("message_id", "body")):
        originals.setdefault(message_id, body)
    return originals


def recount_day(day: M21Day) -> tuple[M21DayRun, dict[int, int]]:
    """Re-derive ``day`` from the records alone: the game thread's posts by players from the day's start, as
    first posted, and the day's orders, in receive order (an order before a post of the same instant), the
    deadline passing at its planned time. The audit of the stored ``tally`` (``audit_m21_day``), the archive's
    reading and the start of a day stored before tallies were. Returns the run and seq -> message id."""
    run, label = _start_run(day)
    events: list[tuple[datetime, int, int, object]] = []  # (at, order of kind, id, record builder input)
    messages = list(Message.objects.filter(inbox=day.thread, received_at__gte=day.starts_at,
                                           author_resident__isnull=False).order_by("received_at", "id"))
    originals = original_texts(messages)
    for message in messages:
        events.append((message.received_at, 1, message.pk, message))
    for order in day.orders.all():
        events.append((order.at, 0, order.pk, order))
    events.sort(key=lambda item: (item[0], item[1], item[2]))
    message_at_seq = {}
    for at, _kind, _pk, item in events:
        if not run.deadline_passed and at > day.deadline:
            run.apply(DeadlinePasses(seq=run.next_seq()))
        if isinstance(item, Message):
            seq = run.next_seq()
            run.apply(ForumPost(seq=seq, author=f"u{item.author_user_id}", text=originals.get(item.pk, item.body)))
            message_at_seq[seq] = item.pk
        else:
            run.apply(_order_record(item, label, run.next_seq()))
    return run, message_at_seq


def _order_record(order: M21DayOrder, label: dict[int, str], seq: int):
    """The day record of a host's or the Judge's order (``label``: resident id -> the seat's label)."""
    if order.kind == OrderKind.REMOVAL:
        cause = ForumRemovalCause(order.payload.get("cause", ForumRemovalCause.REMOVED))
        return ForumRemoval(seq=seq, seat=label[order.seat_id], cause=cause)
    if order.kind == OrderKind.REPLACEMENT:
        return ForumReplacement(seq=seq, seat=label[order.seat_id], account=f"u{order.payload['new_user']}",
                                names=(order.payload["new_name"],))
    if order.kind == OrderKind.CLOSE_PROCEEDINGS:
        return JudgeCloses(seq=seq, judge=label[order.seat_id])
    target = FORUM_NO_LYNCH if order.no_lynch else label[order.target_id]
    return JudgeCasts(seq=seq, judge=label[order.seat_id], target=target)


def stored_run(day: M21Day) -> M21DayRun:
    """The day's vote as stored (``M21Day.tally``), or, for a day stored before it had one, recounted."""
    if day.tally is not None:
        return M21DayRun.restore(vote_rules(day.game.m21), day.tally)
    return recount_day(day)[0]


def _store_run(day: M21Day, run: M21DayRun) -> None:
    day.tally = run.snapshot()
    day.save(update_fields=["tally"])


def apply_day_order(day: M21Day, order: M21DayOrder) -> M21DayRun:
    """Apply a just-created order of ``day`` (locked by the caller) to its stored vote, in the order's
    transaction, and store it (M-VOTE-9 deaths and removals, L-REPLACE-1, the Judge's powers). Returns the run."""
    run = stored_run(day)
    if not run.deadline_passed and order.at > day.deadline:
        run.apply(DeadlinePasses(seq=run.next_seq()))
    label, _ = _seats_at_start(day, list(Resident.objects.filter(
        pk__in=[pk for pk in (order.seat_id, order.target_id) if pk])))
    run.apply(_order_record(order, label, run.next_seq()))
    _store_run(day, run)
    return run


def _casting_window_over(day: M21Day, now: datetime) -> bool:
    return day.casting_window_ends_at is not None and now >= day.casting_window_ends_at


def day_outcome(day: M21Day, *, now: datetime, casting_window_over: bool | None = None) -> M21DayOutcome:
    """``day`` as it stands at ``now`` (aware), read from its stored vote (no post is read): the deadline passed
    at its planned time (M-VOTE-4), the casting window over at its end. The stored row is not changed."""
    if casting_window_over is None:
        casting_window_over = _casting_window_over(day, now)
    return stored_run(day).outcome(deadline_reached=now >= day.deadline, casting_window_over=casting_window_over)


def audit_m21_day(day: M21Day, *, now: datetime) -> list[str]:
    """Compare the stored vote of ``day`` with a recount from its posts and orders (``recount_day``), both seen
    at ``now``: the differences as sentences (empty: they agree). Record counters are left out (a post after
    the end changes nothing else)."""
    stored = stored_run(day)
    recounted, _ = recount_day(day)
    for run in (stored, recounted):
        run.outcome(deadline_reached=now >= day.deadline)
    a, b = stored.snapshot(), recounted.snapshot()
    for data in (a, b):
        data.pop("seq")
        data["forum"].pop("last_seq")
    forum_a, forum_b = a.pop("forum"), b.pop("forum")
    return ([f"{key}: stored {forum_a[key]!r}, recounted {forum_b[key]!r}"
             for key in sorted(forum_a) if forum_a[key] != forum_b[key]]
            + [f"{key}: stored {a[key]!r}, recounted {b[key]!r}" for key in sorted(a) if a[key] != b[key]])


def _label_to_resident(day: M21Day) -> dict[str, Resident]:
    names = _seat_names(day)
    return {names.get(r.pk, r.name): r for r in Resident.objects.filter(game=day.game)}


def _receipt_lines(receipts) -> list[dict]:
    return [{"command": r.command.written, "accepted": r.accepted, "message": r.message,
             "candidates": list(r.candidates)} for r in receipts]


def record_game_thread_post(inbox: Inbox, seat: Resident | None, message: Message, now: datetime) -> M21PostReceipt | None:
    """Index a post just stored in an M21 game thread (the game thread's post hook; runs in the post's
    transaction, the open day's row locked): apply it to the day's stored vote (its commands in the order
    written, M-VOTE-7; a post counts towards M-VOTE-5 with or without commands), store the post's receipt
    (M-VOTE-1: what each command did or why it was refused) and, when it hammers (M-VOTE-3), end the day at once.
    Posts by the hosts carry no votes. Returns the receipt, or None for a post without commands or by a host."""
    if seat is None:
        return None
    commands = parse_forum_post(message.body)
    day = open_day(inbox.game, lock=True)
    if (day is None or day.thread_id != inbox.pk or day.status != DayStatus.OPEN
            or message.received_at < day.starts_at):
        last = current_day(inbox.game)
        if last is None or not commands:
            return None
        lines = [{"command": c.written, "accepted": False, "message": "No day is open: this carries no vote.",
                  "candidates": []} for c in commands]
        return M21PostReceipt.objects.create(message=message, day=last, lines=lines)
    run = stored_run(day)
    if not run.deadline_passed and message.received_at > day.deadline:
        run.apply(DeadlinePasses(seq=run.next_seq()))
    receipts = run.apply(ForumPost(seq=run.next_seq(), author=f"u{message.author_user_id}", text=message.body))
    outcome = run.outcome(deadline_reached=now >= day.deadline)
    _store_run(day, run)
    receipt = None
    if commands:
        receipt = M21PostReceipt.objects.create(message=message, day=day, lines=_receipt_lines(receipts))
    if outcome.end is not None:
        # A post after a deadline the clock has not yet closed does not end the day: the deadline did, at its time.
        deadline = outcome.end.how is ForumDayEndHow.DEADLINE
        _end_day(day, outcome, ended_at=day.deadline if deadline else message.received_at,
                 actor=message.author_user, now=now)
    return receipt


def _end_day(day: M21Day, outcome: M21DayOutcome, *, ended_at: datetime, actor, now: datetime) -> None:
    """Record the end of ``day`` from ``outcome`` (its end is set) and, once decided, apply the result."""
    end = outcome.end
    day.ended_at = day.ended_at or ended_at
    # A day ended before its deadline (hammer, the Judge) leaves no deadline on the clock (DESIGN.md "The clock").
    ScheduledEvent.objects.filter(game=day.game, kind="m21_day_deadline", payload__day=day.number,
                                  due_at__gt=day.ended_at, done_at__isnull=True,
                                  cancelled_at__isnull=True).update(cancelled_at=now)
    day.how = end.how.value
    day.result = {"end": end.as_dict(), "count": end.count.as_dict(), "judge_power": outcome.judge_power,
                  "offenders": [o.as_dict() for o in outcome.report.offenders],
                  "voided": [v.as_dict() for v in outcome.report.voided]}
    if outcome.state is DayState.AWAITING_CASTING_VOTE:
        day.status = DayStatus.AWAITING_CASTING_VOTE
        day.casting_window_ends_at = day.ended_at + timedelta(minutes=CASTING_VOTE_WINDOW_MINUTES)
        day.save(update_fields=["ended_at", "how", "result", "status", "casting_window_ends_at"])
        ScheduledEvent.objects.create(game=day.game, kind="m21_casting_window_end", due_at=day.casting_window_ends_at,
                                      payload={"day": day.number}, created_at=now)
        site_message(day.thread, f"**Day {day.number} is over: a tie** between "
                                  f"{', '.join(_name(t, day) for t in end.tied)}. The result waits up to "
                                  f"{CASTING_VOTE_WINDOW_MINUTES} minutes for the Judge's casting vote.", now)
        record_event(day.game, "m21.day_tied", actor=actor, at=now, payload={"day": day.number, "tied": list(end.tied)})
        return
    _decide_day(day, outcome, actor=actor, now=now, night_starts_at=day.ended_at)


def _name(label: str, day: M21Day) -> str:
    return "No Lynch" if label == FORUM_NO_LYNCH else label


def _decide_day(day: M21Day, outcome: M21DayOutcome, *, actor, now: datetime, night_starts_at: datetime) -> None:
    """Apply a decided day: imprison the winner (M-VOTE-4, M-VOTE-6), spend the Judge's power, announce the
    result with the final count, list the M-VOTE-5 offenders for the hosts and, unless the game is won, start the
    night at once at ``night_starts_at`` (the day's planned end: the hammer's post, the deadline, the end of the
    casting window or the casting vote), lasting its own ``night_hours`` (M-SETUP-2)."""
    game = day.game
    labels = _label_to_resident(day)
    imprisoned = labels.get(outcome.imprisoned) if outcome.imprisoned else None
    day.status = DayStatus.DECIDED
    day.imprisoned = imprisoned
    day.result = {**(day.result or {}), "imprisoned": outcome.imprisoned, "no_lynch": outcome.no_lynch,
                  "judge_power": outcome.judge_power}
    day.save(update_fields=["status", "imprisoned", "result", "ended_at", "how"])
    if outcome.judge_power is not None:
        judge_seat = M21Seat.objects.select_for_update(of=("self",)).get(resident__game=game, role="judge")
        judge_seat.state = {**judge_seat.state, "judge_power_left": 0}
        judge_seat.save(update_fields=["state"])
    if imprisoned is not None:
        _imprison(imprisoned, now)
    how = {"end_hammer": "the hammer fell", "majority": "a majority was reached", "deadline": "the deadline passed",
           "close_proceedings": "the Judge closed proceedings"}[day.how]
    if imprisoned is not None:
        seat = imprisoned.m21_seat
        result = f"**{imprisoned.name} is imprisoned.** {flip_text(seat.role, sane=seat.sane)}"
    elif outcome.no_lynch:
        result = "**No Lynch: nobody is imprisoned.**"
    else:
        result = "**Nobody is imprisoned** (a tie or no votes)."
    if outcome.judge_power == "casting_vote":
        result += " The Judge's casting vote decided the tie."
    names = display_names(game)
    count_text = vote_count_text(outcome.report, names)
    site_message(day.thread, f"**Day {day.number} is over:** {how}. {result}\n\n{count_text}", now)
    office = thread_of(game, M21InboxKind.OFFICE)
    offenders = outcome.report.offenders
    if office is not None:
        lines = [f"- {names.get(o.seat, o.seat)}: {', '.join(OFFENCE_WORDS[x.value] for x in o.offences)}"
                 for o in offenders]
        site_message(office, f"**Day {day.number}: must-vote offenders (M-VOTE-5)**\n\n"
                              + ("\n".join(lines) if lines else "Nobody."), now)
    if _finish_if_won(game, now) is None:
        start_night(game, day.number, planned_at=night_starts_at, now=now)
    record_event(game, "m21.day_decided", actor=actor, at=now,
                 payload={"day": day.number, "how": day.how, "imprisoned": imprisoned.pk if imprisoned else None,
                          "no_lynch": outcome.no_lynch, "judge_power": outcome.judge_power,
                          "offenders": [o.seat for o in offenders]})


def _imprison(resident: Resident, now: datetime) -> None:
    """M-VOTE-6, M-SETUP-3: the seat is imprisoned and flipped; it reads the game thread but no longer posts there, leaves the
    mafia thread and joins the spectators' thread."""
    resident.status = LifeStatus.IMPRISONED
    resident.died_at = now
    # The day's announcement flips the seat (M-VOTE-6): its side is public knowledge from now on.
    resident.alignment_announced = True
    resident.save(update_fields=["status", "died_at", "alignment_announced"])
    _seat_leaves_the_living(resident, reason="imprisoned", now=now)
    record_event(resident.game, "m21.imprisoned", actor=None, at=now, payload={"resident": resident.pk})


def _seat_leaves_the_living(resident: Resident, *, reason: str, now: datetime) -> None:
    game = resident.game
    Membership.objects.filter(inbox__game=game, inbox__kind=M21InboxKind.GAME_THREAD, resident=resident).update(
        state=MembershipState.BANNED, reason=reason)
    Membership.objects.filter(inbox__game=game, inbox__kind=M21InboxKind.MAFIA_THREAD, resident=resident).update(
        state=MembershipState.REMOVED, reason=reason)
    spectators = thread_of(game, M21InboxKind.SPECTATORS)
    if spectators is not None:
        Membership.objects.update_or_create(inbox=spectators, resident=resident,
                                            defaults={"state": MembershipState.MEMBER, "since": now})
    viewer_reads.forget_viewer_cache(resident.user)


def _decide_if_due(day: M21Day, *, now: datetime, actor=None) -> M21DayOutcome:
    run = stored_run(day)
    outcome = run.outcome(deadline_reached=now >= day.deadline, casting_window_over=_casting_window_over(day, now))
    _store_run(day, run)
    if outcome.end is not None and day.status == DayStatus.OPEN:
        ended_at = day.deadline if outcome.end.how.value == "deadline" else now
        _end_day(day, outcome, ended_at=ended_at, actor=actor, now=now)
    elif day.status == DayStatus.AWAITING_CASTING_VOTE and outcome.state is DayState.DECIDED:
        _decide_day(day, outcome, actor=actor, now=now, night_starts_at=min(now, day.casting_window_ends_at))
    return outcome


@transaction.atomic
def do_close_m21_day_at_deadline(game: Game, number: int, *, acting_user=None, now: datetime | None = None) -> str:
    """The clock's end of day ``number`` at its planned deadline (M-VOTE-4): plurality, a tie waiting for the
    Judge's casting vote when they can give one. A day already over or extended is left. Returns what happened."""
    now = now or timezone.now()
    day = M21Day.objects.select_for_update().filter(game=game, number=number).first()
    if day is None or day.status != DayStatus.OPEN:
        return f"day {number} is not open"
    if now < day.deadline:
        return f"day {number} runs until {day.deadline.isoformat()}"
    _decide_if_due(day, now=now)
    day.refresh_from_db()
    return f"day {number} ended at its deadline: {day.status}"


@transaction.atomic
def do_close_m21_casting_window(game: Game, number: int, *, now: datetime | None = None) -> str:
    """The clock's end of the Judge's casting window after a tied day: the tie stands (nobody is imprisoned)."""
    now = now or timezone.now()
    day = M21Day.objects.select_for_update().filter(game=game, number=number).first()
    if day is None or day.status != DayStatus.AWAITING_CASTING_VOTE:
        return f"day {number} is not waiting for a casting vote"
    outcome = day_outcome(day, now=now, casting_window_over=True)
    _decide_day(day, outcome, actor=None, now=now, night_starts_at=day.casting_window_ends_at)
    return f"day {number}: no casting vote, the tie stands"


def _judge_seat(game: Game, acting_user) -> Resident:
    seat = policies.seat_in(acting_user, game)
    if seat is None or not hasattr(seat, "m21_seat") or seat.m21_seat.role != "judge":
        raise NotAllowed("Only the Judge has this power.", rule="M-ROLE")
    if seat.status != LifeStatus.ALIVE:
        raise M21Refusal("Only a living Judge can use this power.", rule="M-ROLE")
    return seat


def _refuse_if_judge_refused(outcome: M21DayOutcome, kind: str) -> str:
    receipt = [r for r in outcome.judge_receipts if r.kind == kind][-1]
    if not receipt.accepted:
        raise M21Refusal(receipt.message, rule="M-ROLE")
    return receipt.message


@transaction.atomic
def do_close_proceedings(game: Game, *, acting_user, now: datetime | None = None) -> str:
    """The Judge's *close proceedings* (M-ROLE judge, once per game): while a majority of the living have a vote in
    place, the day ends now on the votes in place (plurality; a tie imprisons nobody). Returns the Judge's
    receipt. Raises ``NotAllowed`` (not the Judge) or ``M21Refusal`` with the reason (no open day, power used,
    no majority voting); nothing is stored then."""
    now = now or timezone.now()
    _check_m21(game)
    seat = _judge_seat(game, acting_user)
    day = open_day(game, lock=True)
    if day is None or day.status != DayStatus.OPEN or now >= day.deadline:
        raise M21Refusal("No day is open.", rule="M-ROLE")
    order = M21DayOrder.objects.create(day=day, kind=OrderKind.CLOSE_PROCEEDINGS, at=now, seat=seat)
    outcome = apply_day_order(day, order).outcome(deadline_reached=now >= day.deadline)
    message = _refuse_if_judge_refused(outcome, "close_proceedings")
    _end_day(day, outcome, ended_at=now, actor=acting_user, now=now)
    record_event(game, "m21.judge_closed_proceedings", actor=acting_user, at=now, payload={"day": day.number})
    return message


@transaction.atomic
def do_cast_judge_vote(game: Game, target: Resident | None, *, acting_user, now: datetime | None = None) -> str:
    """The Judge's *casting vote* (M-ROLE judge, once per game) for ``target`` (None: No Lynch): registered in
    advance while a day is open, or cast within 15 minutes after a tied end while the result waits. Returns the
    Judge's receipt; raises ``NotAllowed`` or ``M21Refusal`` with the reason (nothing stored)."""
    now = now or timezone.now()
    _check_m21(game)
    seat = _judge_seat(game, acting_user)
    if target is not None and target.game_id != game.pk:
        raise InvalidInput("Choose a player of this game.")
    day = open_day(game, lock=True)
    if day is None or (day.status == DayStatus.OPEN and now >= day.deadline):
        raise M21Refusal("No day is open and no tie waits for a casting vote.", rule="M-ROLE")
    if day.status == DayStatus.AWAITING_CASTING_VOTE and now >= day.casting_window_ends_at:
        raise M21Refusal("The 15 minutes for a casting vote are over.", rule="M-ROLE")
    order = M21DayOrder.objects.create(day=day, kind=OrderKind.CASTING_VOTE, at=now, seat=seat, target=target,
                                       no_lynch=target is None)
    outcome = apply_day_order(day, order).outcome(deadline_reached=now >= day.deadline,
                                                  casting_window_over=_casting_window_over(day, now))
    message = _refuse_if_judge_refused(outcome, "casting_vote")
    if day.status == DayStatus.AWAITING_CASTING_VOTE:
        _decide_day(day, outcome, actor=acting_user, now=now, night_starts_at=now)
    record_event(game, "m21.judge_casting_vote", actor=acting_user, at=now,
                 payload={"day": day.number, "target": target.pk if target else None})
    return message



def display_names(game: Game) -> dict[str, str]:
    """How the game's pages name a seat known by an earlier name (L-REPLACE-1: one name per seat): every name a
    replaced seat had (a day's label, an old post's author) -> ``"New (replacing Old)"``, New being the seat's
    name now. A name that is no seat's old name is shown as it is (look it up with ``.get(name, name)``)."""
    replacements = list(GameEvent.objects.filter(game=game, kind="resident.replaced").order_by("at", "id")
                        .values_list("payload", flat=True))
    if not replacements:  # one query in the common case
        return {}
    current = dict(Resident.objects.filter(game=game).values_list("pk", "name"))
    names: dict[str, str] = {}
    for payload in replacements:
        now_name = current.get(payload["resident"])
        if now_name is not None and payload["old_name"] != now_name:
            names[payload["old_name"]] = f"{now_name} (replacing {payload['old_name']})"
    return names


def renamed_receipt_lines(lines: list[dict], names: dict[str, str]) -> list[dict]:
    """A stored receipt's ``lines`` with each seat named as ``display_names`` names it (``names``): the sentence
    and the candidates (L-REPLACE-1: one name per seat). ``lines`` as stored when ``names`` is empty."""
    if not names:
        return lines
    pattern = re.compile("|".join(rf"(?<!\w){re.escape(n)}(?!\w)" for n in sorted(names, key=len, reverse=True)))
    return [{**line, "message": pattern.sub(lambda m: names[m[0]], line["message"]),
             "candidates": [names.get(c, c) for c in line.get("candidates", [])]} for line in lines]
