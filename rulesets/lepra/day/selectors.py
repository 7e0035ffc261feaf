"""Reads of the Lepra day pages, viewer-scoped through ``inboxes.policies``. The live tally is the standing votes
kept as data (``rulesets.lepra.day.standing``), ranked by the pure core's rule; a closed voting shows its stored result."""
from __future__ import annotations

from dataclasses import dataclass, field

from cities.models import City, LifeStatus, Resident
from inboxes import day_policy, policies
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from rulesets.lepra.court.judge_services import (
    candidates_of,
    compute_election_tally,
    pending_election,
    sitting_judge_of,
)
from rulesets.lepra.models import (
    CourtCase,
    ExecutionDecision,
    JudgeElection,
    JudgeProposal,
    Nomination,
    Precinct,
    ProxyRequest,
    RemovalConfirmation,
    RemovalDemand,
    SpeechRequest,
    SuicideDeclaration,
    VotingSession,
)

from .services import FIRST_EXECUTION_DAY, awaiting_procurator, nominees_of
from .standing import stored_session_tally, voting_inboxes_of


@dataclass
class TallyRow:
    nominee: str
    count: int
    voters: list[str]
    changed_mind: list[str]
    void: bool
    inbox: Inbox | None = None


@dataclass
class TallyBox:
    """What a page shows of a session's tally: rows in ranking order (void ones last) and the leader's name."""

    rows: list[TallyRow] = field(default_factory=list)
    leader: str | None = None
    closed: bool = False


def tally_box(session: VotingSession) -> TallyBox | None:
    """The standing tally of ``session`` (or its stored result once closed), names resolved; None before the
    opening. The caller has checked ``can_see_voting_tally``."""
    if session.opened_at is None:
        return None
    voting_inboxes = voting_inboxes_of(session)
    if session.result is not None:
        data = session.result
        names = data.get("names", {})
    else:
        result, names = stored_session_tally(session, voting_inboxes)  # the standing votes kept as data
        data = result.as_dict()
    inboxes = {str(i.resident_id): i for i in voting_inboxes}
    order = {key: n for n, key in enumerate(data["ranking"])}
    rows = [TallyRow(nominee=names.get(t["nominee"], t["nominee"]), count=t["count"],
                     voters=[names.get(v, v) for v in t["voters"]],
                     changed_mind=[names.get(v, v) for v in t["changed_mind"]], void=t["void"],
                     inbox=inboxes.get(t["nominee"]))
            for t in sorted(data["nominees"], key=lambda t: order.get(t["nominee"], len(order)))]
    leader = names.get(data["leader"], data["leader"]) if data["leader"] else None
    return TallyBox(rows=rows, leader=leader, closed=session.closed_at is not None)


def tally_box_for_inbox(viewer, inbox: Inbox) -> TallyBox | None:
    """The tally box shown above a voting inbox's thread (the caller has checked the viewer reads ``inbox``)."""
    if inbox.kind == LepraInboxKind.PRECINCT:
        return precinct_box_for_inbox(inbox)
    if inbox.kind != LepraInboxKind.VOTING:
        return None
    session = VotingSession.objects.filter(city_id=inbox.city_id, day=inbox.day_number).first()
    return tally_box(session) if session is not None else None


@dataclass
class CityDay:
    city: City
    day: int
    session: VotingSession | None
    is_tribune: bool
    nominations: list[Nomination] | None  # None: the viewer may not see who nominated whom
    nominees: list[Resident] | None  # None: not public yet
    proxies: list[ProxyRequest]
    tally: TallyBox | None
    voting_inboxes: list[Inbox]
    suicides: list[SuicideDeclaration] = field(default_factory=list)  # the Tribune's list (L-NOM-5)
    awaiting_decision: bool = False  # L-VOTE-7, shown to everyone
    decision: ExecutionDecision | None = None
    is_procurator: bool = False
    decision_choices: list[Resident] = field(default_factory=list)
    speech_requests: list[SpeechRequest] | None = None  # L-NOM-4: the Tribune and the Procurator
    court_case: CourtCase | None = None
    is_arbiter: bool = False
    judge_seat: Resident | None = None  # the viewer's seat when a sitting judge who has not voted in the case
    court_choices: list[Resident] = field(default_factory=list)
    judges: object | None = None  # JudgesBox 


