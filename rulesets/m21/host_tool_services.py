"""Two tools of the M21 host that forum games expect (RULES.md M-SETUP-4, M-VOTE-5, L-REPLACE-1):

- **Prods.** During a day the host nudges the living players who have not voted or have posted fewer than twice
  so far (M-VOTE-5's count of the day). Each prod is a message from the site in the player's role PM, which the
  notifications tell them of on the site and by e-mail as the player chose (``archive.notifications``); the audit
  row of each prod is what the host console lists (who, why, when).
- **The replacement list.** An account without a seat in a running game (not a host, not a spectator of it)
  volunteers to replace and may withdraw; the host picks a volunteer for a seat in the console: the replacement
  service runs (the seat keeps its role, items, votes and history) and the game thread says who is replacing whom.

Every ``do_<verb>_<noun>`` runs in one transaction, checks the rules, writes a ``GameEvent`` and raises a
``RuleViolation`` with a message a player can read.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from cities.models import Game, GameEvent, GameStatus, LifeStatus, Resident, StaffRole
from cities.services import record_event
from inboxes.models import Inbox, Spectator
from kernel.errors import InvalidInput, NotAllowed, WrongState
from voting.forum_vote import ForumOffence

from .day_services import day_outcome, open_day
from .host_services import do_replace_m21_player
from .models import DayStatus, M21ReplacementVolunteer, M21Seat
from .notices import PROD_HEADING
from .service_common import _check_host, _check_m21, _wall, site_message, thread_of

#: The words of a prod for each M-VOTE-5 offence counted so far in the day.
PROD_REASONS = {ForumOffence.NEVER_VOTED.value: "you have not voted yet today",
                ForumOffence.FEWER_THAN_TWO_POSTS.value: "you have posted fewer than twice today"}


@dataclass(frozen=True)
class Prod:
    """One prod as the console lists it: the seat's ``name``, the day, the ``reasons`` and when (aware UTC)."""

    name: str
    day: int
    reasons: tuple[str, ...]
    at: datetime


def players_to_prod(game: Game, now: datetime) -> list[tuple[Resident, tuple[str, ...]]]:
    """The living players of the open day who have not voted or have posted fewer than twice so far
    (M-VOTE-5), with their offences' keys, in seating order; none when no day is open. Read-only."""
    day = open_day(game)
    if day is None or day.status != DayStatus.OPEN:
        return []
    report = day_outcome(day, now=now).report
    by_name = {r.name: r for r in Resident.objects.filter(game=game, status=LifeStatus.ALIVE)}
    found = []
    for offender in report.offenders:
        reasons = tuple(o.value for o in offender.offences if o.value in PROD_REASONS)
        seat = by_name.get(offender.seat)
        if reasons and seat is not None:
            found.append((seat, reasons))
    return found


@transaction.atomic
def do_prod_m21_players(game: Game, *, acting_user, now: datetime | None = None) -> list[Prod]:
    """The host prods every player ``players_to_prod`` lists: a site message in each one's role PM naming why and
    the day's deadline, which the notifications then tell them of. Hosts only, while a day is open. Returns the
    prods made (none when everyone has voted and posted twice). Raises ``WrongState`` when no day is open."""
    now = now or timezone.now()
    _check_m21(game)
    _check_host(game, acting_user)
    day = open_day(game, lock=True)
    if day is None or day.status != DayStatus.OPEN or now >= day.deadline:
        raise WrongState("No day is open: there is nobody to prod.", rule="M-VOTE-5")
    prods = []
    for seat, reasons in players_to_prod(game, now):
        pm = M21Seat.objects.filter(resident=seat).values_list("role_pm", flat=True).first()
        if pm is None:
            continue
        words = " and ".join(PROD_REASONS[r] for r in reasons)
        site_message(Inbox.objects.get(pk=pm),
                     f"{PROD_HEADING} Day {day.number}: {words}. Please vote and post in the game thread before "
                     f"the deadline, {_wall(day.deadline, game)} (M-VOTE-5).", now)
        record_event(game, "m21.prodded", actor=acting_user, at=now,
                     payload={"day": day.number, "resident": seat.pk, "name": seat.name, "reasons": list(reasons)})
        prods.append(Prod(name=seat.name, day=day.number, reasons=reasons, at=now))
    return prods


def prods_of(game: Game) -> list[Prod]:
    """Every prod of ``game``, the latest first and those of one moment in the order made (the host console's
    list), from the audit log."""
    return [Prod(name=e.payload.get("name", ""), day=e.payload.get("day", 0),
                 reasons=tuple(e.payload.get("reasons", ())), at=e.at)
            for e in GameEvent.objects.filter(game=game, kind="m21.prodded").order_by("-at", "id")]


# ----------------------------------------------------------------------------------------------------------------
# The replacement list
# ----------------------------------------------------------------------------------------------------------------


