"""State changes of the Lepra day : nominations (L-NOM), proxy requests (L-NOM-6), the voting session
(L-VOTE, L-DAY-3) and the votes posted in voting inboxes (L-VOTE-2..9).

Conventions of DESIGN.md: each service is ``do_<verb>_<noun>(..., *, acting_user, now=None)`` in one transaction,
checks the rules first, writes a ``GameEvent`` and raises a ``RuleViolation`` with a translated message, changing
nothing, when refused. Counting is never done here: ``rulesets.lepra.day.tally.tally_lepra_execution`` decides what a
message is (the same function the pages and the ``tally`` command use).
"""
from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cities.models import Alignment, City, GameStatus, LifeStatus, Resident, ScheduledEvent, StaffRole
from inboxes import policies, viewer_reads
from inboxes.membership_services import do_kill_resident
from rulesets.lepra.inbox_services import do_lay_spirit_to_rest
from inboxes.models import DeathCause, Inbox, Membership, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.services import do_post_site_message, new_inbox, write_proxy_message
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import ruleset_of
from kernel.timezones import time_for
from rulesets.lepra import seats
from rulesets.lepra.clock.services import do_replan_clock, voting_window_limits
from rulesets.lepra.day.tally import LepraVoteMessage, tally_lepra_execution
from rulesets.lepra.staff_kinds import StaffKind
from rulesets.lepra.models import (
    DecisionSource,
    ExecutionDecision,
    LepraVote,
    Nomination,
    ProxyRequest,
    ProxyState,
    SuicideDeclaration,
    VotingSession,
)

#: The first game day with nominations and executions (L-DAY-5, L-NOM-1).
FIRST_EXECUTION_DAY = 2


# --------------------------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------------------------

def _local(game, moment: datetime, viewer=None) -> str:
    """``moment`` as ``viewer`` reads it (their display zone, else the game's) with the zone's abbreviation."""
    return time_for(moment, viewer, game)


def _check_running(game) -> None:
    if game.status != GameStatus.RUNNING:
        raise WrongState(_("The game is not running."))


def _check_tribune(city: City, acting_user, rule: str) -> None:
    """The city's Tribune (or the site, ``acting_user`` None)."""
    if acting_user is None:
        return
    viewer_reads.forget_viewer_cache(acting_user)
    if not policies.holds_role(acting_user, city.game_id, StaffKind.TRIBUNE, city_id=city.pk):
        raise NotAllowed(_("Only the Tribune of %(city)s may do this.") % {"city": city.name}, rule=rule)


