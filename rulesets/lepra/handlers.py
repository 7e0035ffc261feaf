"""Scheduled events of the Lepra day (DESIGN.md "The clock"), registered in ``cities.scheduler.HANDLERS`` when the
Lepra app is ready: ``voting_open`` at the Tribune's opening and ``voting_close`` at the closing (L-DAY-3,
L-VOTE-6), the court's deadline (L-COURT-4), judge elections opening and closing (L-JUDGE-4/5), those due at
the same planned time in one batch (``cities.scheduler.BATCH_HANDLERS``).
Handlers change state only through services (``acting_user=None``)."""
from __future__ import annotations

from datetime import datetime

from cities.models import ScheduledEvent
from cities.scheduler import batch_handler, handler
from kernel.errors import WrongState
from rulesets.lepra.court.election_batch_services import do_close_elections, do_open_elections
from rulesets.lepra.court.judge_services import do_close_election, do_open_election
from rulesets.lepra.court.services import do_close_court_case
from rulesets.lepra.day.services import do_close_voting, do_open_voting
from rulesets.lepra.day.window_services import do_report_missed_voting, is_missed
from rulesets.lepra.models import CourtCase, JudgeElection, VotingSession


@handler("voting_open")
def _voting_open(event: ScheduledEvent, now: datetime) -> str:
    """Open the session's voting inboxes (L-VOTE-1). A session the Tribune opened by hand is left as it is. A window
    that passed entirely while the clock was down is reported to the staff (``rulesets.lepra.day.window_services``), never skipped
    silently."""
    session = VotingSession.objects.get(pk=event.payload["session"], game=event.game_id)
    if is_missed(session, now):  # the clock was down over the whole window: never skipped silently
        do_report_missed_voting(session, now=now)
        return f"voting session {session.pk} missed: the staff are told"
    try:
        inboxes = do_open_voting(session, acting_user=None, now=now)
    except WrongState as exc:
        return f"voting session {session.pk} not opened: {exc}"
    return f"opened voting session {session.pk}: {len(inboxes)} voting inboxes"


@handler("voting_close")
def _voting_close(event: ScheduledEvent, now: datetime) -> str:
    """Close the session and post the result (L-VOTE-6); the cut-off stays ``closes_at`` (L-VOTE-8)."""
    session = VotingSession.objects.get(pk=event.payload["session"], game=event.game_id)
    if is_missed(session, now):
        do_report_missed_voting(session, now=now)
        return f"voting session {session.pk} missed: the staff are told"
    try:
        do_close_voting(session, acting_user=None, now=now)
    except WrongState as exc:
        return f"voting session {session.pk} not closed: {exc}"
    return f"closed voting session {session.pk}"


@handler("court_deadline")
def _court_deadline(event: ScheduledEvent, now: datetime) -> str:
    """The court's deadline: decide with the votes as they are, else execute the leader (L-COURT-4)."""
    case = CourtCase.objects.get(pk=event.payload["case"], game=event.game_id)
    try:
        do_close_court_case(case, acting_user=None, now=now)
    except WrongState as exc:
        return f"court case {case.pk} left: {exc}"
    return f"closed court case {case.pk}"


@handler("election_open")
def _election_open(event: ScheduledEvent, now: datetime) -> str:
    """Open the election's precincts and cast the Arbiter's proxy ballots (L-JUDGE-4, L-JUDGE-6). An election the
    Arbiter opened by hand, or one replaced meanwhile, is left as it is."""
    election = JudgeElection.objects.get(pk=event.payload["election"], game=event.game_id)
    try:
        inboxes = do_open_election(election, acting_user=None, now=now)
    except WrongState as exc:
        return f"election {election.pk} not opened: {exc}"
    return f"opened election {election.pk}: {len(inboxes)} precincts"


@handler("election_close")
def _election_close(event: ScheduledEvent, now: datetime) -> str:
    """Count the election and announce the judge, or schedule a new election when it failed (L-JUDGE-5)."""
    election = JudgeElection.objects.get(pk=event.payload["election"], game=event.game_id)
    try:
        do_close_election(election, acting_user=None, now=now)
    except WrongState as exc:
        return f"election {election.pk} not closed: {exc}"
    return f"closed election {election.pk}"


@batch_handler("election_open")
def _elections_open(events: list[ScheduledEvent], now: datetime) -> list[str]:
    """The openings of several elections of one game due at the same planned time (every city's, or every failed
    round again), in one transaction: those without a candidate together (``do_open_elections``), then each
    other one as ``_election_open`` opens it."""
    opened = do_open_elections(events[0].game, [e.payload["election"] for e in events], acting_user=None, now=now)
    return [f"opened election {e.payload['election']}: 0 precincts" if e.payload["election"] in opened
            else _election_open(e, now) for e in events]


@batch_handler("election_close")
def _elections_close(events: list[ScheduledEvent], now: datetime) -> list[str]:
    """The closes of several elections of one game due at the same planned time, in one transaction: those
    without a precinct together (``do_close_elections``: each failed, a new one scheduled), then each other one
    as ``_election_close`` closes it."""
    closed = do_close_elections(events[0].game, [e.payload["election"] for e in events], acting_user=None, now=now)
    return [f"closed election {e.payload['election']}" if e.payload["election"] in closed
            else _election_close(e, now) for e in events]
