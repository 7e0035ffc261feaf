"""The M21 host's console actions (RULES.md M-SETUP-2, M-SETUP-4): shortening the running phase, the modkill with
or without a role reveal, and a replacement named by login, beside the day's own host services
(``rulesets.m21.services.do_extend_m21_phase``, ``do_post_vote_count``, ``do_remove_m21_player``,
``do_replace_m21_player``), which the console calls as they are.

Every ``do_<verb>_<noun>(..., *, acting_user, now=None)`` runs in one transaction, lets only the game's hosts (its
Procurator, the M21 host, and its co-hosts) act, writes a ``GameEvent`` audit row and raises a ``kernel.errors``
domain error whose message the host can read; nothing is changed when it raises.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from cities.models import Game, GameStatus, Resident, ScheduledEvent
from cities.services import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from voting.forum_vote import ForumRemovalCause

from . import services
from .models import DayStatus, M21Game
from .night_models import M21Night
from .service_common import wall_text

#: The longest shortening of one phase at a time, in hours (M-SETUP-4: the host adjudicates the clock).
MAX_SHORTEN_HOURS = services.MAX_EXTENSION_HOURS
#: A shortened phase still ends at least this long after the host's order, in minutes, so that the players read
#: the announcement before the phase ends.
MIN_NOTICE_MINUTES = 15


def wall_time(moment: datetime, game: Game) -> str:
    """``moment`` (aware) as a wall-clock time in the game's zone: "Mon 5 Jan 2026, 22:00 GMT" (``wall_text``)."""
    return wall_text(moment, game.time_zone)


def check_host(game: Game, acting_user) -> M21Game:
    """The game's M21 settings when ``acting_user`` hosts ``game`` (M-SETUP-4: the Procurator or a co-host).
    Raises ``InvalidInput`` for a game that is not M21, ``NotAllowed`` for anyone else (the scheduler included:
    these are the host's decisions)."""
    if game.ruleset != services.RULESET:
        raise InvalidInput("This is not an M21 game.")
    settings = M21Game.objects.filter(game=game).first()
    if settings is None:
        raise InvalidInput("This game has no M21 settings.")
    if acting_user is None or not services.is_host(acting_user, game):
        raise NotAllowed("Only the hosts of this game may do this.", rule="M-SETUP-4")
    return settings


@transaction.atomic
def do_shorten_m21_phase(game: Game, hours: int, *, acting_user, now: datetime | None = None) -> datetime:
    """Bring the running phase's planned end ``hours`` earlier (1..72, M-SETUP-2/4): the open day's deadline or
    the night's end, the clock's event with it (and the night's row, whose submissions count up to its planned
    end); the game thread announces the new end in the game's zone. Hosts only. Returns the new planned end
    (aware UTC).

    Raises ``InvalidInput`` for a bad number of hours, ``WrongState`` when no phase is running, its end has
    passed, or the new end would come sooner than ``MIN_NOTICE_MINUTES`` from now (end the day by the rules
    instead)."""
    now = now or timezone.now()
    check_host(game, acting_user)
    if isinstance(hours, bool) or not isinstance(hours, int) or not 1 <= hours <= MAX_SHORTEN_HOURS:
        raise InvalidInput(f"Shorten by 1 to {MAX_SHORTEN_HOURS} hours.", rule="M-SETUP-2")
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status != GameStatus.RUNNING:
        raise WrongState("The game is not running.", rule="M-SETUP-2")
    day = services.open_day(game, lock=True)
    night = None
    if day is not None and day.status == DayStatus.OPEN:
        kind, old, payload, label = "m21_day_deadline", day.deadline, {"day": day.number}, f"Day {day.number}"
    else:
        event = ScheduledEvent.objects.select_for_update().filter(
            game=game, kind="m21_night_end", done_at__isnull=True, cancelled_at__isnull=True).first()
        if event is None:
            raise WrongState("No phase is running.", rule="M-SETUP-2")
        kind, old, payload = "m21_night_end", event.due_at, event.payload
        label = f"Night {payload['night']}"
        night = M21Night.objects.select_for_update().filter(game=game, number=payload["night"]).first()
    if now >= old:
        raise WrongState(f"{label} has already reached its end.", rule="M-SETUP-2")
    new = old - timedelta(hours=hours)
    if new < now + timedelta(minutes=MIN_NOTICE_MINUTES):
        raise WrongState(f"{label} would end at {wall_time(new, game)}, less than {MIN_NOTICE_MINUTES} minutes "
                         f"from now: shorten it by less.", rule="M-SETUP-2")
    if kind == "m21_day_deadline":
        day.deadline = new
        day.save(update_fields=["deadline"])
    elif night is not None:
        night.planned_end = new
        night.save(update_fields=["planned_end"])
    ScheduledEvent.objects.filter(game=game, kind=kind, done_at__isnull=True, cancelled_at__isnull=True).update(
        cancelled_at=now)
    ScheduledEvent.objects.create(game=game, kind=kind, due_at=new, payload=payload, created_at=now,
                                  created_by=acting_user)
    services.site_message(services.thread_of(game), f"**{label} is shortened by {hours} hours:** it now ends at "
                                                    f"{wall_time(new, game)}.", now)
    record_event(game, "m21.phase_shortened", actor=acting_user, at=now,
                 payload={"kind": kind, "from": old.isoformat(), "to": new.isoformat(), "hours": hours})
    return new


@transaction.atomic
def do_modkill_m21_player(resident: Resident, *, reveal_role: bool, acting_user,
                          now: datetime | None = None) -> Resident:
    """The host's modkill (M-SETUP-4: "remove (modkill) players with or without a role reveal"): the living seat
    ``resident`` leaves the game as dead; during a day its vote and the votes on it are void and those voters are
    told (M-VOTE-9); the thread names the role when ``reveal_role``. Victory is checked (M-WIN-1). Hosts only
    (never the scheduler). Returns the seat. Raises ``NotAllowed``, ``InvalidInput`` (a seat of another game
    type) or ``WrongState`` (the seat is not alive, the game is over)."""
    now = now or timezone.now()
    check_host(resident.game, acting_user)
    if not isinstance(reveal_role, bool):
        raise InvalidInput("Say whether the role is revealed.", rule="M-SETUP-4")
    resident = services.do_remove_m21_player(resident, acting_user=acting_user, cause=ForumRemovalCause.REMOVED,
                                             reveal_role=reveal_role, now=now)
    record_event(resident.game, "m21.modkill", actor=acting_user, at=now,
                 payload={"resident": resident.pk, "reveal_role": reveal_role})
    return resident


@transaction.atomic
def do_replace_m21_player_by_login(resident: Resident, username: str, *, acting_user,
                                   now: datetime | None = None) -> Resident:
    """The host's replacement (L-REPLACE-1, M-SETUP-4) with the new player named by their login (``username``,
    case-insensitive): ``services.do_replace_m21_player``. Hosts only. Raises ``InvalidInput`` for an empty or
    unknown login (the same message for both) and whatever the replacement refuses (staff, a player already
    seated, an inactive account, the game over)."""
    now = now or timezone.now()
    check_host(resident.game, acting_user)
    login = (username or "").strip()
    new_user = get_user_model().objects.filter(username__iexact=login).first() if login else None
    if new_user is None:
        raise InvalidInput("No account has this login.", rule="L-REPLACE-1")
    return services.do_replace_m21_player(resident, new_user, acting_user=acting_user, now=now)
