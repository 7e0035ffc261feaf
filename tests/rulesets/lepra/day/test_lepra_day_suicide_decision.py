"""Suicide at voting start (L-NOM-5) and the Procurator's decision for a city without votes (L-VOTE-7)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import translation

from cities.models import GameEvent, LifeStatus, Resident
from inboxes.models import Inbox, Membership
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra.day.services import (
    awaiting_procurator,
    do_close_voting,
    do_confirm_suicide,
    do_decide_execution,
    do_declare_suicide,
    do_refuse_suicide,
)
from tests.rulesets.lepra.day.day_helpers import CLOSES, MORNING, OPENS, city1_day, nominate_and_open
from rulesets.lepra.models import DecisionSource, ExecutionDecision


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def _refusal(exc_type, fn, *args, **kwargs) -> str:
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    return str(info.value)


def test_confirmed_suicide_dies_at_the_opening_and_takes_no_part_in_voting_L_NOM_5(demo):
    day = city1_day(demo)
    nominee, suicide, refused = day.plain[0], day.plain[4], day.plain[3]

    def declare(session):
        declaration = do_declare_suicide(demo.game, acting_user=suicide.user, now=MORNING)
        do_confirm_suicide(declaration, acting_user=demo.tribune1, now=MORNING + timedelta(hours=1))
        do_refuse_suicide(do_declare_suicide(demo.game, acting_user=refused.user, now=MORNING),
                          acting_user=demo.tribune1, now=MORNING + timedelta(hours=1))

    nominate_and_open(demo, day, [nominee, suicide], before_open=declare)
    suicide.refresh_from_db()
    assert (suicide.status, suicide.died_at) == (LifeStatus.DEAD, OPENS)
    assert GameEvent.objects.filter(kind="resident.died", payload__resident=suicide.pk).get().payload["cause"] == "suicide"
    assert [i.resident for i in Inbox.objects.filter(kind=LepraInboxKind.VOTING, city=day.city)] == [nominee]
    assert not Membership.objects.filter(inbox__kind=LepraInboxKind.VOTING, resident=suicide).exists()
    assert Resident.objects.get(pk=refused.pk).status == LifeStatus.ALIVE


def test_suicide_is_declared_before_voting_starts_and_confirmed_at_the_opening_L_NOM_5(demo):
    day = city1_day(demo)
    declaration = do_declare_suicide(demo.game, acting_user=day.plain[4].user, now=MORNING)
    assert _refusal(InvalidInput, do_declare_suicide, demo.game, acting_user=day.plain[4].user, now=MORNING) == (
        "You have already declared suicide today.")
    assert _refusal(NotAllowed, do_confirm_suicide, declaration, acting_user=demo.tribune2, now=MORNING) == (
        f"Only the Tribune of {day.city.name} may do this.")
    nominate_and_open(demo, day, [day.plain[0]])
    assert _refusal(WrongState, do_declare_suicide, demo.game, acting_user=day.plain[5].user, now=OPENS) == (
        "Voting has started: nominations are closed for today.")
    resident = Resident.objects.get(pk=day.plain[4].pk)  # not refused by the opening: confirmed then, dies then
    assert (resident.status, resident.died_at) == (LifeStatus.DEAD, OPENS)
    assert _refusal(WrongState, do_confirm_suicide, declaration, acting_user=demo.tribune1, now=OPENS) == (
        "This suicide is already confirmed.")


def test_city_without_votes_awaits_the_procurator_who_names_the_executed_L_VOTE_7(demo):
    day = city1_day(demo)
    session = nominate_and_open(demo, day, [day.plain[0]])
    victim = day.plain[9]
    assert _refusal(WrongState, do_decide_execution, day.city, victim, acting_user=demo.procurator, now=OPENS) == (
        f"{day.city.name} is not awaiting the Procurator's decision today.")
    do_close_voting(session, acting_user=None, now=CLOSES)
    assert awaiting_procurator(day.city, 2) is True
    assert _refusal(NotAllowed, do_decide_execution, day.city, victim, acting_user=demo.tribune1, now=CLOSES) == (
        "Only the Procurator names the executed when nobody was voted for.")
    decision = do_decide_execution(day.city, victim, acting_user=demo.procurator, now=CLOSES + timedelta(minutes=5))
    assert (decision.resident, decision.source, decision.day) == (victim, DecisionSource.PROCURATOR, 2)
    victim.refresh_from_db()
    assert victim.status == LifeStatus.DEAD
    assert GameEvent.objects.filter(kind="resident.died", payload__resident=victim.pk).get().payload["cause"] == "executed"
    assert awaiting_procurator(day.city, 2) is False
    assert ExecutionDecision.objects.filter(city=day.city).count() == 1


def test_city_without_nominees_awaits_the_procurator_L_VOTE_7(demo):
    day = city1_day(demo)
    assert awaiting_procurator(day.city, 2) is True
    do_decide_execution(day.city, day.plain[2], acting_user=demo.procurator, now=MORNING)
    assert awaiting_procurator(day.city, 2) is False
