"""Judges (RULES.md L-JUDGE): candidates (L-JUDGE-3), elections and precincts (L-JUDGE-4..6, L-DAY-4/5,
L-INBOX-10), recusal, removal demands (L-JUDGE-8/9), the court renewed after a change of judges (L-JUDGE-10)."""
from __future__ import annotations

from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cities.models import City, GameStatus, LifeStatus, Resident, ScheduledEvent, StaffRole
from inboxes import policies, viewer_reads
from rulesets.lepra.inbox_services import renew_court
from inboxes.models import Inbox, Membership, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.services import do_post_site_message, ensure_member, new_inbox, write_proxy_message
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra import seats
from rulesets.lepra.clock.services import do_replan_clock
from rulesets.lepra.day.services import (
    FIRST_EXECUTION_DAY,
    _check_running,
    _check_tribune,
    _local,
    _personal_inbox,
    _seat_of,
    session_of,
)
from rulesets.lepra.day.tally import LepraAccepted, LepraRefusal, LepraVoteMessage, tally_lepra_election
from rulesets.lepra.staff_kinds import StaffKind
from rulesets.lepra.models import (
    ElectionBallot,
    ElectionProxy,
    ElectionReason,
    JudgeElection,
    JudgeProposal,
    JudgeRecusal,
    Precinct,
    RemovalConfirmation,
    RemovalDemand,
)
from rulesets.lepra.day.keywords import LepraBallot, parse_lepra_election

# ==============================================================================================================
# Judges : candidates (L-JUDGE-3), elections and precincts (L-JUDGE-4..6, L-DAY-4/5, L-INBOX-10),
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
    viewer_reads.forget_viewer_cache(user)
    return policies.holds_role(user, game, StaffKind.ARBITER)


def _check_arbiter_or_site(game, acting_user, rule: str) -> None:
    if acting_user is not None and not _is_arbiter(acting_user, game):
        raise NotAllowed(_("Only the Supreme Arbiter may do this."), rule=rule)


def current_city_inbox(city: City) -> Inbox | None:
    """The live city inbox of ``city`` (not rolled over, not killed; the newest), or None."""
    return Inbox.objects.filter(city=city, kind=LepraInboxKind.CITY, rolled_over_at__isnull=True,
                                killed_at__isnull=True).select_related("game").order_by("-id").first()


def _announce_in_city(city: City, text_fn, now: datetime, *, inbox: Inbox | None = None) -> None:
    """Post ``text_fn()`` (translated in the game's language) in the current city inbox as the site (``inbox``:
    the current city inbox when the caller has just read it)."""
    inbox = inbox or current_city_inbox(city)
    if inbox is None:
        return
    with translation.override(city.game.language):
        text = text_fn()
    do_post_site_message(inbox, text, acting_user=None, now=now)


def sitting_judge_of(city: City) -> Resident | None:
    """The living sitting judge of ``city``, or None (L-JUDGE-1)."""
    return (Resident.objects.filter(seats.rank_q("is_judge"), city=city, status=LifeStatus.ALIVE)
            .select_related(seats.SEAT).first())


def pending_election(city: City):
    """The scheduled, not yet closed (nor cancelled) election of ``city``, or None."""
    return JudgeElection.objects.filter(city=city, closed_at__isnull=True, cancelled_at__isnull=True).first()


def cities_needing_judge_election(game):
    """The cities of ``game`` that need a judge election (``city_needs_judge_election``), as one query whatever
    the number of cities: a QuerySet of City in city order (L-JUDGE-1, L-JUDGE-2). Reads only; never raises."""
    living = Resident.objects.filter(city=OuterRef("pk"), status=LifeStatus.ALIVE)
    pending = JudgeElection.objects.filter(city=OuterRef("pk"), closed_at__isnull=True, cancelled_at__isnull=True)
    return (City.objects.filter(game=game).filter(Exists(living), ~Exists(living.filter(seats.rank_q("is_judge"))),
                                                  ~Exists(pending)).order_by("number"))


def city_needs_judge_election(city: City) -> bool:
    """True when ``city`` has no living sitting judge and no election pending (L-JUDGE-1, L-JUDGE-2): after day 1
    started, a removal, a recusal, or the judge's death (killed, executed, suicide, penalty). The clock and the
    night resolution call this after a change to tell the Arbiter to schedule one (``do_schedule_judge_election``).
    A city without living residents needs none. One query; reads only; never raises."""
    return cities_needing_judge_election(city.game_id).filter(pk=city.pk).exists()


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
    ScheduledEvent.objects.bulk_create([
        ScheduledEvent(game=election.game, kind=kind, due_at=due, payload={"election": election.pk}, created_at=now,
                       created_by=acting_user)
        for kind, due in (("election_open", election.opens_at), ("election_close", election.closes_at))])


