"""The Supreme Court (L-COURT-1..4): the pure decision and the services over the demo game's three judges."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import translation

from cities.models import LifeStatus, Resident
from cities.scheduler import dispatch_due_events
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra import seats
from rulesets.lepra.court.decision import court_decision, court_threshold
from rulesets.lepra.court.services import do_close_court_case, do_court_vote, do_put_before_court
from tests.rulesets.lepra.day.day_helpers import CLOSES, US, ru, tied_session
from rulesets.lepra.models import DecisionSource, ExecutionDecision

DEADLINE = CLOSES + timedelta(minutes=50)  # 23:50 in Moscow


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


@pytest.mark.parametrize("judges, threshold", [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3)])
def test_at_least_half_of_the_sitting_judges_confirm_L_COURT_3(judges, threshold):
    assert court_threshold(judges) == threshold


def test_a_2_2_split_of_4_judges_decides_nothing_and_falls_back_L_COURT_3_L_COURT_4():
    votes = {"j1": "A", "j2": "A", "j3": "B", "j4": "B"}
    assert court_decision(["A", "B"], votes, 4, final=False) is None
    assert court_decision(["A", "B"], votes, 4, final=True) is None


def test_4_judges_confirming_decide_and_two_of_four_confirm_a_lone_leader_L_COURT_2_L_COURT_3():
    assert court_decision(["A", "B"], {"j1": "B", "j2": "B", "j3": "B", "j4": "B"}, 4, final=False) == "B"
    assert court_decision(["A", "B"], {"j1": "B", "j2": "B", "j3": "B"}, 4, final=False) == "B"
    assert court_decision(["A", "B"], {"j1": "B", "j2": "B"}, 4, final=False) is None  # j3, j4 may still tie it
    assert court_decision(["A", "B"], {"j1": "B", "j2": "B", "j3": "A"}, 4, final=True) == "B"
    assert court_decision(["A"], {"j1": "A", "j2": "A"}, 4, final=False) == "A"
    assert court_decision(["A", "B", "C"], {"j1": "A", "j2": "B", "j3": "C"}, 4, final=True) is None


def _judges(demo):
    return list(Resident.objects.filter(seats.rank_q("is_judge"), game=demo.game).select_related("user").order_by("city__number"))


def test_judges_choose_among_tied_leaders_and_the_sentence_is_executed_and_announced_L_COURT_2_L_COURT_3(demo):
    day, a, b, session = tied_session(demo)
    assert _refusal(NotAllowed, do_put_before_court, session, DEADLINE, acting_user=demo.tribune1, now=CLOSES) == (
        "Only the Supreme Arbiter puts a case before the court.")
    case = do_put_before_court(session, DEADLINE, acting_user=demo.arbiter, now=CLOSES + US)
    assert case.candidates == [str(a.pk), str(b.pk)]
    court = Inbox.objects.filter(kind=LepraInboxKind.COURT, rolled_over_at__isnull=True).get()
    assert Message.objects.filter(inbox=court).order_by("-id").first().body.startswith(ru("The court decides on %(city)s: %(candidates)s. Deadline: %(deadline)s.").split("%")[0])
    j1, j2, j3 = _judges(demo)
    assert _refusal(NotAllowed, do_court_vote, case, b, acting_user=day.plain[7].user, now=CLOSES + 2 * US) == (
        "Only sitting judges vote in the Supreme Court.")
    assert _refusal(InvalidInput, do_court_vote, case, day.plain[7], acting_user=j1.user, now=CLOSES + 2 * US) == (
        f"{day.plain[7].name} is not before the court.")
    do_court_vote(case, b, acting_user=j1.user, now=CLOSES + 3 * US)
    assert _refusal(InvalidInput, do_court_vote, case, a, acting_user=j1.user, now=CLOSES + 4 * US) == (
        "You have already voted in this case.")
    do_court_vote(case, b, acting_user=j2.user, now=CLOSES + 5 * US)  # 2 of 3: confirmed, j3 cannot tie it
    case.refresh_from_db()
    assert (case.sentenced, case.fallback, case.decided_at) == (b, False, CLOSES + 5 * US)
    b.refresh_from_db()
    assert (b.status, b.alignment_announced) == (LifeStatus.DEAD, False)  # the daily post announces it (L-DEATH-2)
    decision = ExecutionDecision.objects.get(city=day.city, day=2)
    assert (decision.resident, decision.source) == (b, DecisionSource.COURT)
    assert _refusal(WrongState, do_court_vote, case, a, acting_user=j3.user, now=CLOSES + 6 * US) == (
        "The court has already decided this case.")
    city_inbox = Inbox.objects.filter(kind=LepraInboxKind.CITY, city=day.city, rolled_over_at__isnull=True).get()
    assert Message.objects.filter(inbox=city_inbox).order_by("-id").first().body == ru(
        "The Supreme Court sentenced %(name)s. The daily post announces their side.", name=b.name)


def test_an_undecided_court_executes_the_leader_at_the_deadline_through_the_scheduler_L_COURT_4(demo):
    day, a, b, session = tied_session(demo)
    case = do_put_before_court(session, DEADLINE, acting_user=demo.arbiter, now=CLOSES + US)
    j1, j2, _j3 = _judges(demo)
    do_court_vote(case, a, acting_user=j1.user, now=CLOSES + 2 * US)
    do_court_vote(case, b, acting_user=j2.user, now=CLOSES + 3 * US)
    dispatch_due_events(now=DEADLINE - US)
    case.refresh_from_db()
    assert case.decided_at is None
    dispatch_due_events(now=DEADLINE)
    dispatch_due_events(now=DEADLINE + timedelta(minutes=1))
    case.refresh_from_db()
    assert (case.sentenced, case.fallback) == (a, True)  # a reached one vote first (L-VOTE-5)
    assert ExecutionDecision.objects.filter(city=day.city).count() == 1
    assert _refusal(WrongState, do_close_court_case, case, acting_user=demo.arbiter, now=DEADLINE) == (
        "The court has already decided this case.")


def _refusal(exc_type, fn, *args, **kwargs) -> str:
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    return str(info.value)
