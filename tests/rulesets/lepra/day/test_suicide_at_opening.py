"""Suicide belongs to the opening of voting (L-NOM-5): a declaration not refused by the planned opening is confirmed
at that moment, by the clock if nobody acts and however late its handler runs, and the resident dies then (a death
of that day); none is confirmed or refused later that day; only a confirmed suicide is barred from voting; the
Tribune refuses a declaration from the console."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import translation

from rulesets.lepra.clock.daily_post import _deaths
from kernel.errors import NotAllowed, WrongState
from cities.models import GameEvent, LifeStatus, Resident
from cities.scheduler import dispatch_due_events
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from tests.support.staff_console import flashed, nothing_found, staff_client
from tests.rulesets.lepra.console.test_staff_day_actions import act
from tests.rulesets.lepra.day.day_helpers import CLOSES, MORNING, OPENS, city1_day, ru
from rulesets.lepra.models import LepraVote, SuicideDeclaration, VotingSession
from rulesets.lepra.day.services import (
    _local,
    do_confirm_suicide,
    do_declare_suicide,
    do_nominate,
    do_open_voting,
    do_refuse_suicide,
    do_schedule_voting,
)

LATE = OPENS + timedelta(hours=2, minutes=17)  # the clock was down: its opening handler runs at 20:17 Moscow
PLANNED_OPENING_REFUSAL = ("Voting opened at %(at)s: a suicide not refused by then is confirmed at the opening, and "
                           "none can be confirmed or refused later today.")


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def _refusal(exc_type, fn, *args, **kwargs) -> str:
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    return str(info.value)


def _scheduled_day(demo):
    """City 1 on day 2: plain[0] nominated at 10:00, voting scheduled 18:00-23:00 Moscow (not opened)."""
    day = city1_day(demo)
    do_nominate(day.plain[0], acting_user=day.plain[5].user, now=MORNING)
    session = do_schedule_voting(day.city, OPENS, CLOSES, acting_user=demo.tribune1, now=MORNING)
    return day, session


def test_a_late_clock_confirms_an_unrefused_declaration_at_the_planned_opening_L_NOM_5(demo):
    day, session = _scheduled_day(demo)
    suicide = day.plain[4]
    declaration = do_declare_suicide(demo.game, acting_user=suicide.user, now=MORNING)
    dispatch_due_events(now=LATE)
    session.refresh_from_db()
    assert (session.opens_at, session.opened_at) == (OPENS, LATE)
    declaration.refresh_from_db()
    assert (declaration.confirmed_at, declaration.applied_at, declaration.refused_at) == (OPENS, OPENS, None)
    suicide.refresh_from_db()
    assert (suicide.status, suicide.died_at) == (LifeStatus.DEAD, OPENS)
    died = GameEvent.objects.get(kind="resident.died", payload__resident=suicide.pk)
    assert (died.at, died.payload["cause"]) == (OPENS, "suicide")
    confirmed = GameEvent.objects.get(kind="voting.suicide_confirmed", payload__declaration=declaration.pk)
    assert (confirmed.actor, confirmed.at) == (None, OPENS)  # by the clock, dated at the planned opening
    # A death of day 2: the daily post of day 3 (deaths since day 2's start) lists it with the day's others.
    assert (suicide, "suicide", OPENS) in _deaths(demo.game, MORNING - timedelta(hours=3), LATE)
    assert not Membership.objects.filter(inbox__kind=LepraInboxKind.VOTING, resident=suicide).exists()
    assert list(Inbox.objects.filter(kind=LepraInboxKind.VOTING, city=day.city).values_list("resident", flat=True)) == [
        day.plain[0].pk]


def test_the_tribunes_confirmation_after_the_planned_opening_is_refused_L_NOM_5(demo):
    day, _session = _scheduled_day(demo)
    suicide = day.plain[4]
    declaration = do_declare_suicide(demo.game, acting_user=suicide.user, now=MORNING)
    refusal = PLANNED_OPENING_REFUSAL % {"at": _local(demo.game, OPENS)}
    # The clock has not run yet: the planned opening decides, not the handler.
    assert _refusal(WrongState, do_confirm_suicide, declaration, acting_user=demo.tribune1,
                    now=OPENS + timedelta(minutes=3)) == refusal
    assert _refusal(WrongState, do_refuse_suicide, declaration, acting_user=demo.tribune1, now=OPENS) == refusal
    declaration.refresh_from_db()
    assert (declaration.confirmed_at, declaration.refused_at) == (None, None)
    assert not GameEvent.objects.filter(kind__in=["voting.suicide_confirmed", "voting.suicide_refused"]).exists()
    dispatch_due_events(now=OPENS + timedelta(minutes=4))
    assert Resident.objects.get(pk=suicide.pk).died_at == OPENS


def test_the_tribune_confirms_before_the_opening_and_the_resident_dies_at_the_opening_L_NOM_5(demo):
    day, session = _scheduled_day(demo)
    suicide = day.plain[4]
    declaration = do_declare_suicide(demo.game, acting_user=suicide.user, now=MORNING)
    noon = MORNING + timedelta(hours=2)
    do_confirm_suicide(declaration, acting_user=demo.tribune1, now=noon)
    assert Resident.objects.get(pk=suicide.pk).status == LifeStatus.ALIVE  # dies when voting starts, not now
    do_open_voting(session, acting_user=None, now=OPENS)
    declaration.refresh_from_db()
    assert (declaration.confirmed_at, declaration.applied_at) == (noon, OPENS)
    assert Resident.objects.get(pk=suicide.pk).died_at == OPENS
    assert GameEvent.objects.filter(kind="voting.suicide_confirmed").count() == 1


def test_a_refused_declaration_does_not_bar_the_residents_vote_L_NOM_5(demo):
    day, session = _scheduled_day(demo)
    voter = day.plain[4]
    declaration = do_declare_suicide(demo.game, acting_user=voter.user, now=MORNING)
    assert _refusal(NotAllowed, do_refuse_suicide, declaration, acting_user=demo.tribune2, now=MORNING) == (
        f"Only the Tribune of {day.city.name} may do this.")
    refused_at = MORNING + timedelta(hours=1)
    do_refuse_suicide(declaration, acting_user=demo.tribune1, now=refused_at)
    declaration.refresh_from_db()
    assert (declaration.refused_at, declaration.confirmed_at) == (refused_at, None)
    event = GameEvent.objects.get(kind="voting.suicide_refused")
    assert (event.actor, event.at, event.payload) == (demo.tribune1, refused_at,
                                                      {"declaration": declaration.pk, "resident": voter.pk})
    personal = Inbox.objects.get(kind=LepraInboxKind.PERSONAL, resident=voter, rolled_over_at__isnull=True)
    assert Message.objects.filter(inbox=personal).order_by("-id").first().body == (
        "Трибун отклонил ваше заявление о самоубийстве: вы остаётесь в живых и голосуете сегодня, как все.")
    assert _refusal(WrongState, do_confirm_suicide, declaration, acting_user=demo.tribune1,
                    now=refused_at + timedelta(minutes=1)) == (
        f"This suicide declaration was refused at {_local(demo.game, refused_at)}.")
    do_open_voting(session, acting_user=None, now=OPENS)
    voter.refresh_from_db()
    assert voter.status == LifeStatus.ALIVE
    voting = Inbox.objects.get(kind=LepraInboxKind.VOTING, city=day.city, resident=day.plain[0])
    assert Membership.objects.get(inbox=voting, resident=voter).state == MembershipState.MEMBER
    do_post_message(voting, "казнить", acting_user=voter.user, now=OPENS + timedelta(minutes=1))
    assert LepraVote.objects.filter(inbox=voting, voter=voter, state="standing").count() == 1


def test_an_unconfirmed_declarant_votes_when_the_opening_confirms_nothing_L_NOM_5(demo):
    """The bar on voting reads the confirmation, not the declaration: a declarant whose declaration stands
    unconfirmed in a voting inbox (written as rows: the opening would have confirmed it) still votes."""
    day, session = _scheduled_day(demo)
    voter = day.plain[4]
    do_open_voting(session, acting_user=None, now=OPENS)
    SuicideDeclaration.objects.create(game=demo.game, city=day.city, day=2, resident=voter, declared_at=MORNING)
    voting = Inbox.objects.get(kind=LepraInboxKind.VOTING, city=day.city, resident=day.plain[0])
    do_post_message(voting, "казнить", acting_user=voter.user, now=OPENS + timedelta(minutes=1))
    assert LepraVote.objects.filter(inbox=voting, voter=voter, state="standing").count() == 1
    assert VotingSession.objects.get(pk=session.pk).opened_at == OPENS


def test_the_tribune_refuses_a_declaration_from_the_console_L_NOM_5(demo):
    day, _session = _scheduled_day(demo)
    declaration = do_declare_suicide(demo.game, acting_user=day.plain[4].user, now=MORNING)
    noon = MORNING + timedelta(hours=2)
    with time_machine.travel(noon, tick=False):
        assert flashed(act(staff_client(demo.tribune2), "suicide", "refuse_suicides", [declaration])) == [
            nothing_found()]
        response = act(staff_client(demo.tribune1), "suicide", "refuse_suicides", [declaration])
    assert flashed(response) == [f"Заявление о самоубийстве жителя {day.plain[4].name} отклонено."]
    declaration.refresh_from_db()
    assert declaration.refused_at == noon
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=False):
        late = act(staff_client(demo.tribune1), "suicide", "confirm_suicides", [declaration])
    with translation.override("ru"):
        at = _local(demo.game, noon)
    assert flashed(late) == [ru("This suicide declaration was refused at %(at)s.", at=at)]
