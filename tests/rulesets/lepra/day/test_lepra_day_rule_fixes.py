"""Rule fixes of the Lepra day found in play: a suicide is confirmed when voting starts and its declarant takes
no part in voting (L-NOM-5); an early opening does not strand proxy requests (L-NOM-6); a confrontation is held
within the city (L-NOM-4); an unknown posted action is refused and changes nothing."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse

from cities.models import City, GameEvent, LifeStatus, Resident
from inboxes.models import Inbox, Membership
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra.court.services import do_request_speech
from rulesets.lepra.day.services import (
    do_accept_proxy,
    do_close_voting,
    do_confirm_suicide,
    do_declare_suicide,
    do_nominate,
    do_open_voting,
    do_request_proxy,
    do_schedule_voting,
)
from tests.rulesets.lepra.day.day_helpers import (  # noqa: F401 - english: the autouse fixture
    CLOSES,
    MORNING,
    OPENS,
    _refusal,
    city1_day,
    day_action,
    english,
    nominate_and_open,
    ru,
)
from rulesets.lepra.models import LepraVote, Nomination, ProxyRequest, SpeechRequest, SuicideDeclaration


def test_a_suicide_not_refused_by_the_opening_is_confirmed_then_and_none_later_L_NOM_5(demo):
    day = city1_day(demo)
    nominee, suicide = day.plain[0], day.plain[4]
    declaration = {}

    def declare(session):
        declaration["d"] = do_declare_suicide(demo.game, acting_user=suicide.user, now=MORNING)

    nominate_and_open(demo, day, [nominee, suicide], before_open=declare)
    suicide.refresh_from_db()
    assert (suicide.status, suicide.died_at) == (LifeStatus.DEAD, OPENS)  # confirmed by the clock at the opening
    assert GameEvent.objects.get(kind="resident.died", payload__resident=suicide.pk).payload["cause"] == "suicide"
    d = SuicideDeclaration.objects.get(pk=declaration["d"].pk)
    assert (d.confirmed_at, d.applied_at, d.refused_at) == (OPENS, OPENS, None)
    assert not Membership.objects.filter(inbox__kind=LepraInboxKind.VOTING, resident=suicide).exists()
    assert not Inbox.objects.filter(kind=LepraInboxKind.VOTING, resident=suicide).exists()  # no voting inbox about them
    assert _refusal(NotAllowed, do_post_message, day.inbox_of(nominee), "казнить", acting_user=suicide.user,
                    now=OPENS + timedelta(minutes=1)) == "No such inbox."  # the dead have left it (L-DEATH-1)
    assert not LepraVote.objects.filter(voter=suicide).exists()
    assert _refusal(WrongState, do_confirm_suicide, d, acting_user=demo.tribune1, now=OPENS + timedelta(minutes=5)) == (
        "This suicide is already confirmed.")


def test_suicide_is_declared_only_before_voting_starts_and_not_confirmed_after_it_closed_L_NOM_5(demo):
    day = city1_day(demo)
    late = {}

    def declare(session):
        late["d"] = do_declare_suicide(demo.game, acting_user=day.plain[4].user, now=MORNING)

    session = nominate_and_open(demo, day, [day.plain[0]], before_open=declare)
    assert _refusal(WrongState, do_declare_suicide, demo.game, acting_user=day.plain[5].user, now=OPENS) == (
        "Voting has started: nominations are closed for today.")
    do_close_voting(session, acting_user=None, now=CLOSES)
    assert _refusal(WrongState, do_confirm_suicide, late["d"], acting_user=demo.tribune1, now=CLOSES) == (
        "This suicide is already confirmed.")
    assert Resident.objects.get(pk=day.plain[4].pk).died_at == OPENS


def test_no_proxy_vote_is_cast_for_a_declared_suicide_L_NOM_5(demo):
    day = city1_day(demo)
    nominee, declarant = day.plain[0], day.plain[4]

    def before(session):
        proxy = do_request_proxy(nominee, acting_user=declarant.user, now=MORNING)
        do_accept_proxy(proxy, acting_user=demo.tribune1, now=MORNING)
        do_declare_suicide(demo.game, acting_user=declarant.user, now=MORNING)

    nominate_and_open(demo, day, [nominee], before_open=before)
    assert not LepraVote.objects.filter(voter=declarant).exists()


def test_tribune_cannot_confirm_on_the_day_page_after_the_planned_opening_L_NOM_5(demo, client):
    day = city1_day(demo)
    suicide = day.plain[4]
    do_nominate(day.plain[0], acting_user=day.plain[5].user, now=MORNING)
    do_schedule_voting(day.city, OPENS, CLOSES, acting_user=demo.tribune1, now=MORNING)
    declaration = do_declare_suicide(demo.game, acting_user=suicide.user, now=MORNING)
    client.force_login(demo.tribune1)
    with time_machine.travel(OPENS + timedelta(minutes=10), tick=False):  # the clock has not opened it yet
        response = client.post(day_action(demo, "confirm_suicide"),
                               {"declaration": declaration.public_id})
    assert response.status_code == 409
    assert ru("Voting opened at %(at)s: a suicide not refused by then is confirmed at the opening, and none can be "
              "confirmed or refused later today.").split("%(at)s")[0] in response.content.decode()
    assert SuicideDeclaration.objects.get(pk=declaration.pk).confirmed_at is None
    assert Resident.objects.get(pk=suicide.pk).status == LifeStatus.ALIVE


def test_early_opening_is_refused_while_proxy_requests_await_an_answer_L_NOM_6(demo):
    day = city1_day(demo)
    do_nominate(day.plain[0], acting_user=day.plain[5].user, now=MORNING)
    session = do_schedule_voting(day.city, OPENS, CLOSES, acting_user=demo.tribune1, now=MORNING)
    proxy = do_request_proxy(day.plain[0], acting_user=day.plain[6].user, now=MORNING)
    refusal = _refusal(WrongState, do_open_voting, session, acting_user=demo.tribune1, now=MORNING)
    assert refusal.startswith("Proxy vote requests await your answer: accept them before opening voting early")
    session.refresh_from_db()
    assert (session.opens_at, session.opened_at) == (OPENS, None)
    assert not Inbox.objects.filter(kind=LepraInboxKind.VOTING, city=day.city).exists()
    do_open_voting(session, acting_user=None, now=OPENS)  # the planned opening: an unanswered request lapses
    assert ProxyRequest.objects.get(pk=proxy.pk).state == "requested"


def test_confrontation_with_a_resident_of_another_city_is_refused_L_NOM_4(demo, client):
    day = city1_day(demo)
    stranger = Resident.objects.filter(city=City.objects.get(game=demo.game, number=2),
                                       status=LifeStatus.ALIVE).first()
    assert _refusal(InvalidInput, do_request_speech, demo.game, "confrontation", other=stranger,
                    acting_user=day.plain[0].user, now=MORNING) == (
        f"A confrontation is held with a resident of your own city; {stranger.name} lives in another city.")
    client.force_login(day.plain[0].user)
    with time_machine.travel(MORNING, tick=False):
        response = client.post(reverse("request_confrontation", args=[demo.game.slug]),
                               {"other": stranger.public_id})
    assert response.status_code == 400
    assert not SpeechRequest.objects.exists()


def test_the_nomination_page_itself_takes_no_post_each_button_has_its_own_url_L_NOM_1(demo, client):
    """The page answers GET only (405 to a POST, whatever it carries: no field chooses an action); each button
    posts to its own URL, and a GET to one of those is a 405 too. Nothing is recorded."""
    day = city1_day(demo)
    client.force_login(day.plain[5].user)
    with time_machine.travel(MORNING, tick=False):
        page = client.get(reverse("nominate", args=[demo.game.slug])).content.decode()
        response = client.post(reverse("nominate", args=[demo.game.slug]),
                               {"action": "nominate", "nominee": day.plain[0].public_id})
        assert response.status_code == 405
        for name in ("nominate_resident", "request_proxy", "request_confrontation", "request_last_word",
                     "declare_suicide"):
            url = reverse(name, args=[demo.game.slug])
            assert url in page, name
            assert client.get(url).status_code == 405, name
    assert 'name="action"' not in page
    assert not Nomination.objects.exists()


@pytest.mark.parametrize("persona", ["tribune1", "honest"])
def test_the_city_day_page_itself_takes_no_post_each_button_has_its_own_url(demo, client, persona):
    client.force_login(getattr(demo, persona))
    with time_machine.travel(MORNING, tick=False):
        response = client.post(reverse("city_day", args=[demo.game.slug, 1]),
                               {"action": "schedule", "opens_at": "2026-11-20T18:00", "closes_at": "2026-11-20T23:00"})
        assert response.status_code == 405
        for name in ("schedule_voting", "open_voting", "extend_voting", "close_voting", "confirm_suicide",
                     "accept_proxy", "decide_execution", "put_before_court", "close_court_case", "court_vote",
                     "propose_candidate", "open_removal_demand", "confirm_removal_demand", "recuse_judge"):
            assert client.get(reverse(name, args=[demo.game.slug, 1])).status_code == 405, name
    assert not GameEvent.objects.filter(kind="voting.scheduled").exists()
