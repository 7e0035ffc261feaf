"""Judge elections through the services and the scheduler (issue 5): L-JUDGE-1..6, L-DAY-4, L-DAY-5, L-INBOX-10,
L-JUDGE-10."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils.translation import gettext

from cities.models import Resident, ScheduledEvent
from cities.scheduler import dispatch_due_events
from inboxes.membership_services import do_kill_resident
from inboxes.models import DeathCause, Inbox, Membership, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra import seats
from rulesets.lepra.court.judge_services import (
    city_needs_judge_election,
    do_close_election,
    do_open_election,
    do_open_removal_demand,
    do_pass_candidates,
    do_propose_candidate,
    do_record_election_proxy,
    do_schedule_judge_election,
)
from tests.rulesets.lepra.court.conftest import CLOSES, CON, DAY1, OPENS, PRO
from tests.rulesets.lepra.court.judge_helpers import precinct, start, vote
from tests.setup_factory import in_game_language
from rulesets.lepra.models import ElectionBallot, ElectionReason, JudgeElection


def local(jg, moment) -> str:
    """``moment`` as the game's posts show it (its zone and language)."""
    from django.utils import translation

    from rulesets.lepra.day.services import _local
    with translation.override(jg.game.language):
        return _local(jg.game, moment)


def city_posts(jg, number: int) -> list[str]:
    inbox = Inbox.objects.get(city=jg.cities[number], kind=LepraInboxKind.CITY, rolled_over_at__isnull=True)
    return list(Message.objects.filter(inbox=inbox, author_resident__isnull=True).values_list("body", flat=True))


# ---- scheduling (L-DAY-4) ------------------------------------------------------------------------------------

def test_an_election_is_announced_at_least_six_hours_before_it_opens_L_DAY_4(jg):
    city = jg.cities[1]
    with pytest.raises(InvalidInput) as refused:
        do_schedule_judge_election(city, DAY1 + timedelta(hours=6) - timedelta(seconds=1), CLOSES,
                                   acting_user=jg.arbiter, now=DAY1)
    assert str(refused.value) == gettext("An election must be announced at least %(hours)d hours before it opens.") % {"hours": 6}
    assert refused.value.rule == "L-DAY-4"
    assert JudgeElection.objects.filter(city=city).count() == 0
    election = do_schedule_judge_election(city, OPENS, CLOSES, acting_user=jg.arbiter, now=DAY1)
    assert (election.reason, election.day, election.announced_at) == (ElectionReason.FIRST_DAY, 1, DAY1)
    assert set(ScheduledEvent.objects.filter(game=jg.game, payload__election=election.pk).values_list(
        "kind", "due_at")) == {("election_open", OPENS), ("election_close", CLOSES)}
    assert city_posts(jg, 1) == [in_game_language(
        jg.game, "Judge election in %(city)s: from %(opens)s to %(closes)s. Propose your candidate in your personal "
        "inbox.", city=city.name, opens=local(jg, OPENS), closes=local(jg, CLOSES))]


def test_only_the_arbiter_schedules_and_only_without_a_sitting_judge_L_DAY_4_L_JUDGE_1(jg):
    city = jg.cities[1]
    with pytest.raises(NotAllowed):
        do_schedule_judge_election(city, OPENS, CLOSES, acting_user=jg.tribunes[1], now=DAY1)
    jg.elect(1, jg.residents(1)[0])
    with pytest.raises(WrongState) as refused:
        do_schedule_judge_election(city, OPENS + timedelta(days=1), CLOSES + timedelta(days=1),
                                   acting_user=jg.arbiter, now=DAY1 + timedelta(hours=11))
    assert refused.value.rule == "L-JUDGE-1"


# ---- candidates (L-JUDGE-3) -----------------------------------------------------------------------------------

def test_each_resident_proposes_at_most_one_candidate_of_their_own_city_L_JUDGE_3(jg):
    do_schedule_judge_election(jg.cities[1], OPENS, CLOSES, acting_user=jg.arbiter, now=DAY1)
    ann, ben, cat = jg.residents(1)[:3]
    proposal = do_propose_candidate(ben, acting_user=ann.user, now=DAY1)
    assert (proposal.proposer_id, proposal.candidate_id) == (ann.pk, ben.pk)
    with pytest.raises(InvalidInput) as second:
        do_propose_candidate(cat, acting_user=ann.user, now=DAY1)
    assert str(second.value) == gettext("You have already proposed %(name)s.") % {"name": ben.name}
    with pytest.raises(InvalidInput) as foreign:
        do_propose_candidate(jg.residents(2)[0], acting_user=cat.user, now=DAY1)
    assert str(foreign.value) == gettext("Only residents of your own city can be proposed.")
    personal = Inbox.objects.get(kind=LepraInboxKind.PERSONAL, resident=ann)
    assert list(Message.objects.filter(inbox=personal).values_list("body", flat=True)) == [
        in_game_language(jg.game, "%(proposer)s proposes %(candidate)s as judge.", proposer=ann.name,
                         candidate=ben.name)]


