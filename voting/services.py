"""State changes of the Lepra day (issue 4): nominations (L-NOM), proxy requests (L-NOM-6), the voting session
(L-VOTE, L-DAY-3) and the votes posted in voting inboxes (L-VOTE-2..9).

Conventions of DESIGN.md: each service is ``do_<verb>_<noun>(..., *, acting_user, now=None)`` in one transaction,
checks the rules first, writes a ``GameEvent`` and raises a ``RuleViolation`` with a translated message, changing
nothing, when refused. Counting is never done here: ``voting.tallies.tally_lepra_execution`` decides what a
message is (the same function the pages and the ``tally`` command use).
"""
from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone, translation
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from cities.errors import InvalidInput, NotAllowed, WrongState
from cities.models import (
    Alignment,
    City,
    GameEvent,
    GameStatus,
    LifeStatus,
    Resident,
    ScheduledEvent,
    StaffKind,
    StaffRole,
)
from cities.resident_services import do_set_resident_flags
from cities.services import do_replan_clock, voting_window_limits
from inboxes import policies
from inboxes.models import DeathCause, Inbox, InboxKind, Membership, Message
from inboxes.services import (
    do_kill_resident,
    do_lay_spirit_to_rest,
    do_post_site_message,
    ensure_member,
    new_inbox,
    release_from_cemetery,
    renew_court,
    write_proxy_message,
)
from kernel.audit import record_event
from kernel.rulesets import ruleset_of

from .court import court_decision
from .models import (
    CourtCase,
    CourtVote,
    DecisionSource,
    ElectionBallot,
    ElectionProxy,
    ElectionReason,
    ExecutionDecision,
    JudgeElection,
    JudgeProposal,
    JudgeRecusal,
    LepraVote,
    Nomination,
    Precinct,
    ProxyRequest,
    ProxyState,
    RemovalConfirmation,
    RemovalDemand,
    SpeechKind,
    SpeechRequest,
    SuicideDeclaration,
    VoteState,
    VotingSession,
)
from .parsing import LepraBallot, parse_lepra_election
from .spirits import spirit_rule_applies
from .tallies import LepraAccepted, LepraRefusal, LepraVoteMessage, tally_lepra_election, tally_lepra_execution

#: The first game day with nominations and executions (L-DAY-5, L-NOM-1).
FIRST_EXECUTION_DAY = 2


# --------------------------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------------------------

def _local(game, moment: datetime) -> str:
    return date_format(timezone.localtime(moment, ZoneInfo(game.time_zone)), "DATETIME_FORMAT")


def _check_running(game) -> None:
    if game.status != GameStatus.RUNNING:
        raise WrongState(_("The game is not running."))


def _check_tribune(city: City, acting_user, rule: str) -> None:
    """The city's Tribune (or the site, ``acting_user`` None)."""
    if acting_user is None:
        return
    policies.forget_viewer_cache(acting_user)
    if not policies.holds_role(acting_user, city.game_id, StaffKind.TRIBUNE, city_id=city.pk):
        raise NotAllowed(_("Only the Tribune of %(city)s may do this.") % {"city": city.name}, rule=rule)


def _check_city_votes(city: City) -> None:
    """L-WIN-2: a city whose mafia are all dead holds no more executions; one whose honest residents are all dead
    holds no more votes. (A city that never had mafia, a game before its draw, is not concerned.) Raises
    ``WrongState``."""
    living = Resident.objects.filter(city=city, status=LifeStatus.ALIVE)
    had_mafia = Resident.objects.filter(city=city, alignment=Alignment.MAFIA).exists()
    if had_mafia and not living.filter(alignment=Alignment.MAFIA).exists():
        raise WrongState(_("%(city)s has no living mafia: it holds no more executions.") % {"city": city.name},
                         rule="L-WIN-2")
    if not living.filter(alignment=Alignment.HONEST).exists():
        raise WrongState(_("%(city)s has no living honest residents: it holds no more votes.") % {"city": city.name},
                         rule="L-WIN-2")


def _after_day_death(game, now: datetime) -> str | None:
    """After a death by day: the ruleset's aftermath (Lepra: godfather re-election where needed, then the victory
    check), in this transaction (``RulesetSpec.after_day_death``)."""
    return ruleset_of(game).after_day_death(game, now=now)


def session_of(city: City, day: int) -> VotingSession | None:
    """The voting session of ``city`` on game day ``day``, or None."""
    return VotingSession.objects.filter(city=city, day=day).first()


def _voting_started(city: City, day: int, now: datetime | None = None) -> bool:
    """Voting of ``city`` on ``day`` has opened, or its planned opening is past at ``now`` (a late handler changes
    nothing: requests are cut off at the planned time, DESIGN.md "The clock")."""
    opened = Q(opened_at__isnull=False)
    if now is not None:
        opened |= Q(opens_at__lte=now, closed_at__isnull=True, closes_at__gt=now)
    return VotingSession.objects.filter(city=city, day=day).filter(opened).exists()


def _seat_of(acting_user, game) -> Resident:
    seat = policies.seat_in(acting_user, game) if acting_user is not None else None
    if seat is None:
        raise NotAllowed(_("Only residents of this game may do this."))
    return Resident.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=seat.pk)


def day_midnight(game, now: datetime) -> datetime:
    """The 00:00 in the game's zone that ends the calendar day of ``now`` (L-DAY-1, L-DAY-3), aware UTC."""
    zone = ZoneInfo(game.time_zone)
    local = timezone.localtime(now, zone)
    next_day = (local + timedelta(days=1)).date()
    return datetime(next_day.year, next_day.month, next_day.day, tzinfo=zone)


# --------------------------------------------------------------------------------------------------------------
# Nominations (L-NOM-1..3) and proxy requests (L-NOM-6)
# --------------------------------------------------------------------------------------------------------------

@transaction.atomic
def do_nominate(nominee: Resident, *, acting_user, now: datetime | None = None) -> Nomination:
    """``acting_user``'s seat nominates ``nominee`` for execution today (L-NOM-1..3).

    From day 2 (L-DAY-5); the nominator is a living resident and not a spirit (L-NOM-3); the nominee is a living
    resident of the same city (L-NOM-1) and not the sitting judge (L-NOM-2); one nomination per nominator per
    day; only until the city's voting starts. Recorded as a site message in the nominator's personal inbox.
    Returns the Nomination. Raises ``NotAllowed`` (no seat, a spirit,
    dead), ``InvalidInput`` (another city, dead nominee, the judge, a second nomination) or ``WrongState`` (day
    1, voting started, game not running).
    """
    now = now or timezone.now()
    seat = _seat_of(acting_user, nominee.game_id)
    game = seat.game
    _check_running(game)
    if game.day_number < FIRST_EXECUTION_DAY:
        raise WrongState(_("Nominations start on day 2."), rule="L-NOM-1")
    if seat.is_spirit:
        raise NotAllowed(_("A spirit cannot nominate."), rule="L-NOM-3")
    if seat.status != LifeStatus.ALIVE:
        raise NotAllowed(_("Only living residents may nominate."), rule="L-NOM-1")
    nominee = Resident.objects.select_related("city").get(pk=nominee.pk)
    if nominee.city_id != seat.city_id:
        raise InvalidInput(_("Only residents of your own city can be nominated."), rule="L-NOM-1")
    if nominee.status != LifeStatus.ALIVE:
        raise InvalidInput(_("%(name)s is not alive.") % {"name": nominee.name}, rule="L-NOM-1")
    if nominee.is_judge:
        raise InvalidInput(_("%(name)s is the sitting judge and cannot be nominated.") % {"name": nominee.name},
                           rule="L-NOM-2")
    if _voting_started(seat.city, game.day_number, now):
        raise WrongState(_("Voting has started: nominations are closed for today."), rule="L-NOM-1")
    existing = Nomination.objects.filter(nominator=seat, day=game.day_number).select_related("nominee").first()
    if existing is not None:
        raise InvalidInput(_("You have already nominated %(name)s today.") % {"name": existing.nominee.name},
                           rule="L-NOM-1")
    try:
        with transaction.atomic():
            nomination = Nomination.objects.create(game=game, city=seat.city, day=game.day_number, nominator=seat,
                                                   nominee=nominee, at=now)
    except IntegrityError:  # a second tab won the race
        raise InvalidInput(_("You have already nominated someone today."), rule="L-NOM-1") from None
    personal = _personal_inbox(seat)
    if personal is not None and personal.killed_at is None:  # the nominator's own record (the Tribune reads it)
        with translation.override(game.language):
            text = _("%(nominator)s nominates %(nominee)s for execution (day %(day)s).") % {
                "nominator": seat.name, "nominee": nominee.name, "day": game.day_number}
        do_post_site_message(personal, text, acting_user=None, now=now)
    record_event(game, "voting.nominated", actor=acting_user, at=now,
                 payload={"nomination": nomination.pk, "city": seat.city_id, "day": game.day_number,
                          "nominator": seat.pk, "nominee": nominee.pk})
    return nomination


def nominees_of(city: City, day: int) -> list[Resident]:
    """The distinct nominees of ``city`` on ``day``, in order of their first nomination."""
    seen, out = set(), []
    for n in Nomination.objects.filter(city=city, day=day).select_related("nominee").order_by("at", "id"):
        if n.nominee_id not in seen:
            seen.add(n.nominee_id)
            out.append(n.nominee)
    return out


@transaction.atomic
def do_request_proxy(nominee: Resident, *, acting_user, now: datetime | None = None) -> ProxyRequest:
    """``acting_user``'s seat asks the Tribune to vote «казнить» for ``nominee`` at the opening (L-NOM-6).

    Before voting starts, for a nominee of the seat's city today; a living resident or a spirit (both vote,
    L-VOTE-1). Returns the request. Raises ``NotAllowed`` (no seat, dead), ``InvalidInput`` (not nominated
    today, asked already) or ``WrongState`` (voting started, game not running).
    """
    now = now or timezone.now()
    seat = _seat_of(acting_user, nominee.game_id)
    game = seat.game
    _check_running(game)
    if seat.status != LifeStatus.ALIVE and not seat.is_spirit:
        raise NotAllowed(_("Only living residents may vote."), rule="L-VOTE-1")
    if _voting_started(seat.city, game.day_number, now):
        raise WrongState(_("Voting has started: proxy votes are asked before it starts."), rule="L-NOM-6")
    if not Nomination.objects.filter(city=seat.city, day=game.day_number, nominee=nominee).exists():
        raise InvalidInput(_("%(name)s is not nominated today.") % {"name": nominee.name}, rule="L-NOM-6")
    if ProxyRequest.objects.filter(resident=seat, nominee=nominee, day=game.day_number).exists():
        raise InvalidInput(_("You have already asked for this proxy vote."), rule="L-NOM-6")
    try:
        with transaction.atomic():
            proxy = ProxyRequest.objects.create(game=game, city=seat.city, day=game.day_number, resident=seat,
                                                nominee=nominee, requested_at=now)
    except IntegrityError:
        raise InvalidInput(_("You have already asked for this proxy vote."), rule="L-NOM-6") from None
    record_event(game, "voting.proxy_requested", actor=acting_user, at=now,
                 payload={"proxy": proxy.pk, "resident": seat.pk, "nominee": nominee.pk})
    return proxy


@transaction.atomic
def do_accept_proxy(proxy: ProxyRequest, *, acting_user, now: datetime | None = None) -> ProxyRequest:
    """The Tribune accepts a proxy request (L-NOM-6) before voting starts; the site casts it at the opening.
    Raises ``NotAllowed`` (not the city's Tribune) or ``WrongState`` (accepted already, voting started)."""
    now = now or timezone.now()
    proxy = ProxyRequest.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=proxy.pk)
    if acting_user is None:
        raise NotAllowed(_("Only the Tribune accepts proxy votes."), rule="L-NOM-6")
    _check_tribune(proxy.city, acting_user, "L-NOM-6")
    _check_running(proxy.game)
    if proxy.state != ProxyState.REQUESTED:
        raise WrongState(_("This proxy vote was already accepted."), rule="L-NOM-6")
    if _voting_started(proxy.city, proxy.day, now):
        raise WrongState(_("Voting has started: proxy votes are accepted before it starts."), rule="L-NOM-6")
    proxy.state = ProxyState.ACCEPTED
    proxy.accepted_at = now
    proxy.save(update_fields=["state", "accepted_at"])
    record_event(proxy.game, "voting.proxy_accepted", actor=acting_user, at=now, payload={"proxy": proxy.pk})
    return proxy


