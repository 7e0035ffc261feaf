"""The hosts' tools while an M21 game runs (RULES.md M-SETUP-2, M-SETUP-4, M-VOTE-8, M-VOTE-9, L-REPLACE-1):
removing a player (or recording a death by day), replacing a player, extending the phase, posting the vote count."""
from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from cities.models import Game, GameStatus, LifeStatus, Resident, ScheduledEvent
from cities.services import record_event
from inboxes import policies
from inboxes.membership_services import do_replace_player
from inboxes.models import Message
from inboxes.rendering import render_markdown
from kernel.errors import InvalidInput, WrongState
from rulesets.m21.staff_kinds import StaffKind
from voting.forum_vote import ForumRemovalCause

from .day import vote_count_text
from .day_services import (
    _end_day,
    _seat_leaves_the_living,
    _seat_names,
    apply_day_order,
    day_outcome,
    display_names,
    open_day,
)
from .flips import flip_text
from .game_end import _finish_if_won
from .models import DayStatus, M21DayOrder, OrderKind
from .night_models import M21Night
from .service_common import (
    MAX_EXTENSION_HOURS,
    _check_host,
    _check_m21,
    _wall,
    site_message,
    thread_of,
)


@transaction.atomic
def do_remove_m21_player(resident: Resident, *, acting_user, cause: str = ForumRemovalCause.REMOVED,
                         reveal_role: bool = True, killer: Resident | None = None,
                         now: datetime | None = None) -> Resident:
    """Remove a living player from the game (the host's modkill, M-SETUP-4) or record a death during the day
    (``cause="killed"``, by the site): the seat is dead; during a day its vote and the votes on it are void and
    those voters are told in the game thread (M-VOTE-9); the announcement flips the seat (its role, side and an
    insane cop's insanity, M-VOTE-6) when ``reveal_role``. Hosts (or
    the site). ``killer``: the seat that killed them by day (a gun), kept with the day's removal for the coroner's
    post mortem (M-ROLE coroner). Raises ``WrongState`` for a seat that is not alive."""
    now = now or timezone.now()
    game = resident.game
    _check_m21(game)
    _check_host(game, acting_user)
    if game.status == GameStatus.FINISHED:
        raise WrongState("The game is over.")
    resident = Resident.objects.select_for_update().get(pk=resident.pk)
    if resident.status != LifeStatus.ALIVE:
        raise WrongState(f"{resident.name} is not alive.")
    day = open_day(game, lock=True)
    label = resident.name
    if day is not None and day.status == DayStatus.OPEN and now < day.deadline:
        label = _seat_names(day).get(resident.pk, resident.name)
        removal = M21DayOrder.objects.create(
            day=day, kind=OrderKind.REMOVAL, at=now, seat=resident,
            payload={"cause": str(cause)} | ({"killer": killer.pk, "killer_role": killer.m21_seat.role}
                                             if killer is not None else {}))
        apply_day_order(day, removal)
    resident.status = LifeStatus.DEAD
    resident.died_at = now
    resident.alignment_announced = reveal_role
    resident.save(update_fields=["status", "died_at", "alignment_announced"])
    _seat_leaves_the_living(resident, reason="dead", now=now)
    seat = resident.m21_seat
    role_text = f" {flip_text(seat.role, sane=seat.sane)}" if reveal_role else ""
    thread = thread_of(game)
    verb = "has died" if cause == "killed" else "has been removed from the game"
    lines = [f"**{resident.name} {verb}.**{role_text}"]
    if day is not None and day.status == DayStatus.OPEN and now < day.deadline:
        outcome = day_outcome(day, now=now)
        voided = [v for v in outcome.report.voided if v.removed == label and v.voter != label]
        if voided:
            names = display_names(game)
            lines.append(f"Votes on {names.get(label, label)} are void: "
                         f"{', '.join(names.get(v.voter, v.voter) for v in voided)}, please vote again (M-VOTE-9).")
        site_message(thread, " ".join(lines), now)
        if outcome.end is not None:
            _end_day(day, outcome, ended_at=now, actor=acting_user, now=now)
    else:
        site_message(thread, " ".join(lines), now)
    record_event(game, "m21.player_removed", actor=acting_user, at=now,
                 payload={"resident": resident.pk, "cause": str(cause), "reveal_role": reveal_role})
    _finish_if_won(game, now)
    return resident