def test_the_tribune_passes_the_list_to_the_arbiter_and_proposals_close_L_JUDGE_3(jg):
    election = do_schedule_judge_election(jg.cities[1], OPENS, CLOSES, acting_user=jg.arbiter, now=DAY1)
    ann, ben, cat, dan = jg.residents(1)[:4]
    do_propose_candidate(ben, acting_user=ann.user, now=DAY1)
    do_propose_candidate(dan, acting_user=cat.user, now=DAY1)
    with pytest.raises(NotAllowed):
        do_pass_candidates(election, acting_user=jg.tribunes[2], now=DAY1)
    do_pass_candidates(election, acting_user=jg.tribunes[1], now=DAY1 + timedelta(hours=1))
    office = Inbox.objects.get(game=jg.game, kind=LepraInboxKind.OFFICE)
    assert list(Message.objects.filter(inbox=office).values_list("body", flat=True)) == [
        in_game_language(jg.game, "Judge candidates of %(city)s: %(names)s.", city=jg.cities[1].name,
                         names=f"{ben.name}, {dan.name}")]
    with pytest.raises(WrongState):
        do_propose_candidate(cat, acting_user=dan.user, now=DAY1 + timedelta(hours=2))


# ---- precincts and ballots (L-JUDGE-4, L-INBOX-10) -----------------------------------------------------------

def test_one_precinct_per_candidate_with_the_living_residents_as_members_L_JUDGE_4_L_INBOX_10(jg):
    people = jg.residents(1)
    do_kill_resident(people[-1], DeathCause.PENALTY, acting_user=None, now=DAY1)
    election, _ = start(jg, 1, people[:2])
    living = {r.pk for r in jg.residents(1)}
    for candidate in people[:2]:
        inbox = precinct(candidate)
        assert (inbox.city_id, inbox.organizer.kind, inbox.day_number) == (jg.cities[1].pk, "arbiter", 1)
        assert set(Membership.objects.filter(inbox=inbox).values_list("resident_id", flat=True)) == living
    assert election.precincts.count() == 2


@pytest.mark.parametrize("text", ["Он - Ганди!", "он-ганди", "Он – Ганди!", "Он — Ганди!!!", "ОН —ГАНДИ.",
                                  "  он ‐ ганди  "])
def test_hyphen_en_dash_em_dash_and_spacing_variants_are_pro_ballots_L_JUDGE_4(jg, text):
    _, others = start(jg, 1, [jg.residents(1)[0]])
    candidate = jg.residents(1)[0]
    message = vote(others[0], candidate, text, 1)
    assert ElectionBallot.objects.get(message=message).pro is True


@pytest.mark.parametrize("text", ["Голосуйте за него!", "Он Ганди!", "Он - Ганди! Он - Ганди!", "Она - Гитлер!"])
def test_anything_else_in_a_precinct_is_refused_with_a_reason_L_JUDGE_4(jg, text):
    _, others = start(jg, 1, [jg.residents(1)[0]])
    with pytest.raises(InvalidInput) as refused:
        vote(others[0], jg.residents(1)[0], text, 1)
    assert str(refused.value) == gettext("Only «Он - Ганди!» or «Он - Гитлер!» can be posted in a precinct.")
    assert refused.value.rule == "L-JUDGE-4"
    assert Message.objects.filter(inbox=precinct(jg.residents(1)[0]), author_resident__isnull=False).count() == 0


def test_a_second_vote_by_the_same_voter_in_the_same_precinct_is_refused_L_JUDGE_4(jg):
    candidate = jg.residents(1)[0]
    _, others = start(jg, 1, [candidate])
    vote(others[0], candidate, PRO, 1)
    for text in (PRO, CON):
        with pytest.raises(InvalidInput) as refused:
            vote(others[0], candidate, text, 2)
        assert str(refused.value) == gettext(
            "You have already voted in this precinct: a ballot cannot be changed or withdrawn.")
    assert list(ElectionBallot.objects.filter(inbox=precinct(candidate)).values_list("voter_id", "pro")) == [
        (others[0].pk, True)]


