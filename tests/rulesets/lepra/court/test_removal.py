"""Judge removal demands (L-JUDGE-8, L-INBOX-11), recusal (L-JUDGE-9) and the court inbox that follows the judges
(L-JUDGE-10, L-INBOX-2), through the services (issue 5)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils.translation import gettext

from inboxes import policies
from inboxes.membership_services import do_kill_resident
from inboxes.models import DeathCause, Inbox, Membership
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra import seats
from rulesets.lepra.court.judge_services import (
    do_confirm_removal_demand,
    do_open_removal_demand,
    do_propose_candidate,
    do_recuse_judge,
    do_remove_judge,
    do_schedule_judge_election,
)
from rulesets.lepra.day.services import do_schedule_voting
from tests.conftest import fresh
from tests.rulesets.lepra.court.judge_helpers import DAY2, demand_with, judge_of
from tests.setup_factory import in_game_language
from rulesets.lepra.models import ElectionReason, RemovalConfirmation, RemovalDemand

VOTING_OPENS = DAY2 + timedelta(hours=8)  # 18:00 in Moscow
CUTOFF = VOTING_OPENS - timedelta(hours=4)
US = timedelta(microseconds=1)


@pytest.fixture
def day2(jg):
    """Judges elected in every city on day 1 (the first resident by name); day 2 with execution voting of
    cities 2 and 3 scheduled for 18:00-23:00 Moscow."""
    for n in (1, 2, 3):
        jg.elect(n, jg.residents(n)[0])
    jg.set_day(2, DAY2 - timedelta(hours=1))
    for n in (2, 3):
        do_schedule_voting(jg.cities[n], VOTING_OPENS, VOTING_OPENS + timedelta(hours=5), acting_user=jg.tribunes[n],
                           now=DAY2)
    return jg


def test_four_confirmations_do_nothing_and_the_fifth_makes_the_demand_valid_L_JUDGE_8(day2):
    jg = day2
    demand, others = demand_with(jg, 2, 3)
    assert RemovalConfirmation.objects.filter(demand=demand, considered=True).count() == 4
    assert demand.valid_at is None
    arbiter = fresh(jg.arbiter)
    assert policies.can_read_inbox(arbiter, demand.inbox) is False
    assert not policies.readable_inboxes(arbiter, jg.game).filter(pk=demand.inbox_id).exists()
    fifth_at = DAY2 + timedelta(hours=2)
    do_confirm_removal_demand(demand, acting_user=others[4].user, now=fifth_at)
    demand.refresh_from_db()
    assert demand.valid_at == fifth_at
    arbiter = fresh(jg.arbiter)
    assert policies.can_read_inbox(arbiter, demand.inbox) is True
    assert policies.can_post_in_inbox(arbiter, demand.inbox, now=fifth_at) is True
    assert policies.readable_inboxes(arbiter, jg.game).filter(pk=demand.inbox_id).exists()
    assert policies.readers_of_inbox(demand.inbox).filter(pk=jg.arbiter.pk).exists()
    assert seats.is_judge(judge_of(jg, 2)) is True  # valid, not yet announced by the Arbiter
    office = Inbox.objects.get(game=jg.game, kind=LepraInboxKind.OFFICE)
    assert list(office.messages.values_list("body", flat=True)) == [in_game_language(
        jg.game, "A demand to remove judge %(name)s of %(city)s is valid.", name=judge_of(jg, 2).name,
        city=jg.cities[2].name)]


def test_a_confirmation_one_second_after_start_minus_four_hours_is_not_considered_L_JUDGE_8(day2):
    jg = day2
    demand, others = demand_with(jg, 2, 2)
    do_confirm_removal_demand(demand, acting_user=others[3].user, now=CUTOFF)  # no later than: considered
    late = do_confirm_removal_demand(demand, acting_user=others[4].user, now=CUTOFF + timedelta(seconds=1))
    assert late.considered is False
    demand.refresh_from_db()
    assert demand.valid_at is None
    assert list(RemovalConfirmation.objects.filter(demand=demand).values_list("considered", flat=True)) == [
        True, True, True, True, False]


def test_a_late_demand_is_refused_at_once_with_the_reason_L_JUDGE_8(day2):
    jg = day2
    judge = judge_of(jg, 2)
    organizer = next(r for r in jg.residents(2) if r.pk != judge.pk)
    with pytest.raises(WrongState) as info:
        do_open_removal_demand(acting_user=organizer.user, game=jg.game, now=CUTOFF + US)
    before, after = gettext("A removal demand is received no later than 4 hours before execution voting starts "
                            "(%(at)s): this one would not be considered.").split("%(at)s")
    assert str(info.value).startswith(before) and str(info.value).endswith(after)
    assert before.startswith("Требование об отводе")  # the game's language
    assert not RemovalDemand.objects.filter(judge=judge).exists()
    assert not Inbox.objects.filter(kind=LepraInboxKind.REMOVAL, resident=judge).exists()


def test_only_residents_of_the_city_confirm_once_and_not_the_judge_L_JUDGE_8(day2):
    jg = day2
    demand, others = demand_with(jg, 2, 1)
    with pytest.raises(InvalidInput):
        do_confirm_removal_demand(demand, acting_user=others[1].user, now=DAY2 + timedelta(hours=2))
    with pytest.raises(NotAllowed):
        do_confirm_removal_demand(demand, acting_user=jg.residents(1)[3].user, now=DAY2 + timedelta(hours=2))
    with pytest.raises(NotAllowed):
        do_confirm_removal_demand(demand, acting_user=judge_of(jg, 2).user, now=DAY2 + timedelta(hours=2))
    assert RemovalConfirmation.objects.filter(demand=demand).count() == 2


def test_the_arbiter_announces_the_removal_and_schedules_the_election_with_two_hours_notice_L_JUDGE_8_L_DAY_4(day2):
    jg = day2
    demand, _ = demand_with(jg, 2, 4)
    judge = judge_of(jg, 2)
    with pytest.raises(NotAllowed):
        do_remove_judge(demand, acting_user=jg.tribunes[2], now=DAY2 + timedelta(hours=2))
    removed_at = DAY2 + timedelta(hours=2)
    do_remove_judge(demand, acting_user=jg.arbiter, now=removed_at)
    judge.refresh_from_db()
    assert seats.is_judge(judge) is False
    with pytest.raises(InvalidInput):
        do_schedule_judge_election(jg.cities[2], removed_at + timedelta(hours=2) - US, removed_at + timedelta(hours=4),
                                   acting_user=jg.arbiter, now=removed_at)
    election = do_schedule_judge_election(jg.cities[2], removed_at + timedelta(hours=2),
                                          removed_at + timedelta(hours=4), acting_user=jg.arbiter, now=removed_at)
    assert election.reason == ElectionReason.REMOVAL


def test_a_removed_judge_is_refused_on_the_next_day_and_accepted_on_the_third_L_JUDGE_8(day2):
    jg = day2
    demand, others = demand_with(jg, 2, 4)
    judge = judge_of(jg, 2)
    do_remove_judge(demand, acting_user=jg.arbiter, now=DAY2 + timedelta(hours=2))
    do_schedule_judge_election(jg.cities[2], DAY2 + timedelta(days=3, hours=6), DAY2 + timedelta(days=3, hours=10),
                               acting_user=jg.arbiter, now=DAY2 + timedelta(hours=2))
    for day, proposer in ((3, others[0]), (4, others[1])):
        jg.set_day(day, DAY2 + timedelta(days=day - 2))
        with pytest.raises(InvalidInput) as refused:
            do_propose_candidate(judge, acting_user=proposer.user, now=DAY2 + timedelta(days=day - 2, hours=1))
        assert str(refused.value) == gettext(
            "%(name)s was removed as judge and cannot be proposed on the next two days.") % {"name": judge.name}
        assert refused.value.rule == "L-JUDGE-8"
    jg.set_day(5, DAY2 + timedelta(days=3))
    proposal = do_propose_candidate(judge, acting_user=others[2].user, now=DAY2 + timedelta(days=3, hours=1))
    assert proposal.candidate_id == judge.pk


def test_a_judge_may_recuse_no_later_than_four_hours_before_voting_starts_L_JUDGE_9(day2):
    jg = day2
    judge = judge_of(jg, 3)
    with pytest.raises(WrongState) as late:
        do_recuse_judge(judge, acting_user=judge.user, now=CUTOFF + timedelta(seconds=1))
    assert late.value.rule == "L-JUDGE-9"
    assert judge_of(jg, 3).pk == judge.pk
    with pytest.raises(NotAllowed):
        do_recuse_judge(judge, acting_user=jg.residents(3)[1].user, now=CUTOFF)
    recusal = do_recuse_judge(judge, acting_user=jg.arbiter, received_at=CUTOFF, now=CUTOFF + timedelta(minutes=5))
    assert (recusal.at, recusal.day) == (CUTOFF, 2)
    judge.refresh_from_db()
    assert seats.is_judge(judge) is False
    court = Inbox.objects.get(game=jg.game, kind=LepraInboxKind.COURT, rolled_over_at__isnull=True)
    assert set(Membership.objects.filter(inbox=court).values_list("resident_id", flat=True)) == {
        judge_of(jg, 1).pk, judge_of(jg, 2).pk}
    election = do_schedule_judge_election(jg.cities[3], CUTOFF + timedelta(hours=7), CUTOFF + timedelta(hours=9),
                                          acting_user=jg.arbiter, now=CUTOFF + timedelta(minutes=10))
    assert election.reason == ElectionReason.RECUSAL


def test_the_chain_of_court_inboxes_after_day_one_a_removal_in_city_two_and_a_killing_in_city_three_L_JUDGE_10_L_INBOX_2(
        day2):
    jg = day2
    j1, j2, j3 = judge_of(jg, 1), judge_of(jg, 2), judge_of(jg, 3)
    demand, others = demand_with(jg, 2, 4)
    do_remove_judge(demand, acting_user=jg.arbiter, now=DAY2 + timedelta(hours=2))
    new2 = others[5]
    jg.elect(2, new2, day_start=DAY2 + timedelta(hours=2))
    do_kill_resident(j3, DeathCause.KILLED, acting_user=None, now=DAY2 + timedelta(hours=20))

    chain = list(Inbox.objects.filter(game=jg.game, kind=LepraInboxKind.COURT).order_by("id"))
    assert [c.predecessor_id for c in chain] == [None] + [c.pk for c in chain[:-1]]
    assert [c.rolled_over_at is None for c in chain] == [False, False, False, False, True]

    def members(court):
        return set(Membership.objects.filter(inbox=court).values_list("resident_id", "state"))

    assert [members(c) for c in chain] == [
        set(),                                                               # setup: no judges yet
        {(j1.pk, "banned"), (j2.pk, "banned"), (j3.pk, "banned")},           # day 1: the court is formed
        {(j1.pk, "banned"), (j3.pk, "banned")},                              # city 2's judge removed
        {(j1.pk, "banned"), (new2.pk, "banned"), (j3.pk, "banned")},         # city 2 elects a new judge
        {(j1.pk, "member"), (new2.pk, "member")},                            # city 3's judge killed
    ]
    newcomer = fresh(new2.user)
    assert [policies.can_read_inbox(newcomer, c) for c in chain] == [False, False, False, True, True]
    assert set(policies.readable_inboxes(newcomer, jg.game).filter(kind=LepraInboxKind.COURT)) == set(chain[3:])


def test_an_elected_judge_is_immune_to_nomination_until_removed_L_JUDGE_7(day2):
    from rulesets.lepra.day.services import do_nominate
    jg = day2
    judge = judge_of(jg, 2)
    demand, others = demand_with(jg, 2, 4)
    with pytest.raises(InvalidInput) as refused:
        do_nominate(judge, acting_user=others[0].user, now=DAY2 + timedelta(hours=2))
    assert refused.value.rule == "L-NOM-2"
    do_remove_judge(demand, acting_user=jg.arbiter, now=DAY2 + timedelta(hours=2))
    nomination = do_nominate(judge, acting_user=others[0].user, now=DAY2 + timedelta(hours=3))
    assert nomination.nominee_id == judge.pk


def test_a_resident_opens_one_demand_against_the_judge_per_day_L_JUDGE_8(day2):
    jg = day2
    demand, others = demand_with(jg, 2, 0)
    with pytest.raises(InvalidInput) as refused:
        do_open_removal_demand(acting_user=others[0].user, game=jg.game, now=DAY2 + timedelta(hours=2))
    assert str(refused.value) == gettext("You have already demanded the removal of %(name)s today.") % {
        "name": judge_of(jg, 2).name}
    assert demand.inbox.kind == LepraInboxKind.REMOVAL and demand.inbox.organizer_resident_id == others[0].pk