# --------------------------------------------------------------------------------------------------------------
# The session: schedule, open, close (L-VOTE, L-DAY-3)
# --------------------------------------------------------------------------------------------------------------

@transaction.atomic
def do_schedule_voting(city: City, opens_at: datetime, closes_at: datetime, *, acting_user,
                       now: datetime | None = None) -> VotingSession:
    """The Tribune sets today's execution voting of ``city`` (L-DAY-3): ``opens_at`` < ``closes_at``, both aware,
    ``opens_at`` in the future, ``closes_at`` no later than 00:00 in the game's zone ending today. Creates (or,
    before the opening, moves) the session and its ``voting_open`` / ``voting_close`` scheduled events.
    Raises ``NotAllowed`` (not the Tribune), ``InvalidInput`` (bad times) or ``WrongState`` (day 1, opened)."""
    now = now or timezone.now()
    city = City.objects.select_related("game").get(pk=city.pk)
    game = city.game
    _check_tribune(city, acting_user, "L-DAY-3")
    _check_running(game)
    if game.day_number < FIRST_EXECUTION_DAY:
        raise WrongState(_("Execution voting starts on day 2."), rule="L-DAY-5")
    _check_city_votes(city)
    if opens_at is None or closes_at is None or timezone.is_naive(opens_at) or timezone.is_naive(closes_at):
        raise InvalidInput(_("Voting times must include their time zone."), rule="L-DAY-3")
    if not opens_at < closes_at:
        raise InvalidInput(_("Voting must open before it closes."), rule="L-DAY-3")
    if opens_at <= now:
        raise InvalidInput(_("The opening of voting must be in the future."), rule="L-DAY-3")
    announce_by, midnight = voting_window_limits(game, game.day_number, now)  # the phase plan's day (issue 6)
    if announce_by is not None and now >= announce_by:
        raise WrongState(_("Voting times are announced in the first half of the day, before %(at)s.")
                         % {"at": _local(game, announce_by)}, rule="L-DAY-3")
    if closes_at > midnight:
        raise InvalidInput(_("Voting must close no later than 00:00 (%(midnight)s).")
                           % {"midnight": _local(game, midnight)}, rule="L-DAY-3")
    session = VotingSession.objects.select_for_update().filter(city=city, day=game.day_number).first()
    if session is not None and session.opened_at is not None:
        raise WrongState(_("Voting has already opened."), rule="L-DAY-3")
    if session is None:
        session = VotingSession.objects.create(game=game, city=city, day=game.day_number, opens_at=opens_at,
                                               closes_at=closes_at)
    else:
        session.opens_at, session.closes_at = opens_at, closes_at
        session.save(update_fields=["opens_at", "closes_at"])
        ScheduledEvent.objects.filter(game=game, kind__in=["voting_open", "voting_close"], done_at__isnull=True,
                                      cancelled_at__isnull=True, payload__session=session.pk).update(cancelled_at=now)
    for kind, due in (("voting_open", opens_at), ("voting_close", closes_at)):
        ScheduledEvent.objects.create(game=game, kind=kind, due_at=due, payload={"session": session.pk},
                                      created_at=now, created_by=acting_user)
    record_event(game, "voting.scheduled", actor=acting_user, at=now,
                 payload={"session": session.pk, "city": city.pk, "opens_at": opens_at.isoformat(),
                          "closes_at": closes_at.isoformat()})
    do_replan_clock(game, acting_user=acting_user, reason="voting.scheduled", now=now)  # the night's start holds
    return session


@transaction.atomic
def do_extend_voting(session: VotingSession, closes_at: datetime, *, acting_user,
                     now: datetime | None = None) -> VotingSession:
    """The Tribune moves the close of open voting to ``closes_at`` (aware, in the future, no later than 00:00
    ending the day it opened, L-DAY-3); the ``voting_close`` event moves with it. Raises ``NotAllowed``,
    ``InvalidInput`` (bad time) or ``WrongState`` (not open)."""
    now = now or timezone.now()
    session = VotingSession.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=session.pk)
    game = session.game
    if acting_user is None:
        raise NotAllowed(_("Only the Tribune extends voting."), rule="L-DAY-3")
    _check_tribune(session.city, acting_user, "L-DAY-3")
    _check_running(game)
    if not session.is_open:
        raise WrongState(_("Voting is not open."), rule="L-DAY-3")
    if closes_at is None or timezone.is_naive(closes_at) or closes_at <= now:
        raise InvalidInput(_("The new closing time must be in the future."), rule="L-DAY-3")
    midnight = voting_window_limits(game, session.day, session.opens_at)[1]
    if closes_at > midnight:
        raise InvalidInput(_("Voting must close no later than 00:00 (%(midnight)s).")
                           % {"midnight": _local(game, midnight)}, rule="L-DAY-3")
    old = session.closes_at
    session.closes_at = closes_at
    session.save(update_fields=["closes_at"])
    ScheduledEvent.objects.filter(game=game, kind="voting_close", done_at__isnull=True, cancelled_at__isnull=True,
                                  payload__session=session.pk).update(cancelled_at=now)
    ScheduledEvent.objects.create(game=game, kind="voting_close", due_at=closes_at, payload={"session": session.pk},
                                  created_at=now, created_by=acting_user)
    record_event(game, "voting.extended", actor=acting_user, at=now,
                 payload={"session": session.pk, "from": old.isoformat(), "to": closes_at.isoformat()})
    do_replan_clock(game, acting_user=acting_user, reason="voting.extended", now=now)
    return session


def _voting_title(game, nominee: Resident) -> str:
    with translation.override(game.language):
        return _("Execution voting, day %(day)d: %(name)s") % {"day": game.day_number, "name": nominee.name}


@transaction.atomic
def do_open_voting(session: VotingSession, *, acting_user, now: datetime | None = None) -> list[Inbox]:
    """Open the voting of ``session`` (L-VOTE-1, L-INBOX-9): one voting inbox per living nominee, organizer the
    city's Tribune, members the living residents of the city and its spirits; then the accepted proxy votes are
    cast at the opening time (L-NOM-6). By the scheduler (``acting_user`` None, at ``opens_at``) or the Tribune
    (earlier: the opening moves to ``now``). Confirmed suicides are applied first (L-NOM-5): those residents
die at the opening and get no inbox and no vote. Returns the inboxes. Raises ``NotAllowed`` or ``WrongState``
    (opened already, closed, game not running)."""
    now = now or timezone.now()
    session = VotingSession.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=session.pk)
    city, game = session.city, session.game
    _check_tribune(city, acting_user, "L-VOTE-1")
    _check_running(game)
    if session.opened_at is not None:
        raise WrongState(_("Voting has already opened."), rule="L-VOTE-1")
    _check_city_votes(city)
    if acting_user is not None and now < session.opens_at:
        session.opens_at = now
    if now >= session.closes_at:
        raise WrongState(_("The voting time is already over."), rule="L-VOTE-8")
    session.opened_at = now
    session.save(update_fields=["opens_at", "opened_at"])
    suicides = _apply_confirmed_suicides(city, session.day, acting_user=acting_user, now=now)
    if suicides and _after_day_death(game, now) is not None:
        record_event(game, "voting.opened", actor=acting_user, at=now,
                     payload={"session": session.pk, "inboxes": [], "suicides": suicides})
        return []  # the game ended with the suicides (L-WIN-1)
    tribune = StaffRole.objects.get(city=city, kind=StaffKind.TRIBUNE)
    members = list(Resident.objects.filter(city=city).filter(status=LifeStatus.ALIVE)
                   | Resident.objects.filter(city=city, is_spirit=True))
    inboxes = {}
    for nominee in nominees_of(city, session.day):
        if nominee.status != LifeStatus.ALIVE:
            continue
        inbox = new_inbox(game, InboxKind.VOTING, title=_voting_title(game, nominee), actor=acting_user, now=now,
                           city=city, organizer=tribune, resident=nominee, members=members)
        inboxes[nominee.pk] = inbox
    member_ids = {r.pk for r in members}
    for proxy in ProxyRequest.objects.filter(city=city, day=session.day, state=ProxyState.ACCEPTED).select_related(
            "resident"):
        inbox = inboxes.get(proxy.nominee_id)
        if inbox is None or proxy.resident_id not in member_ids:
            continue
        message = write_proxy_message(inbox, proxy.resident, "казнить", at=session.opens_at)
        LepraVote.objects.create(inbox=inbox, voter=proxy.resident, message=message, proxy=True,
                                 cast_at=session.opens_at)
        proxy.state = ProxyState.CAST
        proxy.save(update_fields=["state"])
    record_event(game, "voting.opened", actor=acting_user, at=now,
                 payload={"session": session.pk, "inboxes": [i.pk for i in inboxes.values()], "suicides": suicides})
    return list(inboxes.values())


def session_for_inbox(inbox: Inbox) -> VotingSession | None:
    return VotingSession.objects.filter(city_id=inbox.city_id, day=inbox.day_number).first()


def compute_session_tally(session: VotingSession, *, closes_at: datetime | None = None):
    """The tally of ``session`` from its stored messages (L-VOTE-4/5): ``(LepraExecutionResult, names)`` where
    the result keys residents by ``str(pk)`` and ``names`` maps those keys to names. Only residents' messages are
    counted (the Tribune's posts are announcements). The voters are every seat that was made a member of the
    session's voting inboxes at the opening [interp: a voter who dies during voting keeps the votes they cast while
    alive; only the nominee's death voids, L-VOTE-9]. Returns ``(None, {})`` before the opening."""
    if session.opened_at is None:
        return None, {}
    inboxes = list(Inbox.objects.filter(city_id=session.city_id, day_number=session.day, kind=InboxKind.VOTING)
                   .select_related("resident").order_by("id"))
    names = {}
    voters = set()
    for m in Membership.objects.filter(inbox__in=inboxes).select_related("resident"):
        voters.add(str(m.resident_id))
        names[str(m.resident_id)] = m.resident.name
    proxies = set(LepraVote.objects.filter(inbox__in=inboxes, proxy=True).values_list("message_id", flat=True))
    nominee_of = {i.pk: str(i.resident_id) for i in inboxes}
    for i in inboxes:
        names[str(i.resident_id)] = i.resident.name
    messages = [
        LepraVoteMessage(seq=m.pk, at=m.received_at, author=str(m.author_resident_id), inbox=nominee_of[m.inbox_id],
                         text=m.body, proxy=m.pk in proxies)
        for m in Message.objects.filter(inbox__in=inboxes, author_resident__isnull=False).order_by("received_at", "id")
    ]
    void = [str(i.resident_id) for i in inboxes if i.resident.status != LifeStatus.ALIVE]
    result = tally_lepra_execution(session.opens_at, closes_at or session.closes_at, voters,
                                   [str(i.resident_id) for i in inboxes], messages, void_inboxes=void)
    return result, names


