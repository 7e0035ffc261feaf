"""The days of an M21 game (RULES.md M-VOTE-1..9, M-SETUP-3, M-ROLE judge): starting a day, re-deriving it from the
game thread's posts and the day's orders (``rulesets.m21.day.run_m21_day``), the receipts of posts, the hammer, the
deadline at its planned time, the tie waiting for the Judge's casting vote, the Judge's two powers, and what a
decided day does (imprisonment, the spectators' thread, the must-vote list, the night on the clock).

A post received after the deadline carries no vote however late the clock runs: the deadline is the day's planned
time."""
from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from cities.models import (
    Game,
    GameStatus,
    LifeStatus,
    Resident,
    ScheduledEvent,
)
from cities.services import record_event
from inboxes import policies, viewer_reads
from inboxes.models import Inbox, InboxKind, Membership, MembershipState, Message
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

from .day import DayState, DeadlinePasses, JudgeCasts, JudgeCloses, M21DayOutcome, run_m21_day, vote_count_text
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
    """Start day ``number`` at its planned time ``planned_at`` (M-SETUP-2): the deadline is ``day_hours`` after
    ``planned_at`` (``phase_end``); the clock gets ``m21_day_deadline`` at that time; the game thread
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
    deadline = phase_end(planned_at, settings.day_hours, game.time_zone)
    day = M21Day.objects.create(game=game, number=number, thread=thread, starts_at=planned_at, deadline=deadline)
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


def day_outcome(day: M21Day, *, now: datetime, casting_window_over: bool | None = None) -> M21DayOutcome:
    """Re-derive ``day`` from its game thread's posts and its orders at ``now`` (aware): ``run_m21_day`` over the
    residents living when the day began, posts by staff left out, the deadline passing at its planned time.

    Returns the outcome with ``post_receipts`` keyed by message id.
    """
    game = day.game
    settings = game.m21
    removed_today = set(day.orders.filter(kind=OrderKind.REMOVAL).values_list("seat_id", flat=True))
    residents = list(Resident.objects.filter(game=game).select_related("user", "m21_seat").order_by("id"))
    start_names = _seat_names(day)
    start_accounts = {}
    for order in day.orders.filter(kind=OrderKind.REPLACEMENT).order_by("at", "id"):
        start_accounts.setdefault(order.seat_id, order.payload["old_user"])
    living_at_start = [r for r in residents if r.status == LifeStatus.ALIVE or r.pk in removed_today
                       or (day.imprisoned_id == r.pk)]
    label = {r.pk: start_names.get(r.pk, r.name) for r in residents}
    seats = [ForumSeat(seat=label[r.pk], account=f"u{start_accounts.get(r.pk, r.user_id)}") for r in living_at_start]

    events: list[tuple[datetime, int, int, object]] = []  # (at, order of kind, id, record builder input)
    messages = list(Message.objects.filter(inbox=day.thread, received_at__gte=day.starts_at,
                                           author_resident__isnull=False).order_by("received_at", "id"))
    for message in messages:
        events.append((message.received_at, 1, message.pk, message))
    for order in day.orders.all():
        events.append((order.at, 0, order.pk, order))
    events.sort(key=lambda item: (item[0], item[1], item[2]))

    records, message_at_seq = [], {}
    deadline_placed = False
    for seq, (at, _kind, _pk, item) in enumerate(events, start=1):
        if not deadline_placed and at > day.deadline:
            records.append(DeadlinePasses(seq=seq))
            deadline_placed = True
        if isinstance(item, Message):
            records.append(ForumPost(seq=seq, author=f"u{item.author_user_id}", text=item.body))
            message_at_seq[seq] = item.pk
        elif item.kind == OrderKind.REMOVAL:
            cause = ForumRemovalCause(item.payload.get("cause", ForumRemovalCause.REMOVED))
            records.append(ForumRemoval(seq=seq, seat=label[item.seat_id], cause=cause))
        elif item.kind == OrderKind.REPLACEMENT:
            records.append(ForumReplacement(seq=seq, seat=label[item.seat_id], account=f"u{item.payload['new_user']}",
                                            names=(item.payload["new_name"],)))
        elif item.kind == OrderKind.CLOSE_PROCEEDINGS:
            records.append(JudgeCloses(seq=seq, judge=label[item.seat_id]))
        elif item.kind == OrderKind.CASTING_VOTE:
            target = FORUM_NO_LYNCH if item.no_lynch else label[item.target_id]
            records.append(JudgeCasts(seq=seq, judge=label[item.seat_id], target=target))
    deadline_passed = now >= day.deadline
    judge = next((r for r in living_at_start if r.m21_seat.role == "judge"), None) if living_at_start else None
    judge_power_left = bool(judge and judge.m21_seat.state.get("judge_power_left", 0) > 0) or (
        judge is not None and day.result is not None and day.result.get("judge_power") is not None)
    if casting_window_over is None:
        casting_window_over = day.casting_window_ends_at is not None and now >= day.casting_window_ends_at
    outcome = run_m21_day(vote_rules(settings), seats, records, judge=label[judge.pk] if judge else None,
                          judge_power_left=judge_power_left, deadline_reached=deadline_passed,
                          casting_window_over=casting_window_over)
    receipts = {message_at_seq[seq]: lines for seq, lines in outcome.post_receipts.items() if seq in message_at_seq}
    outcome.post_receipts.clear()
    outcome.post_receipts.update(receipts)
    return outcome


def _label_to_resident(day: M21Day) -> dict[str, Resident]:
    names = _seat_names(day)
    return {names.get(r.pk, r.name): r for r in Resident.objects.filter(game=day.game)}


def _receipt_lines(receipts) -> list[dict]:
    return [{"command": r.command.written, "accepted": r.accepted, "message": r.message,
             "candidates": list(r.candidates)} for r in receipts]


def record_game_thread_post(inbox: Inbox, seat: Resident | None, message: Message, now: datetime) -> M21PostReceipt | None:
    """Index a post just stored in an M21 game thread (the game thread's post hook; runs in the post's
    transaction): re-derive the open day with it, store the post's receipt (M-VOTE-1: what each command did or
    why it was refused) and, when it hammers (M-VOTE-3), end the day at once. Posts by the hosts carry no votes.
    Returns the receipt, or None for a post without commands or by a host."""
    if seat is None or not parse_forum_post(message.body):
        return None
    day = open_day(inbox.game, lock=True)
    if day is None or day.thread_id != inbox.pk or day.status != DayStatus.OPEN:
        lines = [{"command": c.written, "accepted": False, "message": "No day is open: this carries no vote.",
                  "candidates": []} for c in parse_forum_post(message.body)]
        last = current_day(inbox.game)
        if last is None:
            return None
        return M21PostReceipt.objects.create(message=message, day=last, lines=lines)
    outcome = day_outcome(day, now=now)
    receipt = M21PostReceipt.objects.create(message=message, day=day,
                                            lines=_receipt_lines(outcome.post_receipts.get(message.pk, ())))
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
        judge_seat = M21Seat.objects.select_for_update().get(resident__game=game, role="judge")
        judge_seat.state = {**judge_seat.state, "judge_power_left": 0}
        judge_seat.save(update_fields=["state"])
    if imprisoned is not None:
        _imprison(imprisoned, now)
    how = {"end_hammer": "the hammer fell", "majority": "a majority was reached", "deadline": "the deadline passed",
           "close_proceedings": "the Judge closed proceedings"}[day.how]
    if imprisoned is not None:
        result = f"**{imprisoned.name} is imprisoned.**"
    elif outcome.no_lynch:
        result = "**No Lynch: nobody is imprisoned.**"
    else:
        result = "**Nobody is imprisoned** (a tie or no votes)."
    if outcome.judge_power == "casting_vote":
        result += " The Judge's casting vote decided the tie."
    count_text = vote_count_text(outcome.report)
    site_message(day.thread, f"**Day {day.number} is over:** {how}. {result}\n\n{count_text}", now)
    office = thread_of(game, InboxKind.OFFICE)
    offenders = outcome.report.offenders
    if office is not None:
        words = {"no_vote_at_end": "no vote in place at the end", "never_voted": "never voted",
                 "fewer_than_two_posts": "fewer than two posts"}
        lines = [f"- {o.seat}: {', '.join(words[x.value] for x in o.offences)}" for o in offenders]
        site_message(office, f"**Day {day.number}: must-vote offenders (M-VOTE-5)**\n\n"
                              + ("\n".join(lines) if lines else "Nobody."), now)
    if _finish_if_won(game, now) is None:
        start_night(game, day.number, planned_at=night_starts_at, now=now)
    record_event(game, "m21.day_decided", actor=actor, at=now,
                 payload={"day": day.number, "how": day.how, "imprisoned": imprisoned.pk if imprisoned else None,
                          "no_lynch": outcome.no_lynch, "judge_power": outcome.judge_power,
                          "offenders": [o.seat for o in offenders]})


def _imprison(resident: Resident, now: datetime) -> None:
    """M-VOTE-6, M-SETUP-3: the seat is imprisoned; it reads the game thread but no longer posts there, leaves the
    mafia thread and joins the spectators' thread."""
    resident.status = LifeStatus.IMPRISONED
    resident.died_at = now
    resident.save(update_fields=["status", "died_at"])
    _seat_leaves_the_living(resident, reason="imprisoned", now=now)
    record_event(resident.game, "m21.imprisoned", actor=None, at=now, payload={"resident": resident.pk})