def volunteer_refusal(user, game: Game) -> str | None:
    """Why ``user`` may not volunteer to replace in ``game`` now (a sentence), or None when they may: a running
    M21 game; an active, logged-in account that is not a host, holds no seat there and has never been a spectator
    of it (M-SETUP-3), and is not on its list already. Read-only."""
    if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return "Log in to volunteer."
    if game.status != GameStatus.RUNNING:
        return "Replacements are for a running game."
    if StaffRole.objects.filter(game=game, user=user).exists():
        return "The hosts of a game do not replace in it."
    if Resident.objects.filter(game=game, user=user).exists():
        return "You already have a seat in this game."
    if Spectator.objects.filter(game=game, user=user).exists():
        return "You have been a spectator of this game: you cannot take a seat in it (M-SETUP-3)."
    if M21ReplacementVolunteer.objects.filter(game=game, user=user, withdrawn_at__isnull=True,
                                              taken_at__isnull=True).exists():
        return "You are on the replacement list already."
    return None


def is_volunteer(user, game: Game) -> bool:
    """True when ``user`` is on ``game``'s replacement list now."""
    return bool(getattr(user, "is_authenticated", False)) and M21ReplacementVolunteer.objects.filter(
        game=game, user=user, withdrawn_at__isnull=True, taken_at__isnull=True).exists()


def volunteers_of(game: Game) -> list[M21ReplacementVolunteer]:
    """The replacement list of ``game`` now, first come first (the host console's choice)."""
    return list(M21ReplacementVolunteer.objects.filter(game=game, withdrawn_at__isnull=True, taken_at__isnull=True)
                .select_related("user"))


@transaction.atomic
def do_volunteer_to_replace(game: Game, *, acting_user, now: datetime | None = None) -> M21ReplacementVolunteer:
    """``acting_user`` goes on ``game``'s replacement list (L-REPLACE-1). Raises ``NotAllowed`` or ``WrongState``
    with ``volunteer_refusal``'s reason."""
    now = now or timezone.now()
    _check_m21(game)
    game = Game.objects.select_for_update().get(pk=game.pk)
    reason = volunteer_refusal(acting_user, game)
    if reason is not None:
        raise (WrongState if game.status != GameStatus.RUNNING else NotAllowed)(reason, rule="L-REPLACE-1")
    try:
        with transaction.atomic():
            row = M21ReplacementVolunteer.objects.create(game=game, user=acting_user, volunteered_at=now)
    except IntegrityError:
        raise WrongState("You are on the replacement list already.", rule="L-REPLACE-1") from None
    record_event(game, "m21.volunteered", actor=acting_user, at=now, payload={"user": acting_user.pk})
    return row


@transaction.atomic
def do_withdraw_volunteering(game: Game, *, acting_user, now: datetime | None = None) -> M21ReplacementVolunteer:
    """``acting_user`` leaves ``game``'s replacement list. Raises ``WrongState`` when they are not on it."""
    now = now or timezone.now()
    _check_m21(game)
    row = (M21ReplacementVolunteer.objects.select_for_update()
           .filter(game=game, user=acting_user, withdrawn_at__isnull=True, taken_at__isnull=True).first()
           if getattr(acting_user, "is_authenticated", False) else None)
    if row is None:
        raise WrongState("You are not on the replacement list.", rule="L-REPLACE-1")
    row.withdrawn_at = now
    row.save(update_fields=["withdrawn_at"])
    record_event(game, "m21.volunteering_withdrawn", actor=acting_user, at=now, payload={"user": acting_user.pk})
    return row


@transaction.atomic
def do_replace_with_volunteer(seat: Resident, volunteer_id: int, *, acting_user,
                              now: datetime | None = None) -> Resident:
    """The host gives ``seat`` to the volunteer ``volunteer_id`` (a row of ``volunteers_of``): the replacement
    service runs (``do_replace_m21_player``: role, items, votes and history stay with the seat, L-REPLACE-1), the
    volunteer leaves the list and the game thread says "New is replacing Old". Hosts only. Raises
    ``InvalidInput`` for a volunteer not on this game's list, and whatever the replacement refuses."""
    now = now or timezone.now()
    game = seat.game
    _check_m21(game)
    _check_host(game, acting_user)
    if isinstance(volunteer_id, bool) or not isinstance(volunteer_id, int):
        raise InvalidInput("Choose a volunteer from the list.", rule="L-REPLACE-1")
    row = (M21ReplacementVolunteer.objects.select_for_update()
           .filter(pk=volunteer_id, game=game, withdrawn_at__isnull=True, taken_at__isnull=True).first())
    if row is None:
        raise InvalidInput("This volunteer is no longer on the replacement list.", rule="L-REPLACE-1")
    old_name = seat.name
    seat = do_replace_m21_player(seat, row.user, acting_user=acting_user, now=now)
    row.taken_at, row.seat, row.replaced_name = now, seat, old_name
    row.save(update_fields=["taken_at", "seat", "replaced_name"])
    thread = thread_of(game)
    if thread is not None:
        site_message(thread, f"**{seat.name} is replacing {old_name}.** The seat keeps its role, items, votes and "
                             f"history.", now)
    record_event(game, "m21.volunteer_took_seat", actor=acting_user, at=now,
                 payload={"resident": seat.pk, "user": row.user_id, "replaced_name": old_name})
    return seat


def replacing_notes(game: Game) -> dict[int, str]:
    """Seat id -> "replacing Old" for the seats a volunteer took (the host console's and the pages' note)."""
    return {row.seat_id: f"replacing {row.replaced_name}"
            for row in M21ReplacementVolunteer.objects.filter(game=game, seat__isnull=False).order_by("taken_at")}