def _refusal_error(refusal: LepraRefusal, session: VotingSession | None, game, *, by_nominee: bool = False):
    """The translated error for a refused voting post (L-VOTE-2/3/8); ``by_nominee``: the author is the nominee
    of the voting inbox (a second last word is refused with its own reason, L-VOTE-3)."""
    if refusal == LepraRefusal.NOT_OPEN_YET:
        if session is None:
            return WrongState(_("Voting has not opened yet."), rule="L-VOTE-8")
        return WrongState(_("Voting has not opened yet: it opens at %(at)s.") % {"at": _local(game, session.opens_at)},
                          rule="L-VOTE-8")
    if refusal == LepraRefusal.CLOSED:
        return WrongState(_("Voting closed at %(at)s: your message came too late.")
                          % {"at": _local(game, session.closes_at)}, rule="L-VOTE-8")
    if refusal == LepraRefusal.NOT_A_MEMBER:
        return NotAllowed(_("You have no vote here."), rule="L-VOTE-1")
    if refusal == LepraRefusal.RETRACTION_WITHOUT_VOTE:
        return InvalidInput(_("You have no vote here to retract."), rule="L-VOTE-2")
    if refusal == LepraRefusal.ALREADY_VOTING:
        return InvalidInput(_("You already vote here: this vote does not count again."), rule="L-VOTE-2")
    if refusal == LepraRefusal.FLOOD and by_nominee:
        return InvalidInput(_("You have already said your last word: only «казнить» or «не казнить» can be "
                              "posted here now."), rule="L-VOTE-3")
    return InvalidInput(_("Only «казнить» or «не казнить» can be posted here."), rule="L-VOTE-3")


def check_voting_post(inbox: Inbox, seat: Resident | None, text: str, now: datetime) -> LepraAccepted | None:
    """Decide a post in the voting ``inbox`` (locked by the caller) by ``seat`` at receive time ``now``, before it
    is stored (L-VOTE-2, L-VOTE-3, L-VOTE-8): returns what it does (vote, retraction, last word), or raises the
    translated refusal and nothing is stored. A staff post (``seat`` None: the Tribune) is an announcement and
    returns None. The decision is the pure tally's, over the seat's own stored messages plus this one."""
    if seat is None:
        return None
    session = session_for_inbox(inbox)
    if session is None or session.opened_at is None:
        raise _refusal_error(LepraRefusal.NOT_OPEN_YET, session, inbox.game)
    # One query: the seat's own messages here, each flagged when it is a proxy vote cast for them (L-NOM-6).
    own = list(Message.objects.filter(inbox=inbox, author_resident=seat)
               .annotate(is_proxy=Exists(LepraVote.objects.filter(message=OuterRef("pk"), voter=seat, proxy=True)))
               .only("pk", "received_at", "body").order_by("received_at", "id"))
    key, nominee = str(seat.pk), str(inbox.resident_id)
    messages = [LepraVoteMessage(seq=m.pk, at=m.received_at, author=key, inbox=nominee, text=m.body,
                                 proxy=m.is_proxy) for m in own]
    seq = max((m.pk for m in own), default=0) + 1
    messages.append(LepraVoteMessage(seq=seq, at=now, author=key, inbox=nominee, text=text))
    result = tally_lepra_execution(session.opens_at, session.closes_at, [key], [nominee], messages)
    receipt = next(r for r in result.receipts if r.seq == seq)
    if receipt.refusal is not None:
        raise _refusal_error(receipt.refusal, session, inbox.game, by_nominee=seat.pk == inbox.resident_id)
    return receipt.accepted


def record_voting_post(inbox: Inbox, seat: Resident | None, message: Message, accepted: LepraAccepted | None,
                       now: datetime) -> None:
    """Keep the standing-vote index in step with an accepted post (called by ``do_post_message`` in its
    transaction). A second standing vote is impossible: the named unique constraint refuses it, and the refusal
    is the player's "you already vote here" (double submits, two tabs)."""
    if accepted == LepraAccepted.VOTE:
        # No savepoint: the caller's transaction holds the inbox lock, under which the tally saw no standing vote;
        # should the constraint still refuse, the refusal leaves this function and the whole post rolls back.
        try:
            LepraVote.objects.create(inbox=inbox, voter=seat, message=message, cast_at=now)
        except IntegrityError:
            raise InvalidInput(_("You already vote here: this vote does not count again."), rule="L-VOTE-2") from None
    elif accepted == LepraAccepted.RETRACTION:
        vote = LepraVote.objects.select_for_update().filter(inbox=inbox, voter=seat, state=VoteState.STANDING).first()
        if vote is None:
            raise InvalidInput(_("You have no vote here to retract."), rule="L-VOTE-2")
        vote.state = VoteState.RETRACTED
        vote.retracted_by = message
        vote.save(update_fields=["state", "retracted_by"])


def _result_text(game, city: City, result, names: dict[str, str]) -> str:
    def n(key):
        return names.get(key, key)

    with translation.override(game.language):
        lines = [_("**Execution voting results, %(city)s, day %(day)d**") % {"city": city.name, "day": game.day_number},
                 ""]
        for tally in result.nominees:
            if tally.void:
                lines.append(_("- %(name)s: died during voting; the votes are void (%(voters)s).")
                             % {"name": n(tally.nominee), "voters": ", ".join(n(v) for v in tally.voters) or "—"})
                continue
            line = _("- %(name)s: %(count)d (%(voters)s)") % {
                "name": n(tally.nominee), "count": tally.count, "voters": ", ".join(n(v) for v in tally.voters) or "—"}
            if tally.changed_mind:
                line += "; " + _("changed their mind: %(names)s") % {"names": ", ".join(n(v) for v in tally.changed_mind)}
            lines.append(line)
        lines.append("")
        if result.leader is None:
            lines.append(_("No votes: the case goes to the Procurator, awaiting a decision."))
        elif result.tied_leaders:
            lines.append(_("Tie among %(names)s; the leader by the earlier latest vote: %(leader)s.")
                         % {"names": ", ".join(n(x) for x in result.tied_leaders), "leader": n(result.leader)})
        else:
            lines.append(_("Leader: %(leader)s.") % {"leader": n(result.leader)})
        return "\n".join(lines)


@transaction.atomic
def do_close_voting(session: VotingSession, *, acting_user, now: datetime | None = None) -> VotingSession:
    """Close the voting of ``session`` (L-VOTE-6, L-VOTE-8): by the scheduler at ``closes_at`` or the Tribune
    (earlier: the close moves to ``now``). Kills the open voting inboxes, computes the result with
    ``tally_lepra_execution`` over the stored messages (the cut-off is ``closes_at`` whatever the job's timing),
    stores it and posts it in the current city inbox; the city's spirits then go to the cemetery (L-SPIRIT-2
[interp: their day ends with the voting]). Returns the session. Raises ``NotAllowed`` or
    ``WrongState`` (not opened, closed already).

    Atomic with the posts it cuts off: the session and every voting inbox of the day are locked BEFORE the clock
    is read (posts lock their inbox before reading theirs, ``do_post_message``), so a vote racing the close is
    either stored before it, with an earlier receive time, and counted, or refused as too late: the result and
    the stored vote index always agree."""
    session = VotingSession.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=session.pk)
    city, game = session.city, session.game
    open_inboxes = list(Inbox.objects.select_for_update(of=("self",)).filter(
        city=city, day_number=session.day, kind=InboxKind.VOTING, killed_at__isnull=True).order_by("pk"))
    now = now or timezone.now()
    _check_tribune(city, acting_user, "L-VOTE-6")
    if session.opened_at is None:
        raise WrongState(_("Voting has not opened yet."), rule="L-VOTE-6")
    if session.closed_at is not None:
        raise WrongState(_("Voting is already closed."), rule="L-VOTE-6")
    if acting_user is not None and now < session.closes_at:
        session.closes_at = max(now, session.opens_at + timedelta(microseconds=1))
    for inbox in open_inboxes:
        inbox.killed_at = now
        inbox.save(update_fields=["killed_at"])
        record_event(game, "inbox.killed", actor=acting_user, at=now, payload={"inbox": inbox.pk})
    result, names = compute_session_tally(session)
    data = result.as_dict()
    data["names"] = names
    session.closed_at = now
    session.result = data
    session.save(update_fields=["closes_at", "closed_at", "result"])
    city_inbox = Inbox.objects.filter(city=city, kind=InboxKind.CITY, rolled_over_at__isnull=True,
                                      killed_at__isnull=True).order_by("-id").first()
    if city_inbox is not None:
        do_post_site_message(city_inbox, _result_text(game, city, result, names), acting_user=None, now=now)
    for spirit in Resident.objects.filter(city=city, is_spirit=True).exclude(status=LifeStatus.ALIVE):
        # L-SPIRIT-2: a spirit's day ends with the city's voting [interp]: to the cemetery now.
        do_lay_spirit_to_rest(spirit, acting_user=None, now=now)
    record_event(game, "voting.closed", actor=acting_user, at=now,
                 payload={"session": session.pk, "leader": result.leader, "tied": list(result.tied_leaders)})
    return session



# --------------------------------------------------------------------------------------------------------------
# Suicide (L-NOM-5)
# --------------------------------------------------------------------------------------------------------------

@transaction.atomic
def do_declare_suicide(game, *, acting_user, now: datetime | None = None) -> SuicideDeclaration:
    """``acting_user``'s seat in ``game`` declares suicide for today (L-NOM-5): a living resident (not a spirit), from day 2,
    before voting starts (nominations close then). Confirmed by the Tribune, applied at the opening. Raises
    ``NotAllowed`` (no seat, dead, spirit), ``InvalidInput`` (declared already) or ``WrongState`` (day 1, voting
    started, game not running)."""
    now = now or timezone.now()
    seat = _seat_of(acting_user, game)
    game = seat.game
    _check_running(game)
    if game.day_number < FIRST_EXECUTION_DAY:
        raise WrongState(_("Suicide can be declared from day 2."), rule="L-NOM-5")
    if seat.status != LifeStatus.ALIVE or seat.is_spirit:
        raise NotAllowed(_("Only living residents may declare suicide."), rule="L-NOM-5")
    if _voting_started(seat.city, game.day_number, now):
        raise WrongState(_("Voting has started: nominations are closed for today."), rule="L-NOM-5")
    if SuicideDeclaration.objects.filter(resident=seat, day=game.day_number).exists():
        raise InvalidInput(_("You have already declared suicide today."), rule="L-NOM-5")
    declaration = SuicideDeclaration.objects.create(game=game, city=seat.city, day=game.day_number, resident=seat,
                                                    declared_at=now)
    record_event(game, "voting.suicide_declared", actor=acting_user, at=now,
                 payload={"declaration": declaration.pk, "resident": seat.pk})
    return declaration


@transaction.atomic
def do_confirm_suicide(declaration: SuicideDeclaration, *, acting_user, now: datetime | None = None
                       ) -> SuicideDeclaration:
    """The Tribune confirms a suicide declaration (L-NOM-5) before voting starts; it is applied at the opening.
    Raises ``NotAllowed`` (not the city's Tribune) or ``WrongState`` (confirmed already, voting started)."""
    now = now or timezone.now()
    declaration = SuicideDeclaration.objects.select_for_update(of=("self",)).select_related("city", "game").get(
        pk=declaration.pk)
    if acting_user is None:
        raise NotAllowed(_("Only the Tribune confirms a suicide."), rule="L-NOM-5")
    _check_tribune(declaration.city, acting_user, "L-NOM-5")
    _check_running(declaration.game)
    if declaration.confirmed_at is not None:
        raise WrongState(_("This suicide is already confirmed."), rule="L-NOM-5")
    if _voting_started(declaration.city, declaration.day, now):
        raise WrongState(_("Voting has started: nominations are closed for today."), rule="L-NOM-5")
    declaration.confirmed_at = now
    declaration.save(update_fields=["confirmed_at"])
    record_event(declaration.game, "voting.suicide_confirmed", actor=acting_user, at=now,
                 payload={"declaration": declaration.pk})
    return declaration


def _apply_confirmed_suicides(city: City, day: int, *, acting_user, now: datetime) -> list[int]:
    """At the opening, the confirmed suicides of ``city`` die (L-NOM-5, L-DEATH-1: cemetery, status announced by
    the daily post). Returns the residents' ids."""
    applied = []
    for declaration in SuicideDeclaration.objects.select_for_update(of=("self",)).filter(
            city=city, day=day, confirmed_at__isnull=False, applied_at__isnull=True).select_related("resident"):
        if declaration.resident.status == LifeStatus.ALIVE:
            do_kill_resident(declaration.resident, DeathCause.SUICIDE, acting_user=None, now=now)
            applied.append(declaration.resident_id)
        declaration.applied_at = now
        declaration.save(update_fields=["applied_at"])
    return applied