def test_a_vote_in_a_precinct_of_another_city_is_refused_L_JUDGE_4(jg):
    candidate = jg.residents(1)[0]
    start(jg, 1, [candidate])
    stranger = jg.residents(2)[0]
    with pytest.raises(NotAllowed) as refused:
        vote(stranger, candidate, PRO, 1)
    assert str(refused.value) == gettext("No such inbox.")
    assert ElectionBallot.objects.count() == 0


def test_ballots_before_the_opening_and_at_the_close_are_refused_L_JUDGE_4(jg):
    candidate = jg.residents(1)[0]
    _, others = start(jg, 1, [candidate])
    with pytest.raises(WrongState):
        do_post_message(precinct(candidate), PRO, acting_user=others[0].user, now=CLOSES)
    assert ElectionBallot.objects.count() == 0


def test_arbiter_proxy_ballots_are_cast_at_the_opening_L_JUDGE_6(jg):
    election = do_schedule_judge_election(jg.cities[1], OPENS, CLOSES, acting_user=jg.arbiter, now=DAY1)
    ann, ben = jg.residents(1)[:2]
    do_propose_candidate(ben, acting_user=ann.user, now=DAY1)
    with pytest.raises(NotAllowed):
        do_record_election_proxy(election, ann, ben, PRO, acting_user=jg.tribunes[1], now=DAY1)
    with pytest.raises(InvalidInput):
        do_record_election_proxy(election, ann, ben, "за", acting_user=jg.arbiter, now=DAY1)
    do_record_election_proxy(election, ann, ben, PRO, acting_user=jg.arbiter, now=DAY1 + timedelta(hours=1))
    do_open_election(election, acting_user=None, now=OPENS + timedelta(seconds=30))
    ballot = ElectionBallot.objects.get(voter=ann)
    assert (ballot.pro, ballot.proxy, ballot.cast_at, ballot.message.received_at) == (True, True, OPENS, OPENS)
    with pytest.raises(InvalidInput):  # the proxy was the voter's one ballot there
        vote(ann, ben, CON, 5)


# ---- the result (L-JUDGE-5) ----------------------------------------------------------------------------------

def test_four_pros_and_three_cons_score_one_and_win_L_JUDGE_5(jg):
    candidate = jg.residents(1)[0]
    election, others = start(jg, 1, [candidate])
    for i, voter in enumerate(others[:7]):
        vote(voter, candidate, PRO if i < 4 else CON, i + 1)
    election = do_close_election(election, acting_user=None, now=CLOSES)
    tally = election.result["candidates"][0]
    assert (tally["pros"], tally["cons"], tally["score"]) == (4, 3, 1)
    assert election.winner_id == candidate.pk
    candidate.refresh_from_db()
    assert seats.is_judge(candidate) is True
    assert Inbox.objects.get(pk=precinct(candidate).pk).killed_at == CLOSES


def test_a_tie_goes_to_the_earlier_latest_pro_and_a_later_con_is_not_a_pro_L_JUDGE_5(jg):
    ann, ben = jg.residents(1)[:2]
    election, others = start(jg, 1, [ann, ben])
    vote(others[0], ann, PRO, 5)
    vote(others[1], ann, PRO, 10)
    vote(others[2], ann, CON, 200)  # latest vote in ann's precinct, but a con: it does not move the tie-break
    vote(others[3], ben, PRO, 20)
    election = do_close_election(election, acting_user=None, now=CLOSES)
    scores = {t["candidate"]: (t["score"], t["latest_pro_at"]) for t in election.result["candidates"]}
    assert scores == {str(ann.pk): (1, (OPENS + timedelta(minutes=10)).isoformat()),
                      str(ben.pk): (1, (OPENS + timedelta(minutes=20)).isoformat())}
    assert election.winner_id == ann.pk


def test_all_candidates_negative_fail_and_a_new_election_is_scheduled_and_announced_L_JUDGE_5(jg):
    ann, ben = jg.residents(1)[:2]
    election, others = start(jg, 1, [ann, ben])
    vote(others[0], ann, CON, 1)
    vote(others[1], ben, CON, 2)
    vote(others[2], ben, PRO, 3)
    vote(others[3], ben, CON, 4)
    election = do_close_election(election, acting_user=None, now=CLOSES)
    assert election.winner is None and election.result["failed"] is True
    follow = JudgeElection.objects.get(follows=election)
    assert (follow.reason, follow.announced_at, follow.opens_at, follow.closes_at, follow.opened_at) == (
        ElectionReason.FAILED, CLOSES, CLOSES + timedelta(hours=6), CLOSES + timedelta(hours=10), None)
    assert set(ScheduledEvent.objects.filter(payload__election=follow.pk).values_list("kind", "due_at")) == {
        ("election_open", follow.opens_at), ("election_close", follow.closes_at)}
    assert city_posts(jg, 1)[-1] == in_game_language(
        jg.game, "The judge election in %(city)s failed: no candidate has at least as many pros as cons. "
        "A new election: from %(opens)s to %(closes)s. Propose your candidate in your personal inbox.",
        city=jg.cities[1].name, opens=local(jg, follow.opens_at), closes=local(jg, follow.closes_at))
    assert Resident.objects.filter(seats.rank_q("is_judge"), city=jg.cities[1]).count() == 0
    assert city_needs_judge_election(jg.cities[1]) is False  # the new one is pending