def election_announcement(election, *, after_failure: bool = False) -> str:
    """The announcement of ``election`` in its city inbox (L-DAY-4), in the active language: its times in the
    game's zone; ``after_failure``: it follows a failed election (L-JUDGE-5)."""
    game = election.game
    params = {"city": election.city.name, "opens": _local(game, election.opens_at),
              "closes": _local(game, election.closes_at)}
    if after_failure:
        return _("The judge election in %(city)s failed: no candidate has at least as many pros as cons. "
                 "A new election: from %(opens)s to %(closes)s. Propose your candidate in your personal inbox.") % params
    return _("Judge election in %(city)s: from %(opens)s to %(closes)s. Propose your candidate in your personal "
             "inbox.") % params


def _announce_election(election, now: datetime, *, after_failure: bool = False, inbox: Inbox | None = None) -> None:
    _announce_in_city(election.city, lambda: election_announcement(election, after_failure=after_failure), now,
                      inbox=inbox)


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
    candidate = Resident.objects.select_related("city", seats.SEAT).get(pk=candidate.pk)
    if candidate.city_id != seat.city_id:
        raise InvalidInput(_("Only residents of your own city can be proposed."), rule="L-JUDGE-3")
    if candidate.status != LifeStatus.ALIVE:
        raise InvalidInput(_("%(name)s is not alive.") % {"name": candidate.name}, rule="L-JUDGE-1")
    if seats.is_judge(candidate):
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
    office = Inbox.objects.filter(game=game, kind=LepraInboxKind.OFFICE, rolled_over_at__isnull=True,
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
    ballot, ``rulesets.lepra.day.keywords.parse_lepra_election``) as ``voter`` in ``candidate``'s precinct, timed at the
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
        candidate = Resident.objects.select_related(seats.SEAT).get(pk=candidate.pk)
        if (candidate.status != LifeStatus.ALIVE or seats.is_judge(candidate)
                or _barred_as_removed(candidate, game.day_number)):
            continue
        inbox = new_inbox(game, LepraInboxKind.PRECINCT, title=_precinct_title(game, city, candidate), actor=acting_user,
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


def compute_election_tally(election, *, closes_at: datetime | None = None, precincts: list | None = None):
    """The tally of ``election`` from its stored precinct messages (L-JUDGE-4..6): ``(LepraElectionResult,
    names)`` with residents keyed by ``str(pk)``; ``names`` maps keys to names. Only residents' messages count
    (the Arbiter's posts are announcements); proxies count at the opening. The voters are every seat made a member
    of a precinct at the opening [interp, as the execution tally]; a candidate who died is out (their precinct is
    killed, its ballots void). ``closes_at`` defaults to the election's (a live standing uses it too: ballots
    not yet posted simply are not there). ``precincts``: the election's precincts (with their candidates) in id
    order when the caller has read them (an election closed in a batch). Returns ``(None, {})`` before the
    opening."""
    if election.opened_at is None:
        return None, {}
    if precincts is None:
        precincts = list(election.precincts.select_related("inbox", "candidate").order_by("id"))
    alive = [p for p in precincts if p.candidate.status == LifeStatus.ALIVE]
    inbox_ids = [p.inbox_id for p in alive]
    names, voters, messages = {}, set(), []
    if precincts:  # without one there is nothing to read (and building the empty queries is not free)
        for m in Membership.objects.filter(inbox_id__in=[p.inbox_id for p in precincts]).select_related("resident"):
            voters.add(str(m.resident_id))
            names[str(m.resident_id)] = m.resident.name
        for p in precincts:
            names[str(p.candidate_id)] = p.candidate.name
        candidate_of = {p.inbox_id: str(p.candidate_id) for p in alive}
        proxies = set(ElectionBallot.objects.filter(inbox_id__in=inbox_ids, proxy=True).values_list("message_id",
                                                                                                     flat=True))
        messages = [
            LepraVoteMessage(seq=m.pk, at=m.received_at, author=str(m.author_resident_id),
                             inbox=candidate_of[m.inbox_id], text=m.body, proxy=m.pk in proxies)
            for m in Message.objects.filter(inbox_id__in=inbox_ids, author_resident__isnull=False).order_by(
                "received_at", "id")
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
    return Membership.objects.filter(inbox__game=game, inbox__kind=LepraInboxKind.COURT).exists()


def _every_city_has_a_judge(game) -> bool:
    """True when every city of ``game`` with a living resident has a living sitting judge (L-DAY-5): one query,
    whatever the number of cities (no city with the living but without a living judge)."""
    living_judge = Resident.objects.filter(seats.rank_q("is_judge"), city=OuterRef("pk"), status=LifeStatus.ALIVE)
    return not (City.objects.filter(game=game, residents__status=LifeStatus.ALIVE)
                .filter(~Exists(living_judge)).exists())


def _renew_court_if_formed(game, *, actor, now: datetime, joining: bool) -> Inbox | None:
    """L-JUDGE-10 / L-DAY-5: after a change of judges, a new court inbox (``rulesets.lepra.inbox_services.renew_court``),
    except while the court is not formed yet: then it is formed (renewed) once every city has a judge, and a
    judge leaving before that changes nothing. ``joining``: the change added a judge."""
    if _court_formed(game) or (joining and _every_city_has_a_judge(game)):
        return renew_court(game, actor=actor, now=now)
    return None


def election_result_text(game, city: City, result, names: dict[str, str], winner_name: str | None) -> str:
    """The result of ``city``'s election as posted in its city inbox (L-JUDGE-5), in ``game``'s language:
    ``result`` a ``LepraElectionResult``, ``names`` resident keys -> names, ``winner_name`` None when it failed."""
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
        winner = (Resident.objects.select_for_update(of=("self",)).select_related(seats.SEAT)
                  .get(pk=int(result.winner)))
        if winner.status != LifeStatus.ALIVE or sitting_judge_of(city) is not None:
            winner = None
    election.winner = winner
    election.save(update_fields=["closes_at", "closed_at", "result", "winner"])
    Inbox.objects.filter(precinct__election=election, killed_at__isnull=True).update(killed_at=now)
    ScheduledEvent.objects.filter(game=game, kind="election_close", done_at__isnull=True, cancelled_at__isnull=True,
                                  payload__election=election.pk, due_at__gt=now).update(cancelled_at=now)
    city_inbox = current_city_inbox(city)
    if city_inbox is not None:
        do_post_site_message(city_inbox, election_result_text(game, city, result, names,
                                                              winner.name if winner else None),
                             acting_user=None, now=now)
    record_event(game, "election.closed", actor=acting_user, at=now,
                 payload={"election": election.pk, "winner": winner.pk if winner else None})
    if winner is not None:
        seats.do_set_seat_flags(winner, is_judge=True, acting_user=None, now=now)
        _renew_court_if_formed(game, actor=acting_user, now=now, joining=True)
    elif game.status == GameStatus.RUNNING:
        length = election.closes_at - election.opens_at
        opens_at = now + ELECTION_NOTICE
        follow = JudgeElection.objects.create(game=game, city=city, day=game.day_number, reason=ElectionReason.FAILED,
                                              announced_at=now, opens_at=opens_at, closes_at=opens_at + length,
                                              follows=election)
        _create_election_events(follow, acting_user=None, now=now)
        _announce_election(follow, now, after_failure=True, inbox=city_inbox)
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
    A demand received later than 4 h before the city's execution voting start that day is refused (it could never
    be considered). Announced in the city inbox. Returns the ``RemovalDemand``. Raises
    ``NotAllowed`` (no seat, not living, the judge themself), ``InvalidInput`` (a second demand of the seat against
    this judge today) or ``WrongState`` (day 1, no judge, too late, game not running)."""
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
    if deadline is not None and now > deadline:  # it could never be considered: refused at once, nothing opened
        raise WrongState(_("A removal demand is received no later than 4 hours before execution voting starts "
                           "(%(at)s): this one would not be considered.") % {"at": _local(game, deadline)},
                         rule="L-JUDGE-8")
    considered = True
    with translation.override(game.language):
        title = _("Removal of judge %(name)s, day %(day)d") % {"name": judge.name, "day": game.day_number}
    members = list(Resident.objects.filter(city=seat.city, status=LifeStatus.ALIVE))
    inbox = new_inbox(game, LepraInboxKind.REMOVAL, title=title, actor=acting_user, now=now, city=seat.city,
                       organizer_resident=seat, resident=judge, members=members)
    demand = RemovalDemand.objects.create(game=game, city=seat.city, day=game.day_number, judge=judge, organizer=seat,
                                          inbox=inbox, opened_at=now, deadline=deadline, considered=considered)
    RemovalConfirmation.objects.create(demand=demand, resident=seat, at=now, considered=considered)
    for r in members:
        viewer_reads.forget_viewer_cache(r.user)
    _announce_in_city(seat.city, lambda: _("%(organizer)s demands the removal of judge %(judge)s: confirm in the "
                                           "demand's inbox.") % {"organizer": seat.name, "judge": judge.name}, now)
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
    if demand.removed_at is not None or not Resident.objects.filter(
            seats.rank_q("is_judge"), pk=demand.judge_id, status=LifeStatus.ALIVE).exists():
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
        office = Inbox.objects.filter(game=game, kind=LepraInboxKind.OFFICE, rolled_over_at__isnull=True,
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
    seats.do_set_seat_flags(judge, is_judge=False, acting_user=None, now=now)
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
    judge = (Resident.objects.select_for_update(of=("self",)).select_related("game", seats.SEAT)
             .get(pk=demand.judge_id))
    if not seats.is_sitting_judge(judge):
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
    judge = (Resident.objects.select_for_update(of=("self",)).select_related("game", "city", seats.SEAT)
             .get(pk=judge.pk))
    game = judge.game
    seat = policies.seat_in(acting_user, game) if acting_user is not None else None
    if acting_user is None or not (_is_arbiter(acting_user, game) or (seat is not None and seat.pk == judge.pk)):
        raise NotAllowed(_("Only the judge or the Supreme Arbiter may record a recusal."), rule="L-JUDGE-9")
    _check_running(game)
    at = received_at or now
    if timezone.is_naive(at) or at > now:
        raise InvalidInput(_("The resignation's time must be a past time with its time zone."), rule="L-JUDGE-9")
    if not seats.is_sitting_judge(judge):
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