# --------------------------------------------------------------------------------------------------------------
# The Procurator's decision (L-VOTE-7)
# --------------------------------------------------------------------------------------------------------------

def awaiting_procurator(city: City, day: int) -> bool:
    """True when ``city`` waits for the Procurator to name the executed on ``day`` (L-VOTE-7): no decision yet,
    and either its voting closed without any vote, or it has no nominee at all. A city that holds no more
    executions or votes (L-WIN-2: no living mafia, or no living honest resident) awaits nothing."""
    if ExecutionDecision.objects.filter(city=city, day=day).exists():
        return False
    try:
        _check_city_votes(city)
    except WrongState:
        return False
    session = VotingSession.objects.filter(city=city, day=day).first()
    if session is None:
        return not Nomination.objects.filter(city=city, day=day).exists()
    return session.closed_at is not None and (session.result or {}).get("leader") is None


@transaction.atomic
def do_decide_execution(city: City, resident: Resident, *, acting_user, now: datetime | None = None
                        ) -> ExecutionDecision:
    """The Procurator names the executed of ``city`` today when it had no nominees or no votes (L-VOTE-7): the
    resident is executed at once (``do_kill_resident``, cause executed). From day 2, a living resident of the city.
    Raises ``NotAllowed`` (not the Procurator), ``InvalidInput`` (another city, not living) or ``WrongState``
    (day 1; a city without living mafia or honest residents, L-WIN-2; not awaiting a decision: voting pending or
    open, or a leader to put before the court)."""
    now = now or timezone.now()
    city = City.objects.select_related("game").get(pk=city.pk)
    game = city.game
    if acting_user is None or not policies.holds_role(acting_user, game, StaffKind.PROCURATOR):
        raise NotAllowed(_("Only the Procurator names the executed when nobody was voted for."), rule="L-VOTE-7")
    _check_running(game)
    if game.day_number < FIRST_EXECUTION_DAY:
        raise WrongState(_("Executions start on day 2."), rule="L-DAY-5")
    if resident.city_id != city.pk:
        raise InvalidInput(_("%(name)s does not live in %(city)s.") % {"name": resident.name, "city": city.name},
                           rule="L-VOTE-7")
    if resident.status != LifeStatus.ALIVE:
        raise InvalidInput(_("%(name)s is not alive.") % {"name": resident.name}, rule="L-VOTE-7")
    _check_city_votes(city)
    VotingSession.objects.select_for_update().filter(city=city, day=game.day_number).first()
    if not awaiting_procurator(city, game.day_number):
        raise WrongState(_("%(city)s is not awaiting the Procurator's decision today.") % {"city": city.name},
                         rule="L-VOTE-7")
    decision = ExecutionDecision.objects.create(game=game, city=city, day=game.day_number, resident=resident,
                                                source=DecisionSource.PROCURATOR, at=now)
    do_kill_resident(resident, DeathCause.EXECUTED, acting_user=acting_user, now=now)
    record_event(game, "voting.execution_decided", actor=acting_user, at=now,
                 payload={"decision": decision.pk, "city": city.pk, "resident": resident.pk, "source": "procurator"})
    _after_day_death(game, now)
    return decision


# --------------------------------------------------------------------------------------------------------------
# The spirit rule in the morning (L-SPIRIT-1/2)
# --------------------------------------------------------------------------------------------------------------

def _night_start(game, now: datetime) -> datetime:
    """The start of the night that ended this morning [interp]: 24 hours before today's day start (L-DAY-1)."""
    zone = ZoneInfo(game.time_zone)
    local = timezone.localtime(now, zone)
    start = datetime.combine(local.date(), game.day_start, tzinfo=zone)
    if start > now:
        start -= timedelta(days=1)
    return start - timedelta(days=1)


@transaction.atomic
def do_apply_spirit_rule(city: City, *, acting_user=None, now: datetime | None = None) -> list[Resident]:
    """Apply L-SPIRIT-1 to ``city`` in the morning: when its living honest residents are as many as its living
    mafia (``voting.spirits.spirit_rule_applies``), the honest residents of the city killed that night (cause
    killed, died since ``_night_start``) become spirits for the day (L-SPIRIT-2): ``is_spirit`` set, taken out of
    the cemetery (removed there), still banned in the city inbox; they get a vote in every voting inbox opened
    today and go to the cemetery at the end of the day (``inboxes.services.do_lay_spirit_to_rest``).

    By the site (``acting_user`` None) or the Procurator, before the city's voting opens. Returns the new spirits
    (empty when the rule does not apply; a second run changes nothing). Raises ``NotAllowed`` or ``WrongState``
    (voting opened, game not running). The counts stay inside: only the result (who is a spirit) is shown.
    """

    now = now or timezone.now()
    city = City.objects.select_related("game").get(pk=city.pk)
    game = city.game
    if acting_user is not None and not policies.holds_role(acting_user, game, StaffKind.PROCURATOR):
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-SPIRIT-1")
    _check_running(game)
    if _voting_started(city, game.day_number, now):
        raise WrongState(_("Voting has started: the spirit rule is applied in the morning."), rule="L-SPIRIT-1")
    residents = list(Resident.objects.select_for_update(of=("self",)).filter(city=city))
    living = [r for r in residents if r.status == LifeStatus.ALIVE]
    honest = sum(1 for r in living if r.alignment == Alignment.HONEST)
    if not spirit_rule_applies(honest, len(living) - honest):
        return []
    since = _night_start(game, now)
    killed_ids = {e.payload.get("resident") for e in GameEvent.objects.filter(
        game=game, kind="resident.died", at__gt=since, at__lte=now, payload__cause=DeathCause.KILLED)}
    spirits = [r for r in residents if r.pk in killed_ids and r.status == LifeStatus.DEAD and not r.is_spirit
               and r.alignment == Alignment.HONEST]
    for r in spirits:
        r.is_spirit = True
        r.save(update_fields=["is_spirit"])
        release_from_cemetery(r, now=now)
        policies.forget_viewer_cache(r.user)
    if spirits:
        record_event(game, "voting.spirits", actor=acting_user, at=now,
                     payload={"city": city.pk, "spirits": [r.pk for r in spirits]})
    return spirits


# --------------------------------------------------------------------------------------------------------------
# The Supreme Court (L-COURT-1..4)
# --------------------------------------------------------------------------------------------------------------

def _court_inbox(game):
    return Inbox.objects.filter(game=game, kind=InboxKind.COURT, rolled_over_at__isnull=True,
                                killed_at__isnull=True).order_by("-id").first()


def _sitting_judges(game) -> list[Resident]:
    return list(Resident.objects.filter(game=game, is_judge=True, status=LifeStatus.ALIVE).order_by("city__number"))


@transaction.atomic
def do_put_before_court(session: VotingSession, deadline: datetime, *, acting_user,
                        now: datetime | None = None) -> CourtCase:
    """The Arbiter puts ``session``'s result before the Supreme Court (L-COURT-1) until ``deadline`` (aware UTC,
    future): the candidates are the L-VOTE-5 leader or the tied leaders (L-COURT-2). Announced in the court
    inbox; a ``court_deadline`` event closes the case (L-COURT-4). Raises ``NotAllowed`` (not the Arbiter),
    ``InvalidInput`` (bad deadline) or ``WrongState`` (voting not closed, no leader: L-VOTE-7, already before
    the court)."""
    now = now or timezone.now()
    session = VotingSession.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=session.pk)
    game, city = session.game, session.city
    if acting_user is None or not policies.holds_role(acting_user, game, StaffKind.ARBITER):
        raise NotAllowed(_("Only the Supreme Arbiter puts a case before the court."), rule="L-COURT-1")
    _check_running(game)
    if session.closed_at is None:
        raise WrongState(_("Voting is not closed yet."), rule="L-COURT-1")
    leader = (session.result or {}).get("leader")
    if leader is None:
        raise WrongState(_("Nobody was voted for: the Procurator decides."), rule="L-VOTE-7")
    if CourtCase.objects.filter(session=session).exists():
        raise WrongState(_("This result is already before the court."), rule="L-COURT-1")
    if deadline is None or timezone.is_naive(deadline) or deadline <= now:
        raise InvalidInput(_("The court's deadline must be a future time with its time zone."), rule="L-COURT-4")
    candidates = session.result.get("tied_leaders") or [leader]
    case = CourtCase.objects.create(session=session, game=game, city=city, day=session.day, candidates=candidates,
                                    leader_id=int(leader), deadline=deadline, opened_at=now)
    ScheduledEvent.objects.create(game=game, kind="court_deadline", due_at=deadline, payload={"case": case.pk},
                                  created_at=now, created_by=acting_user)
    court = _court_inbox(game)
    if court is not None:
        names = session.result.get("names", {})
        with translation.override(game.language):
            text = _("The court decides on %(city)s: %(candidates)s. Deadline: %(deadline)s.") % {
                "city": city.name, "candidates": ", ".join(names.get(c, c) for c in candidates),
                "deadline": _local(game, deadline)}
        do_post_site_message(court, text, acting_user=None, now=now)
    record_event(game, "court.case_opened", actor=acting_user, at=now,
                 payload={"case": case.pk, "session": session.pk, "candidates": candidates})
    # A deadline after the day's end holds the night; its end, the draft and the next day move with it.
    do_replan_clock(game, acting_user=acting_user, reason="court.case_opened", now=now)
    return case


@transaction.atomic
def do_court_vote(case: CourtCase, choice: Resident, *, acting_user, now: datetime | None = None) -> CourtVote:
    """A sitting judge confirms the sentence of ``choice`` (L-COURT-2): the leader, or one of the tied leaders.
    One vote per judge, never changed. When a candidate is confirmed (``voting.court.court_decision``, L-COURT-3)
    the sentence is executed at once. Raises ``NotAllowed`` (not a sitting judge), ``InvalidInput`` (not a
    candidate, voted already) or ``WrongState`` (decided, past the deadline)."""
    now = now or timezone.now()
    case = CourtCase.objects.select_for_update(of=("self",)).select_related("game", "city").get(pk=case.pk)
    game = case.game
    seat = policies.seat_in(acting_user, game) if acting_user is not None else None
    if seat is None or not seat.is_judge or seat.status != LifeStatus.ALIVE:
        raise NotAllowed(_("Only sitting judges vote in the Supreme Court."), rule="L-COURT-1")
    _check_running(game)
    if case.decided_at is not None:
        raise WrongState(_("The court has already decided this case."), rule="L-COURT-3")
    if now >= case.deadline:
        raise WrongState(_("The court's deadline has passed."), rule="L-COURT-4")
    if str(choice.pk) not in case.candidates:
        raise InvalidInput(_("%(name)s is not before the court.") % {"name": choice.name}, rule="L-COURT-2")
    if CourtVote.objects.filter(case=case, judge=seat).exists():
        raise InvalidInput(_("You have already voted in this case."), rule="L-COURT-3")
    try:
        with transaction.atomic():
            vote = CourtVote.objects.create(case=case, judge=seat, choice=choice, at=now)
    except IntegrityError:
        raise InvalidInput(_("You have already voted in this case."), rule="L-COURT-3") from None
    record_event(game, "court.voted", actor=acting_user, at=now, payload={"case": case.pk, "judge": seat.pk,
                                                                         "choice": choice.pk})
    votes = {str(v.judge_id): str(v.choice_id) for v in CourtVote.objects.filter(case=case)}
    sentenced = court_decision(case.candidates, votes, len(_sitting_judges(game)), final=False)
    if sentenced is not None:
        _sentence(case, Resident.objects.get(pk=int(sentenced)), fallback=False, actor=acting_user, now=now)
    return vote