def city_day_for(viewer, city: City) -> CityDay:
    """The city day page's data for ``viewer`` (L-NOM, L-VOTE): nominations for the Tribune, Procurator and
    Arbiter; the nominees for everyone once voting opens; the standing tally for readers of its inboxes."""
    game = city.game
    day = game.day_number
    session = VotingSession.objects.filter(city=city, day=day).first()
    is_tribune = policies.holds_role(viewer, game, "tribune", city_id=city.pk)
    see_nominations = day_policy.can_see_nominations(viewer, city)
    nominations = (list(Nomination.objects.filter(city=city, day=day).select_related("nominator", "nominee"))
                   if see_nominations else None)
    opened = session is not None and session.opened_at is not None
    nominees = nominees_of(city, day) if (opened or see_nominations) else None
    voting_inboxes = list(Inbox.objects.filter(city=city, day_number=day, kind=LepraInboxKind.VOTING)
                          .select_related("game", "resident").order_by("id"))
    # One query through the policy's queryset form, not an instance check (and a membership query) per inbox.
    readable_ids = set(policies.readable_inboxes(viewer, game).filter(pk__in=[i.pk for i in voting_inboxes])
                       .values_list("pk", flat=True))
    readable = [i for i in voting_inboxes if i.pk in readable_ids]
    tally = tally_box(session) if opened and day_policy.can_see_voting_tally(viewer, city, readable) else None
    proxies = (list(ProxyRequest.objects.filter(city=city, day=day).select_related("resident", "nominee"))
               if is_tribune else [])
    suicides = (list(SuicideDeclaration.objects.filter(city=city, day=day).select_related("resident"))
                if is_tribune else [])
    awaiting = day >= 2 and awaiting_procurator(city, day)
    is_procurator = policies.holds_role(viewer, game, "procurator")
    choices = (list(Resident.objects.filter(city=city, status=LifeStatus.ALIVE).order_by("name"))
               if awaiting and is_procurator else [])
    return CityDay(city=city, day=day, session=session, is_tribune=is_tribune, nominations=nominations,
                   nominees=nominees, proxies=proxies, tally=tally, voting_inboxes=readable, suicides=suicides,
                   awaiting_decision=awaiting,
                   decision=ExecutionDecision.objects.filter(city=city, day=day).select_related("resident").first(),
                   is_procurator=is_procurator, decision_choices=choices,
                   speech_requests=(list(SpeechRequest.objects.filter(city=city, day=day).select_related(
                       "resident", "other")) if day_policy.can_see_speech_requests(viewer, city) else None),
                   judges=judges_box(viewer, city), **_court_part(viewer, city, session))


def todays_session(city: City) -> VotingSession | None:
    """Today's execution voting session of ``city`` (L-DAY-3), or None when none is scheduled."""
    return VotingSession.objects.filter(city=city, day=city.game.day_number).select_related("city", "game").first()


def todays_court_case(city: City) -> CourtCase | None:
    """The Supreme Court case of ``city``'s voting today (L-COURT-1), or None when none is before the court."""
    return (CourtCase.objects.filter(session__city=city, session__day=city.game.day_number)
            .select_related("game", "city", "sentenced").first())


def court_candidates(case: CourtCase) -> list[Resident]:
    """The residents before the court in ``case`` (L-COURT-2: the leader or the tied leaders), by name."""
    return list(Resident.objects.filter(pk__in=[int(c) for c in case.candidates]).order_by("name"))


def living_residents_of(city: City) -> list[Resident]:
    """The living residents of ``city`` by name (public: deaths are announced), the Procurator's choices when the
    voting decided nothing (L-VOTE-7)."""
    return list(Resident.objects.filter(city=city, status=LifeStatus.ALIVE).order_by("name"))


