"""What every M21 service module shares (RULES.md Part 2, M-SETUP-2, M-SETUP-4): the ruleset key and the phase
limits, the refusal error, who hosts a game, the game's vote rules, when a phase ends, the site's own messages, the
standing inboxes (making one, finding one) and how a planned time is written for the game's players. No state
change of its own except the site's messages and new inboxes, made inside the calling service's transaction."""
from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from cities.models import (
    City,
    Game,
    ScheduledEvent,
    StaffKind,
)
from cities.services import record_event
from inboxes import policies
from inboxes.models import Inbox, InboxKind, Membership, MembershipState, Message
from inboxes.rendering import render_markdown
from kernel.errors import InvalidInput, NotAllowed, WrongState
from voting.forum_vote import ForumVoteRules

from .models import M21Game

RULESET = "m21"
#: Phase lengths the host may set, in hours (M-SETUP-2).
MIN_PHASE_HOURS, MAX_PHASE_HOURS = 1, 168
#: The longest extension of one phase at a time, in hours (M-SETUP-4).
MAX_EXTENSION_HOURS = 72


class M21Refusal(WrongState):
    """An M21 rule refuses the request; the message says why."""


# ----------------------------------------------------------------------------------------------------------------
# Who is who
# ----------------------------------------------------------------------------------------------------------------


def is_host(user, game: Game) -> bool:
    """True when ``user`` hosts ``game``: its Procurator (the M21 host) or a co-host (M-SETUP-4)."""
    return user is not None and getattr(user, "is_authenticated", False) and (
        policies.holds_role(user, game, StaffKind.PROCURATOR) or policies.holds_role(user, game, StaffKind.COHOST))


def _check_host(game: Game, acting_user) -> None:
    if acting_user is not None and not is_host(acting_user, game):
        raise NotAllowed("Only the hosts of this game may do this.", rule="M-SETUP-4")


def _check_m21(game: Game) -> M21Game:
    if game.ruleset != RULESET:
        raise InvalidInput("This is not an M21 game.")
    try:
        return M21Game.objects.get(game=game)
    except M21Game.DoesNotExist:
        raise InvalidInput("This game has no M21 settings.") from None


def vote_rules(settings: M21Game) -> ForumVoteRules:
    """The game's day vote (M-VOTE): its preset (M21's END-hammer and plurality, or the classic forum majority
    hammer of ``voting.forum_vote.CLASSIC_FORUM_RULES``) with the host's self-vote and No Lynch settings."""
    return ForumVoteRules.from_dict({"preset": settings.vote_preset,
                                     "self_votes_allowed": settings.self_votes_allowed,
                                     "no_lynch_allowed": settings.no_lynch_allowed})


def phase_end(start: datetime, hours: int, zone: str) -> datetime:
    """When a phase that starts at ``start`` (aware) and lasts ``hours`` ends (M-SETUP-2): ``hours`` later on the
    wall clock of ``zone`` (a phase started at the 22:00 shift ends at a 22:00 shift across a change of summer
    time). A phase started early (the night after a hammer) lasts its own length too, and every later boundary
    moves with it [interp]. Aware UTC."""
    local = start.astimezone(ZoneInfo(zone))
    return (local + timedelta(hours=hours)).astimezone(ZoneInfo("UTC"))


def start_night(game: Game, day_number: int, *, planned_at: datetime, now: datetime) -> datetime | None:
    """Start night ``day_number`` at ``planned_at`` (aware; the end of its day) in the caller's transaction: the
    clock gets ``m21_night_end`` ``night_hours`` later (M-SETUP-2) and the game thread announces it. Returns the
    planned end, or None when the night has started already."""
    settings = M21Game.objects.get(game=game)
    if ScheduledEvent.objects.filter(game=game, kind="m21_night_end", payload__night=day_number).exists():
        return None
    ends = phase_end(planned_at, settings.night_hours, game.time_zone)
    ScheduledEvent.objects.create(game=game, kind="m21_night_end", due_at=ends, payload={"night": day_number},
                                  created_at=now)
    site_message(thread_of(game), f"**Night {day_number} has begun.** It ends at {_wall(ends, game)}.",
                 max(now, planned_at))
    record_event(game, "m21.night_started", actor=None, at=now,
                 payload={"night": day_number, "starts_at": planned_at.isoformat(), "ends": ends.isoformat()})
    return ends


def site_message(inbox: Inbox, text: str, now: datetime) -> Message:
    """A message by the site itself ("Mafia Host") in ``inbox``: an announcement the game's rules make."""
    message = Message.objects.create(inbox=inbox, author_name="Mafia Host", body=text,
                                     body_html=render_markdown(text), received_at=now)
    record_event(inbox.game, "message.site_posted", actor=None, at=now,
                 payload={"inbox": inbox.pk, "message": message.pk})
    return message


def _new_inbox(game: Game, kind: str, title: str, city: City, now: datetime, *, members=(), resident=None) -> Inbox:
    inbox = Inbox.objects.create(game=game, kind=kind, title=title, city=city, resident=resident, created_at=now,
                                 day_number=game.day_number)
    Membership.objects.bulk_create(
        [Membership(inbox=inbox, resident=r, state=MembershipState.MEMBER, since=now) for r in members])
    record_event(game, "inbox.created", actor=None, at=now,
                 payload={"inbox": inbox.pk, "kind": kind, "members": len(members)})
    return inbox


def thread_of(game: Game, kind: str = InboxKind.GAME_THREAD) -> Inbox | None:
    """The game's standing inbox of ``kind`` (game thread, mafia thread, spectators' thread, office)."""
    return Inbox.objects.filter(game=game, kind=kind).order_by("id").first()


def _wall(moment: datetime, game: Game) -> str:
    local = moment.astimezone(ZoneInfo(game.time_zone))
    return f"{local:%a %d %b %Y, %H:%M} {game.time_zone}"