@transaction.atomic
def do_close_court_case(case: CourtCase, *, acting_user, now: datetime | None = None) -> CourtCase:
    """At the court's deadline (the scheduler, or the Arbiter): the votes as they are decide (L-COURT-3); without a
    decision the L-VOTE-5 leader is executed (L-COURT-4). Raises ``NotAllowed`` or ``WrongState`` (decided
    already, before the deadline for the scheduler)."""
    now = now or timezone.now()
    case = CourtCase.objects.select_for_update(of=("self",)).select_related("game", "city", "leader").get(pk=case.pk)
    game = case.game
    if acting_user is not None and not policies.holds_role(acting_user, game, StaffKind.ARBITER):
        raise NotAllowed(_("Only the Supreme Arbiter closes a court case."), rule="L-COURT-4")
    if case.decided_at is not None:
        raise WrongState(_("The court has already decided this case."), rule="L-COURT-3")
    votes = {str(v.judge_id): str(v.choice_id) for v in CourtVote.objects.filter(case=case)}
    judges = max(len(_sitting_judges(game)), len(votes), 1)
    sentenced = court_decision(case.candidates, votes, judges, final=True)
    if sentenced is None:
        _sentence(case, case.leader, fallback=True, actor=acting_user, now=now)
    else:
        _sentence(case, Resident.objects.get(pk=int(sentenced)), fallback=False, actor=acting_user, now=now)
    return case


def _sentence(case: CourtCase, resident: Resident, *, fallback: bool, actor, now: datetime) -> None:
    """Execute ``resident`` (L-COURT-4): record the decision, kill (cause executed), announce the executed with
    the alignment in the city inbox (L-DEATH-2)."""
    game = case.game
    case.decided_at, case.sentenced, case.fallback = now, resident, fallback
    case.save(update_fields=["decided_at", "sentenced", "fallback"])
    ExecutionDecision.objects.create(game=game, city=case.city, day=case.day, resident=resident,
                                     source=DecisionSource.COURT, at=now)
    resident = Resident.objects.get(pk=resident.pk)
    if resident.status == LifeStatus.ALIVE:
        do_kill_resident(resident, DeathCause.EXECUTED, acting_user=None, now=now)
    resident.alignment_announced = True
    resident.save(update_fields=["alignment_announced"])
    city_inbox = Inbox.objects.filter(city=case.city, kind=InboxKind.CITY, rolled_over_at__isnull=True,
                                      killed_at__isnull=True).order_by("-id").first()
    with translation.override(game.language):
        side = _("commissar") if resident.is_commissar else resident.get_alignment_display()
        text = (_("The Supreme Court did not decide; the leader of the vote is executed: %(name)s (%(side)s).")
                if fallback else _("The Supreme Court sentenced %(name)s (%(side)s).")) % {"name": resident.name,
                                                                                         "side": side}
    if city_inbox is not None:
        do_post_site_message(city_inbox, text, acting_user=None, now=now)
    record_event(game, "court.sentenced", actor=actor, at=now,
                 payload={"case": case.pk, "resident": resident.pk, "fallback": fallback})
    _after_day_death(game, now)


# --------------------------------------------------------------------------------------------------------------
# Confrontation and last word requests (L-NOM-4)
# --------------------------------------------------------------------------------------------------------------

@transaction.atomic
def do_request_speech(game, kind: str, *, acting_user, other: Resident | None = None, note: str = "",
                      now: datetime | None = None) -> SpeechRequest:
    """``acting_user``'s seat demands a confrontation with ``other`` or a last word (L-NOM-4); the record goes to
    the Tribune and the Procurator. A living resident (or a spirit), from day 2; ``other`` a living resident of the
    game, not the seat. Raises ``NotAllowed`` (no seat, dead) or ``InvalidInput`` (unknown kind, bad other, long
    note) or ``WrongState`` (game not running, day 1)."""
    now = now or timezone.now()
    seat = _seat_of(acting_user, game)
    game = seat.game
    _check_running(game)
    if game.day_number < FIRST_EXECUTION_DAY:
        raise WrongState(_("Requests start on day 2."), rule="L-NOM-4")
    if seat.status != LifeStatus.ALIVE and not seat.is_spirit:
        raise NotAllowed(_("Only living residents may ask for this."), rule="L-NOM-4")
    if kind not in SpeechKind.values:
        raise InvalidInput(_("Choose a confrontation or a last word."), rule="L-NOM-4")
    if kind == SpeechKind.CONFRONTATION:
        if other is None or other.game_id != game.pk or other.pk == seat.pk or other.status != LifeStatus.ALIVE:
            raise InvalidInput(_("Choose another living resident for the confrontation."), rule="L-NOM-4")
    else:
        other = None
    note = (note or "").strip()
    if len(note) > 300:
        raise InvalidInput(_("The note is too long: %(length)d characters, at most %(max)d.")
                           % {"length": len(note), "max": 300})
    request = SpeechRequest.objects.create(game=game, city=seat.city, day=game.day_number, resident=seat, kind=kind,
                                           other=other, note=note, at=now)
    record_event(game, "voting.speech_requested", actor=acting_user, at=now,
                 payload={"request": request.pk, "kind": kind, "resident": seat.pk,
                          "other": other.pk if other else None})
    return request


# ==============================================================================================================
# Judges (issue 5): candidates (L-JUDGE-3), elections and precincts (L-JUDGE-4..6, L-DAY-4/5, L-INBOX-10),
# removal demands (L-JUDGE-8, L-INBOX-11), recusal (L-JUDGE-9) and the court that follows the judges
# (L-JUDGE-10, L-INBOX-2)
# ==============================================================================================================

#: How long before its opening an election must be announced (L-DAY-4): 6 h, 2 h when it follows a removal.
ELECTION_NOTICE = timedelta(hours=6)
ELECTION_NOTICE_AFTER_REMOVAL = timedelta(hours=2)
#: Removal demands and recusals count only when received no later than this before the city's execution voting
#: start that day (L-JUDGE-8, L-JUDGE-9).
REMOVAL_CUTOFF = timedelta(hours=4)
#: Considered confirmations that make a removal demand valid, the organizer included (L-JUDGE-8).
REMOVAL_CONFIRMATIONS = 5
#: A removed judge cannot be proposed on this many game days after the day of the removal (L-JUDGE-8).
REMOVED_JUDGE_BAR_DAYS = 2


def _is_arbiter(user, game) -> bool:
    if user is None:
        return False
    policies.forget_viewer_cache(user)
    return policies.holds_role(user, game, StaffKind.ARBITER)


def _check_arbiter_or_site(game, acting_user, rule: str) -> None:
    if acting_user is not None and not _is_arbiter(acting_user, game):
        raise NotAllowed(_("Only the Supreme Arbiter may do this."), rule=rule)


def _current_city_inbox(city: City) -> Inbox | None:
    return Inbox.objects.filter(city=city, kind=InboxKind.CITY, rolled_over_at__isnull=True,
                                killed_at__isnull=True).order_by("-id").first()


def _announce_in_city(city: City, text_fn, now: datetime) -> None:
    """Post ``text_fn()`` (translated in the game's language) in the current city inbox as the site."""
    inbox = _current_city_inbox(city)
    if inbox is None:
        return
    with translation.override(city.game.language):
        text = text_fn()
    do_post_site_message(inbox, text, acting_user=None, now=now)


def sitting_judge_of(city: City) -> Resident | None:
    """The living sitting judge of ``city``, or None (L-JUDGE-1)."""
    return Resident.objects.filter(city=city, is_judge=True, status=LifeStatus.ALIVE).first()


def pending_election(city: City):
    """The scheduled, not yet closed (nor cancelled) election of ``city``, or None."""
    return JudgeElection.objects.filter(city=city, closed_at__isnull=True, cancelled_at__isnull=True).first()


def city_needs_judge_election(city: City) -> bool:
    """True when ``city`` has no living sitting judge and no election pending (L-JUDGE-1, L-JUDGE-2): after day 1
    started, a removal, a recusal, or the judge's death (killed, executed, suicide, penalty). The clock and the
    night resolution call this after a change to tell the Arbiter to schedule one (``do_schedule_judge_election``).
    A city without living residents needs none. Reads only; never raises."""
    if not Resident.objects.filter(city=city, status=LifeStatus.ALIVE).exists():
        return False
    return sitting_judge_of(city) is None and pending_election(city) is None


def removal_deadline(city: City, day: int) -> datetime | None:
    """4 h before ``city``'s execution voting start on game day ``day`` (L-JUDGE-8, L-JUDGE-9), aware UTC; None
    while no voting is scheduled that day (nothing is late yet)."""
    session = session_of(city, day)
    return None if session is None else session.opens_at - REMOVAL_CUTOFF


def _barred_as_removed(candidate: Resident, day: int) -> bool:
    """L-JUDGE-8: removed by a demand of day D (the day it was opened, when the removal is announced too),
    ``candidate`` cannot be proposed on days D+1 and D+2 (nor on D itself); from D+3 on they can."""
    return RemovalDemand.objects.filter(judge=candidate, removed_at__isnull=False,
                                        day__gte=day - REMOVED_JUDGE_BAR_DAYS).exists()


def _election_reason(city: City, game) -> str:
    """Why ``city`` elects now (L-JUDGE-2): day 1, else the latest of a removal, a recusal or a failed election,
    else the judge's death."""
    if game.day_number <= 1 and not JudgeElection.objects.filter(city=city, closed_at__isnull=False).exists():
        return ElectionReason.FIRST_DAY
    last_judge_at = JudgeElection.objects.filter(city=city, winner__isnull=False).order_by("-closed_at").values_list(
        "closed_at", flat=True).first()
    events = []
    removal = RemovalDemand.objects.filter(city=city, removed_at__isnull=False).order_by("-removed_at").first()
    if removal is not None:
        events.append((removal.removed_at, ElectionReason.REMOVAL))
    recusal = JudgeRecusal.objects.filter(city=city).order_by("-at").first()
    if recusal is not None:
        events.append((recusal.at, ElectionReason.RECUSAL))
    failed = JudgeElection.objects.filter(city=city, closed_at__isnull=False, winner__isnull=True).order_by(
        "-closed_at").first()
    if failed is not None:
        events.append((failed.closed_at, ElectionReason.FAILED))
    events = [e for e in events if last_judge_at is None or e[0] >= last_judge_at]
    if not events:
        return ElectionReason.FIRST_DAY if last_judge_at is None and game.day_number <= 1 else ElectionReason.DEATH
    return max(events)[1]


def _create_election_events(election, *, acting_user, now: datetime) -> None:
    ScheduledEvent.objects.filter(game=election.game, kind__in=["election_open", "election_close"],
                                  done_at__isnull=True, cancelled_at__isnull=True,
                                  payload__election=election.pk).update(cancelled_at=now)
    for kind, due in (("election_open", election.opens_at), ("election_close", election.closes_at)):
        ScheduledEvent.objects.create(game=election.game, kind=kind, due_at=due, payload={"election": election.pk},
                                      created_at=now, created_by=acting_user)


def _announce_election(election, now: datetime, *, after_failure: bool = False) -> None:
    game = election.game

    def text():
        params = {"city": election.city.name, "opens": _local(game, election.opens_at),
                  "closes": _local(game, election.closes_at)}
        if after_failure:
            return _("The judge election in %(city)s failed: no candidate has at least as many pros as cons. "
                     "A new election: from %(opens)s to %(closes)s. Propose your candidate in your personal inbox.") % params
        return _("Judge election in %(city)s: from %(opens)s to %(closes)s. Propose your candidate in your personal "
                 "inbox.") % params
    _announce_in_city(election.city, text, now)


