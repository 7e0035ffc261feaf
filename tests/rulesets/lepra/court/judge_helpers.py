"""Helpers of the judge tests: opening an election, a city's precincts, a ballot; removal demands and the judge of a city."""
from __future__ import annotations

from datetime import timedelta

from cities.models import Resident
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from rulesets.lepra import seats
from rulesets.lepra.court.judge_services import (
    do_confirm_removal_demand,
    do_open_election,
    do_open_removal_demand,
    do_propose_candidate,
    do_schedule_judge_election,
)
from tests.rulesets.lepra.court.conftest import CLOSES, DAY1, OPENS


def precinct(candidate: Resident) -> Inbox:
    return Inbox.objects.filter(kind=LepraInboxKind.PRECINCT, resident=candidate).latest("id")


def start(jg, number: int, candidates: list[Resident]):
    """City ``number``'s election scheduled at DAY1 for 16:00-20:00 Moscow, ``candidates`` proposed by the first
    residents who are not candidates, opened by the site at OPENS. Returns (election, voters not candidates)."""
    election = do_schedule_judge_election(jg.cities[number], OPENS, CLOSES, acting_user=jg.arbiter, now=DAY1)
    others = [r for r in jg.residents(number) if r not in candidates]
    for candidate, proposer in zip(candidates, others, strict=False):
        do_propose_candidate(candidate, acting_user=proposer.user, now=DAY1 + timedelta(minutes=5))
    do_open_election(election, acting_user=None, now=OPENS)
    return election, others


def vote(voter: Resident, candidate: Resident, text: str, minutes: float):
    return do_post_message(precinct(candidate), text, acting_user=voter.user, now=OPENS + timedelta(minutes=minutes))


DAY2 = DAY1 + timedelta(days=1)  # 10:00 in Moscow, day 2


def judge_of(jg, n) -> Resident:
    return Resident.objects.get(seats.rank_q("is_judge"), city=jg.cities[n], status="alive")


def demand_with(jg, n: int, confirmers: int, *, at=DAY2 + timedelta(hours=1)):
    """A demand against city ``n``'s judge opened by its first other resident at ``at``, confirmed by the next
    ``confirmers`` residents a minute apart."""
    judge = judge_of(jg, n)
    others = [r for r in jg.residents(n) if r.pk != judge.pk]
    demand = do_open_removal_demand(acting_user=others[0].user, game=jg.game, now=at)
    for i, r in enumerate(others[1:1 + confirmers]):
        do_confirm_removal_demand(demand, acting_user=r.user, now=at + timedelta(minutes=i + 1))
    demand.refresh_from_db()
    return demand, others