def test_the_scheduler_opens_and_closes_the_election_L_JUDGE_4_L_JUDGE_5(jg):
    ann = jg.residents(1)[0]
    do_schedule_judge_election(jg.cities[1], OPENS, CLOSES, acting_user=jg.arbiter, now=DAY1)
    do_propose_candidate(ann, acting_user=jg.residents(1)[1].user, now=DAY1)
    dispatch_due_events(now=OPENS)
    vote(jg.residents(1)[1], ann, PRO, 1)
    dispatch_due_events(now=CLOSES)
    election = JudgeElection.objects.get(city=jg.cities[1])
    assert (election.opened_at, election.closed_at, election.winner_id) == (OPENS, CLOSES, ann.pk)


# ---- day 1 and the court (L-DAY-5, L-JUDGE-10) ---------------------------------------------------------------

def test_day_one_elects_in_every_city_and_the_court_forms_when_every_city_has_a_judge_L_DAY_5(jg):
    first = Inbox.objects.get(game=jg.game, kind=LepraInboxKind.COURT)
    judges = []
    for number in (1, 2):
        judges.append(jg.residents(number)[0])
        jg.elect(number, judges[-1])
        assert list(Inbox.objects.filter(game=jg.game, kind=LepraInboxKind.COURT)) == [first]
    judges.append(jg.residents(3)[0])
    jg.elect(3, judges[-1])
    court = Inbox.objects.get(game=jg.game, kind=LepraInboxKind.COURT, rolled_over_at__isnull=True)
    assert court.predecessor_id == first.pk
    assert set(Membership.objects.filter(inbox=court).values_list("resident_id", "state")) == {
        (j.pk, "member") for j in judges}
    assert [city_needs_judge_election(jg.cities[n]) for n in (1, 2, 3)] == [False, False, False]


def test_no_removal_demands_on_day_one_L_DAY_5(jg):
    jg.elect(1, jg.residents(1)[0])
    with pytest.raises(WrongState) as refused:
        do_open_removal_demand(acting_user=jg.residents(1)[1].user, game=jg.game, now=DAY1 + timedelta(hours=11))
    assert refused.value.rule == "L-DAY-5"


def test_a_city_needs_an_election_without_a_judge_and_without_a_pending_one_L_JUDGE_2(jg):
    city = jg.cities[1]
    assert city_needs_judge_election(city) is True
    judge = jg.residents(1)[0]
    jg.elect(1, judge)
    assert city_needs_judge_election(city) is False
    do_kill_resident(judge, DeathCause.KILLED, acting_user=None, now=DAY1 + timedelta(hours=20))
    assert city_needs_judge_election(city) is True
    election = do_schedule_judge_election(city, DAY1 + timedelta(days=1, hours=6),
                                          DAY1 + timedelta(days=1, hours=10), acting_user=None,
                                          now=DAY1 + timedelta(days=1))
    assert election.reason == ElectionReason.DEATH
    assert city_needs_judge_election(city) is False


def test_a_double_submit_that_passed_the_check_is_refused_by_the_unique_ballot_L_JUDGE_4(jg):
    """Two tabs: both posts passed ``check_precinct_post`` before either was stored; the named unique constraint
    refuses the second ballot with the player's message, and the transaction leaves no second message."""
    from django.db import transaction

    from rulesets.lepra.court.judge_services import record_precinct_post
    from rulesets.lepra.day.tally import LepraAccepted
    candidate = jg.residents(1)[0]
    _, others = start(jg, 1, [candidate])
    first = vote(others[0], candidate, PRO, 1)
    with pytest.raises(InvalidInput) as refused, transaction.atomic():
        record_precinct_post(precinct(candidate), others[0], first, LepraAccepted.CON, OPENS + timedelta(minutes=1))
    assert refused.value.rule == "L-JUDGE-4"
    assert list(ElectionBallot.objects.values_list("voter_id", "pro")) == [(others[0].pk, True)]