@transaction.atomic
def do_schedule_judge_election(city: City, opens_at: datetime, closes_at: datetime, *, acting_user,
                               now: datetime | None = None):
    """The Arbiter (or the site, ``acting_user`` None) schedules the judge election of ``city`` (L-JUDGE-2,
    L-DAY-4): ``opens_at`` < ``closes_at``, aware; announced now, at least 6 h before ``opens_at`` (at least 2 h
    when the election follows a removal, L-DAY-4). The city must have no living sitting judge (L-JUDGE-1). A
    pending election not yet opened is moved (its events too) and announced again. The announcement is posted in
    the city inbox by the site; ``election_open`` / ``election_close`` scheduled events open the precincts and
    count them. Returns the ``JudgeElection``. Raises ``NotAllowed`` (not the Arbiter), ``InvalidInput`` (bad
    times, too short a notice) or ``WrongState`` (the city has a judge, the election opened, game not running).
    Other apps (the clock after a death) call it with ``acting_user=None``."""
    now = now or timezone.now()
    city = City.objects.select_related("game").get(pk=city.pk)
    game = city.game
    _check_arbiter_or_site(game, acting_user, "L-DAY-4")
    _check_running(game)
    if sitting_judge_of(city) is not None:
        raise WrongState(_("%(city)s has a sitting judge.") % {"city": city.name}, rule="L-JUDGE-1")
    if opens_at is None or closes_at is None or timezone.is_naive(opens_at) or timezone.is_naive(closes_at):
        raise InvalidInput(_("Election times must include their time zone."), rule="L-DAY-4")
    if not opens_at < closes_at:
        raise InvalidInput(_("The election must open before it closes."), rule="L-DAY-4")
    election = JudgeElection.objects.select_for_update().filter(city=city, closed_at__isnull=True,
                                                                cancelled_at__isnull=True).first()
    if election is not None and election.opened_at is not None:
        raise WrongState(_("The election has already opened."), rule="L-DAY-4")
    reason = election.reason if election is not None else _election_reason(city, game)
    notice = ELECTION_NOTICE_AFTER_REMOVAL if reason == ElectionReason.REMOVAL else ELECTION_NOTICE
    if opens_at - now < notice:
        raise InvalidInput(_("An election must be announced at least %(hours)d hours before it opens.")
                           % {"hours": int(notice.total_seconds() // 3600)}, rule="L-DAY-4")
    if election is None:
        election = JudgeElection.objects.create(game=game, city=city, day=game.day_number, reason=reason,
                                                announced_at=now, opens_at=opens_at, closes_at=closes_at)
    else:
        election.opens_at, election.closes_at, election.announced_at = opens_at, closes_at, now
        election.save(update_fields=["opens_at", "closes_at", "announced_at"])
    _create_election_events(election, acting_user=acting_user, now=now)
    _announce_election(election, now)
    record_event(game, "election.scheduled", actor=acting_user, at=now,
                 payload={"election": election.pk, "city": city.pk, "reason": reason,
                          "opens_at": opens_at.isoformat(), "closes_at": closes_at.isoformat()})
    do_replan_clock(game, acting_user=acting_user, reason="election.scheduled", now=now)
    return election


def _personal_inbox(resident: Resident) -> Inbox | None:
    return Inbox.objects.filter(kind=InboxKind.PERSONAL, resident=resident, rolled_over_at__isnull=True).first()


@transaction.atomic
def do_propose_candidate(candidate: Resident, *, acting_user, now: datetime | None = None):
    """``acting_user``'s seat proposes ``candidate`` as judge of their city (L-JUDGE-3) in the pending election:
    the proposer and the candidate are living residents of the same city; one proposal per proposer per election;
    until the Tribune passes the list or the election opens; a sitting judge cannot be proposed, nor a judge
    removed on this day or the two days before (L-JUDGE-8). Recorded in the proposer's personal inbox (the
    Tribune reads it). Returns the ``JudgeProposal``. Raises ``NotAllowed`` (no seat, not living),
    ``InvalidInput`` (another city, dead, judge, removed recently, second proposal) or ``WrongState`` (no
    election pending, list passed, opened, game not running)."""
    now = now or timezone.now()
    seat = _seat_of(acting_user, candidate.game_id)
    game = seat.game
    _check_running(game)
    if seat.status != LifeStatus.ALIVE:
        raise NotAllowed(_("Only living residents may propose a candidate."), rule="L-JUDGE-3")
    candidate = Resident.objects.select_related("city").get(pk=candidate.pk)
    if candidate.city_id != seat.city_id:
        raise InvalidInput(_("Only residents of your own city can be proposed."), rule="L-JUDGE-3")
    if candidate.status != LifeStatus.ALIVE:
        raise InvalidInput(_("%(name)s is not alive.") % {"name": candidate.name}, rule="L-JUDGE-1")
    if candidate.is_judge:
        raise InvalidInput(_("%(name)s is already the judge.") % {"name": candidate.name}, rule="L-JUDGE-1")
    if _barred_as_removed(candidate, game.day_number):
        raise InvalidInput(_("%(name)s was removed as judge and cannot be proposed on the next two days.")
                           % {"name": candidate.name}, rule="L-JUDGE-8")
    election = pending_election(seat.city)
    if election is None:
        raise WrongState(_("No judge election is pending in your city."), rule="L-JUDGE-2")
    if election.opened_at is not None or election.candidates_passed_at is not None:
        raise WrongState(_("Candidates are no longer collected for this election."), rule="L-JUDGE-3")
    existing = JudgeProposal.objects.filter(election=election, proposer=seat).select_related("candidate").first()
    if existing is not None:
        raise InvalidInput(_("You have already proposed %(name)s.") % {"name": existing.candidate.name},
                           rule="L-JUDGE-3")
    try:
        with transaction.atomic():
            proposal = JudgeProposal.objects.create(election=election, proposer=seat, candidate=candidate, at=now)
    except IntegrityError:
        raise InvalidInput(_("You have already proposed a candidate."), rule="L-JUDGE-3") from None
    personal = _personal_inbox(seat)
    if personal is not None and personal.killed_at is None:
        with translation.override(game.language):
            text = _("%(proposer)s proposes %(candidate)s as judge.") % {"proposer": seat.name,
                                                                          "candidate": candidate.name}
        do_post_site_message(personal, text, acting_user=None, now=now)
    record_event(game, "election.proposed", actor=acting_user, at=now,
                 payload={"election": election.pk, "proposer": seat.pk, "candidate": candidate.pk})
    return proposal


def candidates_of(election) -> list[Resident]:
    """The distinct proposed candidates of ``election`` in order of their first proposal (L-JUDGE-3)."""
    seen, out = set(), []
    for p in election.proposals.select_related("candidate").order_by("at", "id"):
        if p.candidate_id not in seen:
            seen.add(p.candidate_id)
            out.append(p.candidate)
    return out


@transaction.atomic
def do_pass_candidates(election, *, acting_user, now: datetime | None = None):
    """The city's Tribune passes the list of candidates to the Arbiter (L-JUDGE-3): proposals close and the list is
    posted in the office inbox (Tribunes and the Arbiter). Returns the election. Raises ``NotAllowed`` (not the
    Tribune) or ``WrongState`` (passed already, opened, closed)."""
    now = now or timezone.now()
    election = JudgeElection.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=election.pk)
    game = election.game
    if acting_user is None:
        raise NotAllowed(_("Only the Tribune passes the candidates."), rule="L-JUDGE-3")
    _check_tribune(election.city, acting_user, "L-JUDGE-3")
    _check_running(game)
    if election.candidates_passed_at is not None or election.opened_at is not None or not election.is_pending:
        raise WrongState(_("The candidates were already passed."), rule="L-JUDGE-3")
    election.candidates_passed_at = now
    election.save(update_fields=["candidates_passed_at"])
    office = Inbox.objects.filter(game=game, kind=InboxKind.OFFICE, rolled_over_at__isnull=True,
                                  killed_at__isnull=True).first()
    names = [c.name for c in candidates_of(election)]
    if office is not None:
        with translation.override(game.language):
            text = _("Judge candidates of %(city)s: %(names)s.") % {"city": election.city.name,
                                                                     "names": ", ".join(names) or "—"}
        do_post_site_message(office, text, acting_user=None, now=now)
    record_event(game, "election.candidates_passed", actor=acting_user, at=now,
                 payload={"election": election.pk, "candidates": [c.pk for c in candidates_of(election)]})
    return election


@transaction.atomic
def do_record_election_proxy(election, voter: Resident, candidate: Resident, text: str, *, acting_user,
                             now: datetime | None = None):
    """The Arbiter records a proxy ballot (L-JUDGE-6, as L-NOM-6): at the opening the site posts ``text`` (a
    ballot, ``voting.parsing.parse_lepra_election``) as ``voter`` in ``candidate``'s precinct, timed at the
    opening. Before the opening; ``voter`` a living resident of the city, ``candidate`` proposed. Returns the
    ``ElectionProxy``. Raises ``NotAllowed`` (not the Arbiter), ``InvalidInput`` (not a ballot, not a voter, not
    a candidate, recorded already) or ``WrongState`` (opened, closed)."""
    now = now or timezone.now()
    election = JudgeElection.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=election.pk)
    game = election.game
    if not _is_arbiter(acting_user, game):
        raise NotAllowed(_("Only the Supreme Arbiter casts proxy ballots."), rule="L-JUDGE-6")
    _check_running(game)
    if election.opened_at is not None or not election.is_pending:
        raise WrongState(_("The election has opened: proxy ballots are recorded before it opens."), rule="L-JUDGE-6")
    text = (text or "").strip()
    if parse_lepra_election(text) is None:
        raise InvalidInput(_("Only «Он - Ганди!» or «Он - Гитлер!» can be posted in a precinct."), rule="L-JUDGE-4")
    if voter.city_id != election.city_id or voter.status != LifeStatus.ALIVE:
        raise InvalidInput(_("%(name)s has no vote in this election.") % {"name": voter.name}, rule="L-JUDGE-6")
    if candidate.pk not in {c.pk for c in candidates_of(election)}:
        raise InvalidInput(_("%(name)s is not a candidate.") % {"name": candidate.name}, rule="L-JUDGE-6")
    if ElectionProxy.objects.filter(election=election, voter=voter, candidate=candidate).exists():
        raise InvalidInput(_("This proxy ballot is already recorded."), rule="L-JUDGE-6")
    proxy = ElectionProxy.objects.create(election=election, voter=voter, candidate=candidate, text=text,
                                         recorded_at=now)
    record_event(game, "election.proxy_recorded", actor=acting_user, at=now,
                 payload={"proxy": proxy.pk, "voter": voter.pk, "candidate": candidate.pk})
    return proxy


def _precinct_title(game, city: City, candidate: Resident) -> str:
    with translation.override(game.language):
        return _("Election precinct, %(city)s: %(name)s") % {"city": city.name, "name": candidate.name}


@transaction.atomic
def do_open_election(election, *, acting_user, now: datetime | None = None) -> list[Inbox]:
    """Open ``election`` (L-JUDGE-4, L-INBOX-10): one precinct per candidate still eligible (living, not a
    sitting judge, not barred by L-JUDGE-8), organizer the Arbiter, members the living residents of the city;
    then the Arbiter's proxy ballots are cast timed at the opening (L-JUDGE-6). By the scheduler at
    ``opens_at`` or the Arbiter (earlier: the opening moves to ``now``). Returns the precinct inboxes. Raises
    ``NotAllowed`` or ``WrongState`` (opened, closed, too late, game not running)."""
    now = now or timezone.now()
    election = JudgeElection.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=election.pk)
    city, game = election.city, election.game
    _check_arbiter_or_site(game, acting_user, "L-JUDGE-4")
    _check_running(game)
    if election.opened_at is not None or not election.is_pending:
        raise WrongState(_("The election has already opened."), rule="L-JUDGE-4")
    if acting_user is not None and now < election.opens_at:
        election.opens_at = now
    if now >= election.closes_at:
        raise WrongState(_("The election time is already over."), rule="L-JUDGE-4")
    election.opened_at = now
    election.save(update_fields=["opens_at", "opened_at"])
    arbiter = StaffRole.objects.filter(game=game, kind=StaffKind.ARBITER).first()
    members = list(Resident.objects.filter(city=city, status=LifeStatus.ALIVE))
    inboxes = {}
    for candidate in candidates_of(election):
        candidate.refresh_from_db()
        if (candidate.status != LifeStatus.ALIVE or candidate.is_judge
                or _barred_as_removed(candidate, game.day_number)):
            continue
        inbox = new_inbox(game, InboxKind.PRECINCT, title=_precinct_title(game, city, candidate), actor=acting_user,
                           now=now, city=city, organizer=arbiter, resident=candidate, members=members)
        Precinct.objects.create(election=election, inbox=inbox, candidate=candidate)
        inboxes[candidate.pk] = inbox
    member_ids = {r.pk for r in members}
    for proxy in election.proxies.filter(cast_at__isnull=True).select_related("voter").order_by("recorded_at", "id"):
        inbox = inboxes.get(proxy.candidate_id)
        if inbox is None or proxy.voter_id not in member_ids:
            continue
        if ElectionBallot.objects.filter(inbox=inbox, voter=proxy.voter).exists():
            continue
        ballot = parse_lepra_election(proxy.text)
        message = write_proxy_message(inbox, proxy.voter, proxy.text, at=election.opens_at)
        ElectionBallot.objects.create(inbox=inbox, voter=proxy.voter, message=message,
                                      pro=ballot is LepraBallot.PRO, proxy=True, cast_at=election.opens_at)
        proxy.cast_at = election.opens_at
        proxy.save(update_fields=["cast_at"])
    record_event(game, "election.opened", actor=acting_user, at=now,
                 payload={"election": election.pk, "precincts": [i.pk for i in inboxes.values()]})
    return list(inboxes.values())


