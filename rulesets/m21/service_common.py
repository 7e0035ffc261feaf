"""What every M21 service module shares (RULES.md Part 2, M-SETUP-2, M-SETUP-4): the ruleset key and the phase
limits, the refusal error, who hosts a game, the game's vote rules, when a phase ends, the site's own messages, the
standing inboxes (making one, finding one) and how a planned time is written for the game's players. No state
change of its own except the site's messages and new inboxes, made inside the calling service's transaction."""
from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from cities.models import Game, ScheduledEvent
from cities.services import record_event
from inboxes import policies
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.m21.kinds import M21InboxKind
from inboxes.rendering import render_markdown
from inboxes.services import check_inbox_kind_exists
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.m21.staff_kinds import StaffKind
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
        policies.holds_role(user, game, StaffKind.HOST) or policies.holds_role(user, game, StaffKind.COHOST))


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


#: The host's choice of day vote (``M21Game.vote_preset``) -> the forum vote engine's preset
#: (``voting.forum_vote.FORUM_RULE_PRESETS``).
VOTE_PRESETS = {"m21": "end_hammer", "classic": "classic"}


def vote_rules(settings: M21Game) -> ForumVoteRules:
    """The game's day vote (M-VOTE): its preset (M21's END-hammer and plurality, or the classic forum majority
    hammer of ``voting.forum_vote.CLASSIC_FORUM_RULES``) with the host's self-vote and No Lynch settings."""
    return ForumVoteRules.from_dict({"preset": VOTE_PRESETS[settings.vote_preset],
                                     "self_votes_allowed": settings.self_votes_allowed,
                                     "no_lynch_allowed": settings.no_lynch_allowed})


def phase_end(start: datetime, hours: int, zone: str, shift: time) -> datetime:
    """When a phase that starts at ``start`` (aware) and lasts ``hours`` ends (M-SETUP-2): at the phase shift
    (``shift``, wall clock in ``zone``) nearest to its nominal end ``start + hours``; on a tie, the later one. Each
    phase shift is built with ``zoneinfo`` on its own date, so it stays at ``shift`` across a change of summer
    time. A phase cut short (a hammer, close proceedings) does not move the phase shift: the next phase is measured
    from its own start and lands on a phase shift again. The end is always after ``start``: a phase shorter than
    half a day that would round back to its own start ends at the first phase shift after it. Aware UTC."""
    tz = ZoneInfo(zone)
    nominal = start + timedelta(hours=hours)
    local_date = nominal.astimezone(tz).date()
    candidates = sorted(
        datetime.combine(local_date + timedelta(days=offset), shift, tzinfo=tz).astimezone(UTC)
        for offset in (-1, 0, 1))
    after_start = [moment for moment in candidates if moment > start]
    if not after_start:
        return next_phase_shift(start, zone, shift)
    # Nearest first; on a tie the later one (the larger moment sorts first with the negated key).
    return min(after_start, key=lambda moment: (abs(moment - nominal), -moment.timestamp()))


def next_phase_shift(moment: datetime, zone: str, shift: time) -> datetime:
    """The first phase shift (``shift`` on the wall clock of ``zone``) strictly after ``moment`` (aware). Aware
    UTC."""
    tz = ZoneInfo(zone)
    day = moment.astimezone(tz).date()
    while True:
        candidate = datetime.combine(day, shift, tzinfo=tz).astimezone(UTC)
        if candidate > moment:
            return candidate
        day += timedelta(days=1)


def start_night(game: Game, day_number: int, *, planned_at: datetime, now: datetime) -> datetime | None:
    """Start night ``day_number`` at ``planned_at`` (aware; the end of its day) in the caller's transaction: the
    clock gets ``m21_night_end`` at the phase shift nearest ``night_hours`` later (M-SETUP-2) and the game thread announces it. Returns the
    planned end, or None when the night has started already."""
    settings = M21Game.objects.get(game=game)
    if ScheduledEvent.objects.filter(game=game, kind="m21_night_end", payload__night=day_number).exists():
        return None
    ends = phase_end(planned_at, settings.night_hours, game.time_zone, settings.phase_shift)
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


def _new_inbox(game: Game, kind: str, title: str, now: datetime, *, members=(), resident=None) -> Inbox:
    check_inbox_kind_exists(game, kind)
    inbox = Inbox.objects.create(game=game, kind=kind, title=title, resident=resident, created_at=now,
                                 day_number=game.day_number)
    Membership.objects.bulk_create(
        [Membership(inbox=inbox, resident=r, state=MembershipState.MEMBER, since=now) for r in members])
    record_event(game, "inbox.created", actor=None, at=now,
                 payload={"inbox": inbox.pk, "kind": kind, "members": len(members)})
    return inbox


def thread_of(game: Game, kind: str = M21InboxKind.GAME_THREAD) -> Inbox | None:
    """The game's standing inbox of ``kind`` (game thread, mafia thread, spectators' thread, office)."""
    return Inbox.objects.filter(game=game, kind=kind).order_by("id").first()


def wall_text(moment: datetime, zone: str) -> str:
    """``moment`` (aware) as every M21 page and post writes a time: the wall clock in ``zone`` (an IANA name) with
    the zone's abbreviation, "Tue 8 Dec 2026, 04:30 GMT" (the English ``DATETIME_FORMAT`` plus the zone, as the
    game thread's post times)."""
    local = moment.astimezone(ZoneInfo(zone))
    return f"{local:%a} {local.day} {local:%b %Y, %H:%M} {local.tzname()}"


def _wall(moment: datetime, game: Game) -> str:
    return wall_text(moment, game.time_zone)