def _court_part(viewer, city: City, session: VotingSession | None) -> dict:
    """The court's side of the day page (L-COURT): the case, the Arbiter's powers, a judge's vote."""
    case = (CourtCase.objects.filter(session=session).select_related("sentenced").first()
            if session is not None else None)
    seat = policies.seat_in(viewer, city.game_id)
    judge = None
    if (case is not None and case.decided_at is None and seat is not None and seats.is_sitting_judge(seat)
            and not case.votes.filter(judge=seat).exists()):
        judge = seat
    choices = (list(Resident.objects.filter(pk__in=[int(c) for c in case.candidates]).order_by("name"))
               if judge is not None else [])
    return {"court_case": case, "is_arbiter": policies.holds_role(viewer, city.game, "arbiter"),
            "judge_seat": judge, "court_choices": choices}


def nominate_choices(seat: Resident) -> list[Resident]:
    """Whom ``seat`` may nominate (L-NOM-1/2): living residents of their city but the sitting judge."""
    return list(Resident.objects.filter(seats.rank_q("is_judge", False), city_id=seat.city_id,
                                        status=LifeStatus.ALIVE).order_by("name"))



def my_day(seat: Resident) -> dict:
    """The seat's own nomination and proxy requests today."""
    day = seat.game.day_number
    return {
        "nomination": Nomination.objects.filter(nominator=seat, day=day).select_related("nominee").first(),
        "proxies": list(ProxyRequest.objects.filter(resident=seat, day=day).select_related("nominee")),
        "suicide": SuicideDeclaration.objects.filter(resident=seat, day=day).first(),
    }


# --------------------------------------------------------------------------------------------------------------
# Judges : the city's bench on the day page
# --------------------------------------------------------------------------------------------------------------

@dataclass
class PrecinctRow:
    """One precinct's standing (L-JUDGE-4/5): pros, cons, score and the latest pro ballot time."""

    inbox: Inbox
    candidate: str
    pros: int
    cons: int
    score: int
    latest_pro_at: object
    killed: bool


@dataclass
class JudgesBox:
    """What the city day page shows about the judge of ``city`` to one viewer (L-JUDGE)."""

    judge: Resident | None
    election: object | None  # the pending JudgeElection, else the latest one (announced publicly, L-DAY-4)
    candidates: list[Resident] | None  # None: not for this viewer (the Tribune collects them, L-JUDGE-3)
    precincts: list[PrecinctRow]  # readable precincts with live standing scores
    winner: str | None
    my_proposal: object | None
    propose_choices: list[Resident]
    demands: list[dict]  # readable removal demands: {"demand", "confirmations", "can_confirm"}
    can_open_removal: bool
    can_recuse: bool