@transaction.atomic
def do_replace_m21_player(resident: Resident, new_user, *, acting_user, now: datetime | None = None) -> Resident:
    """A new account takes over a seat (L-REPLACE-1): ``inboxes.membership_services.do_replace_player``, and during a day the
    seat keeps its vote and the votes on it (a replacement record of the day)."""
    now = now or timezone.now()
    _check_m21(resident.game)
    # The seat as stored now (the caller's copy may predate an earlier replacement).
    resident = Resident.objects.select_for_update().get(pk=resident.pk)
    old_user_id, old_name = resident.user_id, resident.name
    resident = do_replace_player(resident, new_user, acting_user=acting_user, now=now)
    day = open_day(resident.game, lock=True)
    if day is not None:
        replacement = M21DayOrder.objects.create(day=day, kind=OrderKind.REPLACEMENT, at=now, seat=resident,
                                                 payload={"old_user": old_user_id, "old_name": old_name,
                                                          "new_user": new_user.pk, "new_name": resident.name})
        apply_day_order(day, replacement)
    return resident


@transaction.atomic
def do_extend_m21_phase(game: Game, hours: int, *, acting_user, now: datetime | None = None) -> datetime:
    """Extend the current phase by ``hours`` (1..72, M-SETUP-2/4): the open day's deadline, or the night's end;
    the clock's event moves with it. Hosts only. Returns the new planned end. Raises ``WrongState`` when no phase
    is running or its planned end has already passed, ``InvalidInput`` for a bad number of hours."""
    now = now or timezone.now()
    _check_m21(game)
    _check_host(game, acting_user)
    if isinstance(hours, bool) or not isinstance(hours, int) or not 1 <= hours <= MAX_EXTENSION_HOURS:
        raise InvalidInput(f"Extend by 1 to {MAX_EXTENSION_HOURS} hours.", rule="M-SETUP-2")
    day = open_day(game, lock=True)
    if day is not None and day.status == DayStatus.OPEN:
        if now >= day.deadline:
            raise WrongState("The deadline has passed: the day is being closed.", rule="M-SETUP-2")
        kind, old = "m21_day_deadline", day.deadline
        day.deadline = old + timedelta(hours=hours)
        day.save(update_fields=["deadline"])
        new = day.deadline
        payload = {"day": day.number}
        label = f"Day {day.number}"
    else:
        event = ScheduledEvent.objects.select_for_update().filter(
            game=game, kind="m21_night_end", done_at__isnull=True, cancelled_at__isnull=True).first()
        if event is None:
            raise WrongState("No phase is running.", rule="M-SETUP-2")
        if now >= event.due_at:
            raise WrongState("The night's end has passed: it is being resolved.", rule="M-SETUP-2")
        kind, old, new, payload = "m21_night_end", event.due_at, event.due_at + timedelta(hours=hours), event.payload
        # The night's row (made at its first submission) counts submissions up to its planned end: it moves too.
        M21Night.objects.filter(game=game, number=payload["night"]).update(planned_end=new)
        label = f"Night {payload['night']}"
    ScheduledEvent.objects.filter(game=game, kind=kind, done_at__isnull=True, cancelled_at__isnull=True).update(
        cancelled_at=now)
    ScheduledEvent.objects.create(game=game, kind=kind, due_at=new, payload=payload, created_at=now,
                                  created_by=acting_user)
    site_message(thread_of(game), f"**{label} is extended by {hours} hours:** it now ends at {_wall(new, game)}.",
                  now)
    record_event(game, "m21.phase_extended", actor=acting_user, at=now,
                 payload={"kind": kind, "from": old.isoformat(), "to": new.isoformat(), "hours": hours})
    return new


@transaction.atomic
def do_post_vote_count(game: Game, *, acting_user, now: datetime | None = None) -> Message:
    """The host posts the live vote count in the game thread (M-VOTE-8): who votes whom, L-n to the hammer, END
    marks, the living without a vote. Hosts only, while a day is open."""
    now = now or timezone.now()
    _check_m21(game)
    _check_host(game, acting_user)
    day = open_day(game)
    if day is None:
        raise WrongState("No day is open.", rule="M-VOTE-8")
    outcome = day_outcome(day, now=now)
    text = f"Day {day.number}\n\n" + vote_count_text(outcome.report, display_names(game))
    role = next(r for r in policies.staff_roles_in(acting_user, game)
                if r.kind in (StaffKind.HOST, StaffKind.COHOST))
    message = Message.objects.create(inbox=day.thread, author_user=acting_user, author_staff=role,
                                     author_name=acting_user.public_name, body=text, body_html=render_markdown(text),
                                     received_at=now)
    record_event(game, "m21.vote_count_posted", actor=acting_user, at=now,
                 payload={"day": day.number, "message": message.pk})
    return message