def _check_city_votes(city: City) -> None:
    """L-WIN-2: a city whose mafia are all dead holds no more executions; one whose honest residents are all dead
    holds no more votes. (A city that never had mafia, a game before its draw, is not concerned.) A dead resident
    whose alignment is not announced yet (L-DEATH-2) still counts: the refusal, which the Tribune and the city see,
    would otherwise tell them his side first (L-STAFF-6). Raises ``WrongState``."""
    living = Resident.objects.filter(city=city).filter(Q(status=LifeStatus.ALIVE) | Q(alignment_announced=False))
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
    return (Resident.objects.select_for_update(of=("self",)).select_related("city", "game", seats.SEAT)
            .get(pk=seat.pk))


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
    if seats.is_spirit(seat):
        raise NotAllowed(_("A spirit cannot nominate."), rule="L-NOM-3")
    if seat.status != LifeStatus.ALIVE:
        raise NotAllowed(_("Only living residents may nominate."), rule="L-NOM-1")
    nominee = Resident.objects.select_related("city", seats.SEAT).get(pk=nominee.pk)
    if nominee.city_id != seat.city_id:
        raise InvalidInput(_("Only residents of your own city can be nominated."), rule="L-NOM-1")
    if nominee.status != LifeStatus.ALIVE:
        raise InvalidInput(_("%(name)s is not alive.") % {"name": nominee.name}, rule="L-NOM-1")
    if seats.is_judge(nominee):
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
    if seat.status != LifeStatus.ALIVE and not seats.is_spirit(seat):
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
    announce_by, midnight = voting_window_limits(game, game.day_number, now)  # the phase plan's day 
    if announce_by is not None and now >= announce_by:
        raise WrongState(_("Voting times are announced in the first half of the day, before %(at)s.")
                         % {"at": _local(game, announce_by, acting_user)}, rule="L-DAY-3")
    if closes_at > midnight:
        raise InvalidInput(_("Voting must close no later than 00:00 (%(midnight)s).")
                           % {"midnight": _local(game, midnight, acting_user)}, rule="L-DAY-3")
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
                           % {"midnight": _local(game, midnight, acting_user)}, rule="L-DAY-3")
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
    (earlier: the opening moves to ``now``). Suicides are applied first (L-NOM-5): every declaration the Tribune has
    not refused is confirmed at the planned opening, and its resident dies at that moment (however late the clock
    runs), gets no inbox and no vote. Returns the inboxes. Raises ``NotAllowed`` or ``WrongState``
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
        if ProxyRequest.objects.filter(city=city, day=session.day, state=ProxyState.REQUESTED).exists():
            raise WrongState(_("Proxy vote requests await your answer: accept them before opening voting early, or "
                               "let it open at %(at)s.") % {"at": _local(game, session.opens_at)}, rule="L-NOM-6")
        session.opens_at = now
    if now >= session.closes_at:
        raise WrongState(_("The voting time is already over."), rule="L-VOTE-8")
    session.opened_at = now
    session.save(update_fields=["opens_at", "opened_at"])
    suicides = _apply_suicides(game, city, session.day, at=session.opens_at)
    if suicides and _after_day_death(game, now) is not None:
        record_event(game, "voting.opened", actor=acting_user, at=now,
                     payload={"session": session.pk, "inboxes": [], "suicides": suicides})
        return []  # the game ended with the suicides (L-WIN-1)
    tribune = StaffRole.objects.get(city=city, kind=StaffKind.TRIBUNE)
    members = list(Resident.objects.filter(city=city).filter(status=LifeStatus.ALIVE)
                   | Resident.objects.filter(seats.rank_q("is_spirit"), city=city))
    inboxes = {}
    for nominee in nominees_of(city, session.day):
        if nominee.status != LifeStatus.ALIVE:
            continue
        inbox = new_inbox(game, LepraInboxKind.VOTING, title=_voting_title(game, nominee), actor=acting_user, now=now,
                           city=city, organizer=tribune, resident=nominee, members=members)
        inboxes[nominee.pk] = inbox
    member_ids = {r.pk for r in members}
    declarants = set(SuicideDeclaration.objects.filter(city=city, day=session.day, confirmed_at__isnull=False)
                     .values_list("resident", flat=True))
    for proxy in ProxyRequest.objects.filter(city=city, day=session.day, state=ProxyState.ACCEPTED).select_related(
            "resident"):
        inbox = inboxes.get(proxy.nominee_id)
        if inbox is None or proxy.resident_id not in member_ids or proxy.resident_id in declarants:
            continue  # a confirmed suicide takes no part in voting (L-NOM-5)
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
    inboxes = list(Inbox.objects.filter(city_id=session.city_id, day_number=session.day, kind=LepraInboxKind.VOTING)
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
        city=city, day_number=session.day, kind=LepraInboxKind.VOTING, killed_at__isnull=True).order_by("pk"))
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
    city_inbox = Inbox.objects.filter(city=city, kind=LepraInboxKind.CITY, rolled_over_at__isnull=True,
                                      killed_at__isnull=True).order_by("-id").first()
    if city_inbox is not None:
        do_post_site_message(city_inbox, _result_text(game, city, result, names), acting_user=None, now=now)
    for spirit in Resident.objects.filter(seats.rank_q("is_spirit"), city=city).exclude(status=LifeStatus.ALIVE):
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
    before voting starts (nominations close then). Confirmed at the opening unless the Tribune refused it before
    (``do_refuse_suicide``), and applied then. Raises
    ``NotAllowed`` (no seat, dead, spirit), ``InvalidInput`` (declared already) or ``WrongState`` (day 1, voting
    started, game not running)."""
    now = now or timezone.now()
    seat = _seat_of(acting_user, game)
    game = seat.game
    _check_running(game)
    if game.day_number < FIRST_EXECUTION_DAY:
        raise WrongState(_("Suicide can be declared from day 2."), rule="L-NOM-5")
    if seat.status != LifeStatus.ALIVE or seats.is_spirit(seat):
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


def _check_before_opening(declaration: SuicideDeclaration, session: VotingSession | None, now: datetime) -> None:
    """L-NOM-5: the Tribune decides on a declaration until the planned opening of the city's voting (``opens_at``,
    however late the clock opens it); from then on the opening has confirmed it. Raises ``WrongState``."""
    game = declaration.game
    if session is not None and (session.opened_at is not None or now >= session.opens_at):
        raise WrongState(_("Voting opened at %(at)s: a suicide not refused by then is confirmed at the opening, and "
                           "none can be confirmed or refused later today.") % {"at": _local(game, session.opens_at)},
                         rule="L-NOM-5")


def _decidable_declaration(declaration: SuicideDeclaration, *, acting_user, now: datetime
                           ) -> tuple[SuicideDeclaration, VotingSession | None]:
    """The locked ``declaration`` and its day's voting session, when the Tribune may still confirm or refuse it
    (L-NOM-5). Raises ``NotAllowed`` (not the city's Tribune) or ``WrongState``."""
    declaration = (SuicideDeclaration.objects.select_for_update(of=("self",))
                   .select_related("city", "game", "resident").get(pk=declaration.pk))
    if acting_user is None:
        raise NotAllowed(_("Only the Tribune confirms a suicide."), rule="L-NOM-5")
    _check_tribune(declaration.city, acting_user, "L-NOM-5")
    game = declaration.game
    _check_running(game)
    if declaration.confirmed_at is not None:
        raise WrongState(_("This suicide is already confirmed."), rule="L-NOM-5")
    if declaration.refused_at is not None:
        raise WrongState(_("This suicide declaration was refused at %(at)s.")
                         % {"at": _local(game, declaration.refused_at)}, rule="L-NOM-5")
    if declaration.day != game.day_number or declaration.resident.status != LifeStatus.ALIVE:
        raise WrongState(_("This declaration can no longer be confirmed."), rule="L-NOM-5")
    session = session_of(declaration.city, declaration.day)
    _check_before_opening(declaration, session, now)
    return declaration, session


@transaction.atomic
def do_confirm_suicide(declaration: SuicideDeclaration, *, acting_user, now: datetime | None = None
                       ) -> SuicideDeclaration:
    """The Tribune confirms a suicide declaration before the planned opening of the city's voting (L-NOM-5); it is
    applied at the opening (``do_open_voting``: the resident dies then). None can be confirmed at or after the
    planned opening, however late the clock opens the voting: the opening confirms every declaration not refused
    by then. Returns the declaration. Raises ``NotAllowed`` (not the Tribune) or ``WrongState`` (confirmed or
    refused already, declarant dead, another day, the planned opening passed)."""
    now = now or timezone.now()
    declaration, _session = _decidable_declaration(declaration, acting_user=acting_user, now=now)
    declaration.confirmed_at = now
    declaration.save(update_fields=["confirmed_at"])
    record_event(declaration.game, "voting.suicide_confirmed", actor=acting_user, at=now,
                 payload={"declaration": declaration.pk})
    return declaration


@transaction.atomic
def do_refuse_suicide(declaration: SuicideDeclaration, *, acting_user, now: datetime | None = None
                      ) -> SuicideDeclaration:
    """The Tribune refuses a suicide declaration before the planned opening of the city's voting (L-NOM-5): the
    resident stays alive and votes as any other; they are told in their personal inbox. Returns the declaration.
    Raises ``NotAllowed`` (not the Tribune) or ``WrongState`` (as ``do_confirm_suicide``)."""
    now = now or timezone.now()
    declaration, _session = _decidable_declaration(declaration, acting_user=acting_user, now=now)
    declaration.refused_at = now
    declaration.save(update_fields=["refused_at"])
    personal = _personal_inbox(declaration.resident)
    if personal is not None:
        with translation.override(declaration.game.language):
            text = _("The Tribune refused your suicide declaration: you stay alive and vote today as everyone else.")
        do_post_site_message(personal, text, acting_user=None, now=now)
    record_event(declaration.game, "voting.suicide_refused", actor=acting_user, at=now,
                 payload={"declaration": declaration.pk, "resident": declaration.resident_id})
    return declaration


def _apply_suicides(game, city: City, day: int, *, at: datetime) -> list[int]:
    """At the opening of ``city``'s voting (of ``game``) on ``day`` (``at``: the planned opening, aware UTC, however late the
    clock runs): every declaration not refused is confirmed at ``at`` if the Tribune has not confirmed it, and its
    resident dies at ``at`` (L-NOM-5, L-DEATH-1: cemetery, status announced by the daily post as a death of that
    day). Returns the residents' ids."""
    applied = []
    for declaration in SuicideDeclaration.objects.select_for_update(of=("self",)).filter(
            city=city, day=day, refused_at__isnull=True, applied_at__isnull=True).select_related("resident"):
        fields = ["applied_at"]
        if declaration.confirmed_at is None:
            declaration.confirmed_at = at
            fields.append("confirmed_at")
            record_event(game, "voting.suicide_confirmed", actor=None, at=at,
                         payload={"declaration": declaration.pk})
        if declaration.resident.status == LifeStatus.ALIVE:
            do_kill_resident(declaration.resident, DeathCause.SUICIDE, acting_user=None, now=at)
            applied.append(declaration.resident_id)
        declaration.applied_at = at
        declaration.save(update_fields=fields)
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


def _personal_inbox(resident: Resident) -> Inbox | None:
    return Inbox.objects.filter(kind=LepraInboxKind.PERSONAL, resident=resident, rolled_over_at__isnull=True).first()