def compute_election_tally(election, *, closes_at: datetime | None = None):
    """The tally of ``election`` from its stored precinct messages (L-JUDGE-4..6): ``(LepraElectionResult,
    names)`` with residents keyed by ``str(pk)``; ``names`` maps keys to names. Only residents' messages count
    (the Arbiter's posts are announcements); proxies count at the opening. The voters are every seat made a member
    of a precinct at the opening [interp, as the execution tally]; a candidate who died is out (their precinct is
    killed, its ballots void). ``closes_at`` defaults to the election's (a live standing uses it too: ballots
    not yet posted simply are not there). Returns ``(None, {})`` before the opening."""
    if election.opened_at is None:
        return None, {}
    precincts = list(election.precincts.select_related("inbox", "candidate").order_by("id"))
    alive = [p for p in precincts if p.candidate.status == LifeStatus.ALIVE]
    inbox_ids = [p.inbox_id for p in alive]
    names, voters = {}, set()
    for m in Membership.objects.filter(inbox_id__in=[p.inbox_id for p in precincts]).select_related("resident"):
        voters.add(str(m.resident_id))
        names[str(m.resident_id)] = m.resident.name
    for p in precincts:
        names[str(p.candidate_id)] = p.candidate.name
    candidate_of = {p.inbox_id: str(p.candidate_id) for p in alive}
    proxies = set(ElectionBallot.objects.filter(inbox_id__in=inbox_ids, proxy=True).values_list("message_id", flat=True))
    messages = [
        LepraVoteMessage(seq=m.pk, at=m.received_at, author=str(m.author_resident_id), inbox=candidate_of[m.inbox_id],
                         text=m.body, proxy=m.pk in proxies)
        for m in Message.objects.filter(inbox_id__in=inbox_ids, author_resident__isnull=False).order_by("received_at", "id")
    ]
    result = tally_lepra_election(election.opens_at, closes_at or election.closes_at, voters,
                                  [str(p.candidate_id) for p in alive], messages)
    return result, names


def _precinct_refusal_error(refusal: LepraRefusal, election, game):
    """The translated error for a refused precinct post (L-JUDGE-4)."""
    if refusal == LepraRefusal.NOT_OPEN_YET:
        return WrongState(_("The election has not opened yet."), rule="L-JUDGE-4")
    if refusal == LepraRefusal.CLOSED:
        return WrongState(_("The election closed at %(at)s: your message came too late.")
                          % {"at": _local(game, election.closes_at)}, rule="L-JUDGE-4")
    if refusal == LepraRefusal.NOT_A_MEMBER:
        return NotAllowed(_("You have no vote here."), rule="L-JUDGE-4")
    if refusal == LepraRefusal.ALREADY_VOTED:
        return InvalidInput(_("You have already voted in this precinct: a ballot cannot be changed or withdrawn."),
                            rule="L-JUDGE-4")
    return InvalidInput(_("Only «Он - Ганди!» or «Он - Гитлер!» can be posted in a precinct."), rule="L-JUDGE-4")


def check_precinct_post(inbox: Inbox, seat: Resident | None, text: str, now: datetime):
    """Decide a post in the precinct ``inbox`` (locked by the caller) by ``seat`` at receive time ``now``, before it
    is stored (L-JUDGE-4): returns the ``LepraAccepted`` (pro or con), or raises the translated refusal and
    nothing is stored: not a ballot ("no campaigning inside"), a second ballot of the voter here, outside the
    election's window. A staff post (``seat`` None: the Arbiter) is an announcement and returns None. The
    decision is the pure tally's, over the seat's own stored messages here plus this one."""
    if seat is None:
        return None
    precinct = Precinct.objects.select_related("election").filter(inbox=inbox).first()
    if precinct is None or precinct.election.opened_at is None:
        raise WrongState(_("The election has not opened yet."), rule="L-JUDGE-4")
    election = precinct.election
    own = list(Message.objects.filter(inbox=inbox, author_resident=seat).order_by("received_at", "id"))
    proxies = set(ElectionBallot.objects.filter(inbox=inbox, voter=seat, proxy=True).values_list("message_id", flat=True))
    key, candidate = str(seat.pk), str(precinct.candidate_id)
    messages = [LepraVoteMessage(seq=m.pk, at=m.received_at, author=key, inbox=candidate, text=m.body,
                                 proxy=m.pk in proxies) for m in own]
    seq = max((m.pk for m in own), default=0) + 1
    messages.append(LepraVoteMessage(seq=seq, at=now, author=key, inbox=candidate, text=text))
    result = tally_lepra_election(election.opens_at, election.closes_at, [key], [candidate], messages)
    receipt = next(r for r in result.receipts if r.seq == seq)
    if receipt.refusal is not None:
        raise _precinct_refusal_error(receipt.refusal, election, inbox.game)
    return receipt.accepted


def record_precinct_post(inbox: Inbox, seat: Resident | None, message: Message, accepted, now: datetime) -> None:
    """Index an accepted ballot (called by ``do_post_message`` in its transaction): the named unique constraint
    refuses a second ballot of the voter in this precinct (double submits, two tabs), L-JUDGE-4."""
    if accepted not in (LepraAccepted.PRO, LepraAccepted.CON):
        return
    try:
        with transaction.atomic():
            ElectionBallot.objects.create(inbox=inbox, voter=seat, message=message, pro=accepted == LepraAccepted.PRO,
                                          cast_at=now)
    except IntegrityError:
        raise InvalidInput(_("You have already voted in this precinct: a ballot cannot be changed or withdrawn."),
                           rule="L-JUDGE-4") from None


def _court_formed(game) -> bool:
    """The Supreme Court was formed (L-DAY-5): some court inbox ever had a member."""
    return Membership.objects.filter(inbox__game=game, inbox__kind=InboxKind.COURT).exists()


def _every_city_has_a_judge(game) -> bool:
    """True when every city of ``game`` with a living resident has a living sitting judge (L-DAY-5): one query,
    whatever the number of cities (no city with the living but without a living judge)."""
    living_judge = Resident.objects.filter(city=OuterRef("pk"), is_judge=True, status=LifeStatus.ALIVE)
    return not (City.objects.filter(game=game, residents__status=LifeStatus.ALIVE)
                .filter(~Exists(living_judge)).exists())


def _renew_court_if_formed(game, *, actor, now: datetime, joining: bool) -> Inbox | None:
    """L-JUDGE-10 / L-DAY-5: after a change of judges, a new court inbox (``inboxes.services.renew_court``),
    except while the court is not formed yet: then it is formed (renewed) once every city has a judge, and a
    judge leaving before that changes nothing. ``joining``: the change added a judge."""
    if _court_formed(game) or (joining and _every_city_has_a_judge(game)):
        return renew_court(game, actor=actor, now=now)
    return None


def _election_result_text(game, city: City, result, names: dict[str, str], winner_name: str | None) -> str:
    def n(key):
        return names.get(key, key)

    with translation.override(game.language):
        lines = [_("**Judge election results, %(city)s**") % {"city": city.name}, ""]
        for t in result.candidates:
            lines.append(_("- %(name)s: %(pros)d for, %(cons)d against, score %(score)d")
                         % {"name": n(t.candidate), "pros": len(t.pros), "cons": len(t.cons), "score": t.score})
        lines.append("")
        if winner_name is None:
            lines.append(_("No candidate has at least as many pros as cons: the election failed."))
        else:
            lines.append(_("Elected judge: %(name)s.") % {"name": winner_name})
        return "\n".join(lines)


@transaction.atomic
def do_close_election(election, *, acting_user, now: datetime | None = None):
    """Close ``election`` (L-JUDGE-5): by the scheduler at ``closes_at`` or the Arbiter (earlier: the close moves
    to ``now``). Kills the precincts (L-INBOX-10), counts them with ``tally_lepra_election`` (cut-off
    ``closes_at``), stores the result and posts it in the city inbox. A winner becomes the city's judge and the
    court is renewed (L-JUDGE-10; on day 1 the court is formed when every city has a judge, L-DAY-5). A failed
    election (no candidate with pros ≥ cons) schedules a new one by the site, announced in the city inbox:
    opening 6 h after this close (L-DAY-4), lasting as long as this one. Returns the election. Raises
    ``NotAllowed`` or ``WrongState`` (not opened, closed already)."""
    now = now or timezone.now()
    election = JudgeElection.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=election.pk)
    city, game = election.city, election.game
    _check_arbiter_or_site(game, acting_user, "L-JUDGE-5")
    if election.opened_at is None:
        raise WrongState(_("The election has not opened yet."), rule="L-JUDGE-5")
    if election.closed_at is not None:
        raise WrongState(_("The election is already closed."), rule="L-JUDGE-5")
    if acting_user is not None and now < election.closes_at:
        election.closes_at = now
    election.closed_at = now
    result, names = compute_election_tally(election)
    election.result = {**result.as_dict(), "names": names}
    winner = None
    if result.winner is not None:
        winner = Resident.objects.select_for_update(of=("self",)).get(pk=int(result.winner))
        if winner.status != LifeStatus.ALIVE or sitting_judge_of(city) is not None:
            winner = None
    election.winner = winner
    election.save(update_fields=["closes_at", "closed_at", "result", "winner"])
    Inbox.objects.filter(precinct__election=election, killed_at__isnull=True).update(killed_at=now)
    ScheduledEvent.objects.filter(game=game, kind="election_close", done_at__isnull=True, cancelled_at__isnull=True,
                                  payload__election=election.pk, due_at__gt=now).update(cancelled_at=now)
    city_inbox = _current_city_inbox(city)
    if city_inbox is not None:
        do_post_site_message(city_inbox, _election_result_text(game, city, result, names,
                                                              winner.name if winner else None),
                             acting_user=None, now=now)
    record_event(game, "election.closed", actor=acting_user, at=now,
                 payload={"election": election.pk, "winner": winner.pk if winner else None})
    if winner is not None:
        do_set_resident_flags(winner, is_judge=True, acting_user=None, now=now)
        _renew_court_if_formed(game, actor=acting_user, now=now, joining=True)
    elif game.status == GameStatus.RUNNING:
        length = election.closes_at - election.opens_at
        opens_at = now + ELECTION_NOTICE
        follow = JudgeElection.objects.create(game=game, city=city, day=game.day_number, reason=ElectionReason.FAILED,
                                              announced_at=now, opens_at=opens_at, closes_at=opens_at + length,
                                              follows=election)
        _create_election_events(follow, acting_user=None, now=now)
        _announce_election(follow, now, after_failure=True)
        record_event(game, "election.scheduled", actor=None, at=now,
                     payload={"election": follow.pk, "city": city.pk, "reason": ElectionReason.FAILED,
                              "opens_at": follow.opens_at.isoformat(), "closes_at": follow.closes_at.isoformat()})
    return election