def _seat_leaves_the_living(resident: Resident, *, reason: str, now: datetime) -> None:
    game = resident.game
    Membership.objects.filter(inbox__game=game, inbox__kind=InboxKind.GAME_THREAD, resident=resident).update(
        state=MembershipState.BANNED, reason=reason)
    Membership.objects.filter(inbox__game=game, inbox__kind=InboxKind.MAFIA_THREAD, resident=resident).update(
        state=MembershipState.REMOVED, reason=reason)
    spectators = thread_of(game, InboxKind.SPECTATORS)
    if spectators is not None:
        Membership.objects.update_or_create(inbox=spectators, resident=resident,
                                            defaults={"state": MembershipState.MEMBER, "since": now})
    viewer_reads.forget_viewer_cache(resident.user)


def _decide_if_due(day: M21Day, *, now: datetime, actor=None) -> M21DayOutcome:
    outcome = day_outcome(day, now=now)
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
    M21DayOrder.objects.create(day=day, kind=OrderKind.CLOSE_PROCEEDINGS, at=now, seat=seat)
    outcome = day_outcome(day, now=now)
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
    M21DayOrder.objects.create(day=day, kind=OrderKind.CASTING_VOTE, at=now, seat=seat, target=target,
                               no_lynch=target is None)
    outcome = day_outcome(day, now=now)
    message = _refuse_if_judge_refused(outcome, "casting_vote")
    if day.status == DayStatus.AWAITING_CASTING_VOTE:
        _decide_day(day, outcome, actor=acting_user, now=now, night_starts_at=now)
    record_event(game, "m21.judge_casting_vote", actor=acting_user, at=now,
                 payload={"day": day.number, "target": target.pk if target else None})
    return message