def judges_box(viewer, city: City) -> JudgesBox:
    """The bench of ``city`` for ``viewer``: the sitting judge (public), the pending or latest election, the
    candidates for the city's Tribune, the Arbiter and the Procurator, the precincts the viewer may read with their
    live standing scores (``compute_election_tally``, the same tally as the close; L-INBOX-20: only readable
    precincts), the viewer's own proposal and what they may do (propose, open or confirm a removal demand,
    resign). Queries are per precinct and per demand, a handful per page."""
    game = city.game
    seat = policies.seat_in(viewer, game)
    judge = sitting_judge_of(city)
    election = pending_election(city) or JudgeElection.objects.filter(city=city).order_by("-id").first()
    staff = (policies.holds_role(viewer, game, "tribune", city_id=city.pk)
             or policies.holds_role(viewer, game, "arbiter") or policies.holds_role(viewer, game, "procurator"))
    candidates = candidates_of(election) if election is not None and staff else None
    rows, winner = [], None
    if election is not None and election.opened_at is not None:
        precincts = list(election.precincts.select_related("inbox__game", "candidate").order_by("id"))
        readable = set(policies.readable_inboxes(viewer, game).filter(pk__in=[p.inbox_id for p in precincts])
                       .values_list("pk", flat=True))
        if readable:
            result, _names = compute_election_tally(election)
            by_key = {t.candidate: t for t in result.candidates}
            for p in precincts:
                if p.inbox_id not in readable:
                    continue
                t = by_key.get(str(p.candidate_id))
                rows.append(PrecinctRow(inbox=p.inbox, candidate=p.candidate.name, pros=len(t.pros) if t else 0,
                                        cons=len(t.cons) if t else 0, score=t.score if t else 0,
                                        latest_pro_at=t.latest_pro_at if t else None,
                                        killed=p.inbox.killed_at is not None))
        if election.closed_at is not None and election.winner_id:
            winner = election.winner.name
    living_here = seat is not None and seat.city_id == city.pk and seat.status == LifeStatus.ALIVE
    my_proposal = None
    choices: list[Resident] = []
    if living_here and election is not None and election.is_pending:
        my_proposal = JudgeProposal.objects.filter(election=election, proposer=seat).select_related("candidate").first()
        if my_proposal is None and election.opened_at is None and election.candidates_passed_at is None:
            choices = list(Resident.objects.filter(seats.rank_q("is_judge", False), city=city, status=LifeStatus.ALIVE)
                           .order_by("name"))
    demands = []
    demand_rows = list(RemovalDemand.objects.filter(city=city).select_related("inbox", "judge", "organizer"))
    readable = set(policies.readable_inboxes(viewer, game).filter(pk__in=[d.inbox_id for d in demand_rows])
                   .values_list("pk", flat=True))
    for d in demand_rows:
        if d.inbox_id not in readable:
            continue
        confirmed = RemovalConfirmation.objects.filter(demand=d, considered=True).count()
        mine = seat is not None and RemovalConfirmation.objects.filter(demand=d, resident=seat).exists()
        demands.append({"demand": d, "confirmations": confirmed,
                        "can_confirm": (living_here and not mine and d.removed_at is None and seat.pk != d.judge_id
                                        and d.judge_id == (judge.pk if judge else None))})
    return JudgesBox(
        judge=judge, election=election, candidates=candidates, precincts=rows, winner=winner, my_proposal=my_proposal,
        propose_choices=choices, demands=demands,
        can_open_removal=(living_here and judge is not None and judge.pk != seat.pk
                          and game.day_number >= FIRST_EXECUTION_DAY),
        can_recuse=living_here and judge is not None and judge.pk == seat.pk)


@dataclass
class PrecinctBox:
    """The standing of an election shown above one of its precincts (L-JUDGE-4/5): every precinct's row (they all
    have the same readers, the city's residents at the opening), and the winner once closed."""

    rows: list[PrecinctRow]
    closed: bool
    winner: str | None
    precinct: bool = True


def precinct_box_for_inbox(inbox: Inbox) -> PrecinctBox | None:
    """The live standing of the election of the precinct ``inbox`` (the caller has checked the viewer reads it):
    pros, cons, score and the latest pro time of each candidate, computed by the pure tally (the stored result
    once closed)."""
    precinct = Precinct.objects.select_related("election").filter(inbox=inbox).first()
    if precinct is None:
        return None
    election = precinct.election
    result, _names = compute_election_tally(election)
    if result is None:
        return None
    by_key = {t.candidate: t for t in result.candidates}
    rows = []
    for p in election.precincts.select_related("inbox", "candidate").order_by("id"):
        t = by_key.get(str(p.candidate_id))
        rows.append(PrecinctRow(inbox=p.inbox, candidate=p.candidate.name, pros=len(t.pros) if t else 0,
                                cons=len(t.cons) if t else 0, score=t.score if t else 0,
                                latest_pro_at=t.latest_pro_at if t else None, killed=p.inbox.killed_at is not None))
    return PrecinctBox(rows=rows, closed=election.closed_at is not None,
                       winner=election.winner.name if election.winner_id else None)