# ---- Removal demands (L-JUDGE-8, L-INBOX-11) -----------------------------------------------------------------

def _confirmation_considered(demand, game, now: datetime) -> bool:
    deadline = removal_deadline(demand.city, demand.day)
    return demand.considered and game.day_number == demand.day and (deadline is None or now <= deadline)


@transaction.atomic
def do_open_removal_demand(*, acting_user, game, now: datetime | None = None):
    """``acting_user``'s seat (a living resident) opens a demand to remove their city's sitting judge (L-JUDGE-8,
    L-INBOX-11): a removal-demand inbox organised by the seat, about the judge, whose members are the living
    residents of the city (they confirm there); the opening is the organizer's confirmation. From day 2 (L-DAY-5).
    A demand received later than 4 h before the city's execution voting start that day is recorded as not
    considered (it can never become valid). Announced in the city inbox. Returns the ``RemovalDemand``. Raises
    ``NotAllowed`` (no seat, not living, the judge themself), ``InvalidInput`` (a second demand of the seat against
    this judge today) or ``WrongState`` (day 1, no judge, game not running)."""
    now = now or timezone.now()
    seat = _seat_of(acting_user, game)
    game = seat.game
    _check_running(game)
    if game.day_number < FIRST_EXECUTION_DAY:
        raise WrongState(_("No removal demands on day 1."), rule="L-DAY-5")
    if seat.status != LifeStatus.ALIVE:
        raise NotAllowed(_("Only living residents may demand the removal of the judge."), rule="L-JUDGE-8")
    judge = sitting_judge_of(seat.city)
    if judge is None:
        raise WrongState(_("Your city has no sitting judge."), rule="L-JUDGE-8")
    if judge.pk == seat.pk:
        raise NotAllowed(_("A judge resigns by recusal, not by a removal demand."), rule="L-JUDGE-9")
    if RemovalDemand.objects.filter(organizer=seat, judge=judge, day=game.day_number).exists():
        raise InvalidInput(_("You have already demanded the removal of %(name)s today.") % {"name": judge.name},
                           rule="L-JUDGE-8")
    deadline = removal_deadline(seat.city, game.day_number)
    considered = deadline is None or now <= deadline
    with translation.override(game.language):
        title = _("Removal of judge %(name)s, day %(day)d") % {"name": judge.name, "day": game.day_number}
    members = list(Resident.objects.filter(city=seat.city, status=LifeStatus.ALIVE))
    inbox = new_inbox(game, InboxKind.REMOVAL, title=title, actor=acting_user, now=now, city=seat.city,
                       organizer_resident=seat, resident=judge, members=members)
    demand = RemovalDemand.objects.create(game=game, city=seat.city, day=game.day_number, judge=judge, organizer=seat,
                                          inbox=inbox, opened_at=now, deadline=deadline, considered=considered)
    RemovalConfirmation.objects.create(demand=demand, resident=seat, at=now, considered=considered)
    for r in members:
        policies.forget_viewer_cache(r.user)
    _announce_in_city(seat.city, lambda: (
        _("%(organizer)s demands the removal of judge %(judge)s: confirm in the demand's inbox.")
        if considered else
        _("%(organizer)s demands the removal of judge %(judge)s; the demand came too late today and is not "
          "considered.")) % {"organizer": seat.name, "judge": judge.name}, now)
    record_event(game, "removal.opened", actor=acting_user, at=now,
                 payload={"demand": demand.pk, "judge": judge.pk, "organizer": seat.pk, "considered": considered})
    return demand


@transaction.atomic
def do_confirm_removal_demand(demand, *, acting_user, now: datetime | None = None):
    """``acting_user``'s seat, a living resident of the judge's city other than the judge, confirms ``demand``
    (L-JUDGE-8), once. A confirmation received after the deadline (4 h before that day's execution voting start),
    on a later day, or of a demand not considered is recorded but not considered. At the 5th considered
    confirmation of living residents (the organizer included) the demand becomes valid: the Arbiter reads its
    inbox from then on (``inboxes.policies``) and is told in it. Returns the ``RemovalConfirmation``. Raises
    ``NotAllowed`` (no seat, another city, dead, the judge), ``InvalidInput`` (confirmed already) or
    ``WrongState`` (the judge was removed or is no longer the judge, game not running)."""
    now = now or timezone.now()
    demand = RemovalDemand.objects.select_for_update(of=("self",)).select_related("city", "game", "judge", "inbox").get(
        pk=demand.pk)
    seat = _seat_of(acting_user, demand.game_id)
    game = seat.game
    _check_running(game)
    if seat.city_id != demand.city_id or seat.status != LifeStatus.ALIVE:
        raise NotAllowed(_("Only living residents of %(city)s may confirm.") % {"city": demand.city.name},
                         rule="L-JUDGE-8")
    if seat.pk == demand.judge_id:
        raise NotAllowed(_("The judge cannot confirm their own removal."), rule="L-JUDGE-8")
    if demand.removed_at is not None or not Resident.objects.filter(pk=demand.judge_id, is_judge=True,
                                                                       status=LifeStatus.ALIVE).exists():
        raise WrongState(_("%(name)s is no longer the judge.") % {"name": demand.judge.name}, rule="L-JUDGE-8")
    if RemovalConfirmation.objects.filter(demand=demand, resident=seat).exists():
        raise InvalidInput(_("You have already confirmed this demand."), rule="L-JUDGE-8")
    considered = _confirmation_considered(demand, game, now)
    try:
        with transaction.atomic():
            confirmation = RemovalConfirmation.objects.create(demand=demand, resident=seat, at=now,
                                                              considered=considered)
    except IntegrityError:
        raise InvalidInput(_("You have already confirmed this demand."), rule="L-JUDGE-8") from None
    if demand.inbox.killed_at is None:
        ensure_member(demand.inbox, seat, now=now)
    with translation.override(game.language):
        text = (_("%(name)s confirms the demand.") if considered
                else _("%(name)s confirms the demand too late: not considered.")) % {"name": seat.name}
    if demand.inbox.killed_at is None:
        do_post_site_message(demand.inbox, text, acting_user=None, now=now)
    record_event(game, "removal.confirmed", actor=acting_user, at=now,
                 payload={"demand": demand.pk, "resident": seat.pk, "considered": considered})
    count = RemovalConfirmation.objects.filter(demand=demand, considered=True,
                                               resident__status=LifeStatus.ALIVE).count()
    if demand.valid_at is None and count >= REMOVAL_CONFIRMATIONS:
        demand.valid_at = now
        demand.save(update_fields=["valid_at"])
        with translation.override(game.language):
            text = _("The demand is valid: %(count)d residents confirmed it. The Supreme Arbiter joins.") % {
                "count": count}
        do_post_site_message(demand.inbox, text, acting_user=None, now=now)
        office = Inbox.objects.filter(game=game, kind=InboxKind.OFFICE, rolled_over_at__isnull=True,
                                      killed_at__isnull=True).first()
        if office is not None:  # the Arbiter's desk: the demand now waits for him (L-JUDGE-8)
            with translation.override(game.language):
                text = _("A demand to remove judge %(name)s of %(city)s is valid.") % {
                    "name": demand.judge.name, "city": demand.city.name}
            do_post_site_message(office, text, acting_user=None, now=now)
        record_event(game, "removal.valid", actor=None, at=now, payload={"demand": demand.pk, "count": count})
    return confirmation


def _judge_leaves(judge: Resident, *, actor, now: datetime) -> None:
    """``judge`` is no longer the judge (removal, recusal): the flag cleared, a new court inbox (L-JUDGE-10)."""
    do_set_resident_flags(judge, is_judge=False, acting_user=None, now=now)
    _renew_court_if_formed(judge.game, actor=actor, now=now, joining=False)


@transaction.atomic
def do_remove_judge(demand, *, acting_user, now: datetime | None = None):
    """The Arbiter announces the removal demanded by the valid ``demand`` (L-JUDGE-8): the judge is no longer the
    judge, a new court inbox is made (L-JUDGE-10), the removal is announced in the city inbox; the Arbiter then
    schedules the election (``do_schedule_judge_election``, 2 h notice, L-DAY-4). The removed judge cannot be
    proposed on the next two days. Returns the demand. Raises ``NotAllowed`` (not the Arbiter) or ``WrongState``
    (not valid, removed already, no longer the judge)."""
    now = now or timezone.now()
    demand = RemovalDemand.objects.select_for_update(of=("self",)).select_related("city", "game", "judge").get(
        pk=demand.pk)
    game = demand.game
    if not _is_arbiter(acting_user, game):
        raise NotAllowed(_("Only the Supreme Arbiter announces a removal."), rule="L-JUDGE-8")
    _check_running(game)
    if demand.valid_at is None:
        raise WrongState(_("The demand is not valid."), rule="L-JUDGE-8")
    if demand.removed_at is not None:
        raise WrongState(_("The judge was already removed."), rule="L-JUDGE-8")
    judge = Resident.objects.select_for_update(of=("self",)).select_related("game").get(pk=demand.judge_id)
    if not judge.is_judge or judge.status != LifeStatus.ALIVE:
        raise WrongState(_("%(name)s is no longer the judge.") % {"name": judge.name}, rule="L-JUDGE-8")
    demand.removed_at = now
    demand.save(update_fields=["removed_at"])
    _judge_leaves(judge, actor=acting_user, now=now)
    _announce_in_city(demand.city, lambda: _("Judge %(name)s is removed. A new judge election will be announced.")
                      % {"name": judge.name}, now)
    record_event(game, "removal.applied", actor=acting_user, at=now, payload={"demand": demand.pk, "judge": judge.pk})
    return demand


@transaction.atomic
def do_recuse_judge(judge: Resident, *, acting_user, received_at: datetime | None = None,
                    now: datetime | None = None):
    """The judge resigns to the Arbiter (L-JUDGE-9): by the judge themself, or recorded by the Arbiter with the
    time the resignation was received (``received_at``, aware, not in the future; default ``now``). Accepted no
    later than 4 h before the city's execution voting start that day. The judge is no longer the judge, a new
    court inbox is made (L-JUDGE-10), and the recusal is announced in the city inbox; the Arbiter then schedules
    the election. Returns the ``JudgeRecusal``. Raises ``NotAllowed`` (neither the judge nor the Arbiter),
    ``InvalidInput`` (a received time in the future) or ``WrongState`` (not the sitting judge, too late, game not
    running)."""
    now = now or timezone.now()
    judge = Resident.objects.select_for_update(of=("self",)).select_related("game", "city").get(pk=judge.pk)
    game = judge.game
    seat = policies.seat_in(acting_user, game) if acting_user is not None else None
    if acting_user is None or not (_is_arbiter(acting_user, game) or (seat is not None and seat.pk == judge.pk)):
        raise NotAllowed(_("Only the judge or the Supreme Arbiter may record a recusal."), rule="L-JUDGE-9")
    _check_running(game)
    at = received_at or now
    if timezone.is_naive(at) or at > now:
        raise InvalidInput(_("The resignation's time must be a past time with its time zone."), rule="L-JUDGE-9")
    if not judge.is_judge or judge.status != LifeStatus.ALIVE:
        raise WrongState(_("%(name)s is not the sitting judge.") % {"name": judge.name}, rule="L-JUDGE-9")
    deadline = removal_deadline(judge.city, game.day_number)
    if deadline is not None and at > deadline:
        raise WrongState(_("A judge may resign no later than 4 hours before execution voting starts (%(at)s).")
                         % {"at": _local(game, deadline)}, rule="L-JUDGE-9")
    recusal = JudgeRecusal.objects.create(game=game, city=judge.city, day=game.day_number, judge=judge, at=at)
    _judge_leaves(judge, actor=acting_user, now=now)
    _announce_in_city(judge.city, lambda: _("Judge %(name)s has resigned. A new judge election will be announced.")
                      % {"name": judge.name}, now)
    record_event(game, "judge.recused", actor=acting_user, at=now, payload={"recusal": recusal.pk, "judge": judge.pk})
    return recusal
