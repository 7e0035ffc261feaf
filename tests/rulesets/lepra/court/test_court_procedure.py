"""The court's threshold and procedure (L-COURT-3): at least half of the votes cast by default, no decision when two
nominees each hold half (then L-COURT-4), and the Arbiter's choice of procedure per game before the court sits,
announced in the court's inbox and audited; the console page that sets it."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import translation

from kernel.errors import InvalidInput, NotAllowed, WrongState
from cities.models import Alignment, City, GameEvent, LifeStatus, Resident
from cities.scheduler import dispatch_due_events
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from tests.support.staff_console import flashed, staff_client
from tests.factories import CityFactory, ResidentFactory
from tests.rulesets.lepra.day.day_helpers import CLOSES, MORNING, US, ru, tied_session
from rulesets.lepra.court.decision import SITTING_JUDGES, VOTES_CAST, court_decision
from rulesets.lepra.court.services import court_procedure_of, do_set_court_procedure
from rulesets.lepra.models import CourtProcedure, CourtProcedureChoice
from rulesets.lepra.day.services import _local
from rulesets.lepra.court.services import do_court_vote, do_put_before_court

DEADLINE = CLOSES + timedelta(minutes=50)  # 23:50 in Moscow
VOTES_CAST_TEXT = ("A sentence is confirmed by at least half of the votes cast; two nominees with half of the votes "
                   "each is no decision.")
SITTING_TEXT = ("A sentence is confirmed by at least half of the sitting judges; two nominees with as many votes "
                "each is no decision.")


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def _refusal(exc_type, fn, *args, **kwargs) -> str:
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    return str(info.value)


def _court_messages():
    court = Inbox.objects.filter(kind=LepraInboxKind.COURT, rolled_over_at__isnull=True).get()
    return list(Message.objects.filter(inbox=court).order_by("id").values_list("body", flat=True))


def _five_judges(demo):
    """The demo's three judges and the judges of two cities added to the game: a court of five (one judge per
    city)."""
    judges = list(Resident.objects.filter(seats.rank_q("is_judge"), game=demo.game).order_by("city__number"))
    top = City.objects.filter(game=demo.game).order_by("-number").first().number
    for number in (top + 1, top + 2):
        city = CityFactory(game=demo.game, number=number)
        judges.append(ResidentFactory(city=city, is_judge=True, alignment=Alignment.HONEST))
    return judges


# ---- the pure decision ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("votes, judges, expected", [
    ({"j1": "A", "j2": "A", "j3": "B"}, 5, "A"),             # 2 of 3 votes cast: at least half
    ({"j1": "A"}, 5, "A"),                                   # 1 of 1 cast
    ({"j1": "A", "j2": "B", "j3": "C"}, 5, None),            # a third each: nobody at half
    ({"j1": "A", "j2": "A", "j3": "B", "j4": "C"}, 5, "A"),  # 2 of 4 is half, no one else at half
    ({}, 5, None),                                           # nobody voted: L-COURT-4
])
def test_the_default_threshold_is_half_of_the_votes_cast_L_COURT_3(votes, judges, expected):
    assert court_decision(["A", "B", "C"], votes, judges, final=True) == expected
    assert court_decision(["A", "B", "C"], votes, judges, final=True, procedure=VOTES_CAST) == expected


def test_two_nominees_each_at_half_is_no_decision_L_COURT_3():
    assert court_decision(["A", "B"], {"j1": "A", "j2": "B"}, 5, final=True) is None
    assert court_decision(["A", "B"], {"j1": "A", "j2": "B", "j3": "A", "j4": "B"}, 5, final=True) is None
    assert court_decision(["A", "B"], {"j1": "A", "j2": "A", "j3": "B", "j4": "B"}, 4, final=True,
                          procedure=SITTING_JUDGES) is None


def test_before_the_deadline_only_a_result_the_missing_judges_cannot_change_decides_L_COURT_3():
    # 5 judges, A A B: the two still to vote could make it A A B B B.
    assert court_decision(["A", "B"], {"j1": "A", "j2": "A", "j3": "B"}, 5, final=False) is None
    assert court_decision(["A", "B"], {"j1": "A", "j2": "A", "j3": "A"}, 5, final=False) == "A"
    assert court_decision(["A"], {"j1": "A", "j2": "A"}, 5, final=False) is None  # a lone leader: half the court
    assert court_decision(["A"], {"j1": "A", "j2": "A", "j3": "A"}, 5, final=False) == "A"


def test_the_half_of_the_sitting_judges_procedure_needs_ceil_n_over_2_votes_L_COURT_3():
    votes = {"j1": "A", "j2": "A", "j3": "B"}
    assert court_decision(["A", "B"], votes, 5, final=True, procedure=SITTING_JUDGES) is None
    assert court_decision(["A", "B"], {**votes, "j4": "A"}, 5, final=True, procedure=SITTING_JUDGES) == "A"
    with pytest.raises(ValueError):
        court_decision(["A", "B"], votes, 5, final=True, procedure="majority of the moon")


# ---- the example through the services and the clock ----------------------------------------------------

def test_five_judges_tied_nominees_two_of_three_votes_confirm_at_the_deadline_L_COURT_3(demo):
    day, a, b, session = tied_session(demo)  # a reached one vote first: the L-VOTE-5 leader
    j1, j2, j3, *_rest = _five_judges(demo)
    case = do_put_before_court(session, DEADLINE, acting_user=demo.arbiter, now=CLOSES + US)
    assert _court_messages()[-1].endswith("\n\n" + ru(VOTES_CAST_TEXT))
    do_court_vote(case, b, acting_user=j1.user, now=CLOSES + 2 * US)
    do_court_vote(case, b, acting_user=j2.user, now=CLOSES + 3 * US)
    do_court_vote(case, a, acting_user=j3.user, now=CLOSES + 4 * US)
    case.refresh_from_db()
    assert case.decided_at is None  # j4 and j5 could still make it B B A A A
    dispatch_due_events(now=DEADLINE)
    case.refresh_from_db()
    assert (case.sentenced, case.fallback, case.decided_at) == (b, False, DEADLINE)
    assert Resident.objects.get(pk=b.pk).status == LifeStatus.DEAD
    assert Resident.objects.get(pk=a.pk).status == LifeStatus.ALIVE
    city_inbox = Inbox.objects.filter(kind=LepraInboxKind.CITY, city=day.city, rolled_over_at__isnull=True).get()
    assert Message.objects.filter(inbox=city_inbox).order_by("-id").first().body == ru(
        "The Supreme Court sentenced %(name)s. The daily post announces their side.", name=b.name)


def test_each_at_half_by_the_deadline_executes_the_vote_leader_L_COURT_3_L_COURT_4(demo):
    _day, a, b, session = tied_session(demo)
    j1, j2, *_rest = _five_judges(demo)
    case = do_put_before_court(session, DEADLINE, acting_user=demo.arbiter, now=CLOSES + US)
    do_court_vote(case, b, acting_user=j1.user, now=CLOSES + 2 * US)
    do_court_vote(case, a, acting_user=j2.user, now=CLOSES + 3 * US)
    dispatch_due_events(now=DEADLINE)
    case.refresh_from_db()
    assert (case.sentenced, case.fallback) == (a, True)


def test_under_half_of_the_sitting_judges_two_of_three_votes_of_five_judges_decide_nothing_L_COURT_3(demo):
    _day, a, b, session = tied_session(demo)
    j1, j2, j3, *_rest = _five_judges(demo)
    do_set_court_procedure(demo.game, CourtProcedure.SITTING_JUDGES, acting_user=demo.arbiter, now=MORNING)
    assert court_procedure_of(demo.game) == "sitting_judges"
    case = do_put_before_court(session, DEADLINE, acting_user=demo.arbiter, now=CLOSES + US)
    assert _court_messages()[-1].endswith("\n\n" + ru(SITTING_TEXT))
    for judge, choice in ((j1, b), (j2, b), (j3, a)):
        do_court_vote(case, choice, acting_user=judge.user, now=CLOSES + 2 * US)
    dispatch_due_events(now=DEADLINE)
    case.refresh_from_db()
    assert (case.sentenced, case.fallback) == (a, True)  # 2 of 5 judges is under half: the L-VOTE-5 leader


def test_under_half_of_the_sitting_judges_three_of_five_confirm_at_once_L_COURT_3(demo):
    _day, _a, b, session = tied_session(demo)
    j1, j2, j3, *_rest = _five_judges(demo)
    do_set_court_procedure(demo.game, CourtProcedure.SITTING_JUDGES, acting_user=demo.arbiter, now=MORNING)
    case = do_put_before_court(session, DEADLINE, acting_user=demo.arbiter, now=CLOSES + US)
    for n, judge in enumerate((j1, j2, j3), start=2):
        do_court_vote(case, b, acting_user=judge.user, now=CLOSES + n * US)
    case.refresh_from_db()
    assert (case.sentenced, case.fallback, case.decided_at) == (b, False, CLOSES + 4 * US)


# ---- the Arbiter's choice: who, when, announced, audited --------------------------------------------------------

def test_only_the_arbiter_sets_the_procedure_L_COURT_3(demo):
    for user in (demo.procurator, demo.tribune1, demo.judge, demo.consigliere, None):
        assert _refusal(NotAllowed, do_set_court_procedure, demo.game, CourtProcedure.SITTING_JUDGES,
                        acting_user=user, now=MORNING) == "Only the Supreme Arbiter sets the court's procedure."
    assert not CourtProcedureChoice.objects.exists()
    assert not GameEvent.objects.filter(kind="court.procedure_set").exists()
    assert _refusal(InvalidInput, do_set_court_procedure, demo.game, "by lot", acting_user=demo.arbiter,
                    now=MORNING) == "Choose one of the court's procedures."
    assert _refusal(InvalidInput, do_set_court_procedure, demo.game, CourtProcedure.VOTES_CAST,
                    acting_user=demo.arbiter, now=MORNING) == "The court already follows this procedure."


def test_the_procedure_cannot_change_once_the_court_has_sat_L_COURT_3(demo):
    _day, _a, _b, session = tied_session(demo)
    do_put_before_court(session, DEADLINE, acting_user=demo.arbiter, now=CLOSES + US)
    messages = _court_messages()
    assert _refusal(WrongState, do_set_court_procedure, demo.game, CourtProcedure.SITTING_JUDGES,
                    acting_user=demo.arbiter, now=CLOSES + 2 * US) == (
        f"The court has already sat in this game (day 2, {_local(demo.game, CLOSES + US)}): its procedure is set "
        "before the court sits and can no longer change.")
    assert court_procedure_of(demo.game) == "votes_cast" and _court_messages() == messages
    assert not GameEvent.objects.filter(kind="court.procedure_set").exists()


def test_the_choice_is_announced_in_the_courts_inbox_in_russian_and_audited_L_COURT_3(demo):
    before = _court_messages()
    choice = do_set_court_procedure(demo.game, CourtProcedure.SITTING_JUDGES, acting_user=demo.arbiter,
                                    now=MORNING)
    assert (choice.procedure, choice.set_at, choice.set_by) == ("sitting_judges", MORNING, demo.arbiter)
    after = _court_messages()
    assert after[:-1] == before
    assert after[-1] == ("Верховный Арбитр установил порядок суда. Приговор утверждается, если за него не менее "
                         "половины заседающих судей; двое номинантов с равным числом голосов: решения нет.")
    event = GameEvent.objects.get(kind="court.procedure_set")
    assert (event.actor, event.at, event.payload) == (demo.arbiter, MORNING,
                                                      {"procedure": "sitting_judges", "previous": "votes_cast"})
    do_set_court_procedure(demo.game, CourtProcedure.VOTES_CAST, acting_user=demo.arbiter, now=MORNING + US)
    assert _court_messages()[-1] == ("Верховный Арбитр установил порядок суда. Приговор утверждается, если за него не "
                                     "менее половины поданных голосов; двое номинантов с половиной голосов у каждого: "
                                     "решения нет.")
    assert CourtProcedureChoice.objects.get().procedure == "votes_cast"
    assert GameEvent.objects.filter(kind="court.procedure_set").count() == 2


def test_the_arbiter_sets_the_procedure_on_the_console_page_L_COURT_3(demo):
    url = reverse("staff_admin:court_procedure", args=[demo.game.slug])
    for persona in ("procurator", "tribune1", "consigliere"):
        assert staff_client(getattr(demo, persona)).get(url).status_code == 404
    assert staff_client(demo.judge).get(url).status_code == 302  # not staff: the console's login
    client = staff_client(demo.arbiter)
    with time_machine.travel(MORNING, tick=False):
        page = client.get(url)
        assert page.status_code == 200
        body = page.content.decode()
        assert 'type="radio"' in body and 'value="sitting_judges"' in body and "name=\"action\"" not in body
        assert "Действует: " + ru(VOTES_CAST_TEXT) in body
        response = client.post(url, {"procedure": "sitting_judges"})
    assert response.status_code == 302
    assert flashed(response) == ["Порядок суда установлен и объявлен в ящике суда."]
    assert court_procedure_of(demo.game) == "sitting_judges"
    assert GameEvent.objects.get(kind="court.procedure_set").actor == demo.arbiter
    with time_machine.travel(MORNING + timedelta(minutes=1), tick=False):
        same = client.post(url, {"procedure": "sitting_judges"})
    assert same.status_code == 200 and "Суд уже следует этому порядку." in same.content.decode()
    assert GameEvent.objects.filter(kind="court.procedure_set").count() == 1
