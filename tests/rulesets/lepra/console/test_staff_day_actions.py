"""The Lepra day in the staff console (issue 4 item 6): voting sessions, proxy requests, suicide declarations and
court cases at /staff/, and the Tribune's "Schedule voting" page.

Driven over HTTP as a browser does it (changelist POST with ``action`` + ``_selected_action``, then the
intermediate page's POST with ``apply``), at fixed instants of day 2 of the demo game (time_machine). Asserted:
the exact state each service writes, its ``GameEvent`` audit row, the exact messages (success, and the service's
own refusal), that the wrong persona changes nothing, and that objects outside a persona's scope behave like
missing ones (RULES.md L-DAY-3, L-VOTE-1, L-VOTE-6, L-NOM-5, L-NOM-6, L-COURT-1, L-COURT-4, L-STAFF-2, L-STAFF-6).
"""
from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.test import Client

from cities.models import City, GameEvent, LifeStatus, Resident, ScheduledEvent
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from kernel.public_ids import new_public_id
from rulesets.lepra import seats
from rulesets.lepra.day.services import (
    do_accept_proxy,
    do_close_voting,
    do_declare_suicide,
    do_nominate,
    do_open_voting,
    do_request_proxy,
    do_schedule_voting,
)
from tests.admin_keys import key_of, missing_key, pks_from_keys, post_console_action
from tests.rulesets.lepra.day.day_helpers import CLOSES, MORNING, OPENS, US, city1_day
from rulesets.lepra.models import CourtCase, ProxyRequest, ProxyState, SuicideDeclaration, VotingSession
from tests.support.staff_console import STAFF_PERSONAS, flashed, nothing_found, staff_client

LIST = {
    "session": "/staff/lepra/votingsession/",
    "proxy": "/staff/lepra/proxyrequest/",
    "suicide": "/staff/lepra/suicidedeclaration/",
    "case": "/staff/lepra/courtcase/",
}
LINK = {key: re.compile(re.escape(url) + r'([a-z0-9]+)/change/') for key, url in LIST.items()}
MODELS = {"session": VotingSession, "proxy": ProxyRequest, "suicide": SuicideDeclaration, "case": CourtCase}
OPTION = re.compile(r'<option value="([a-z_]+)">')
NO_ACTION = "Действие не выбрано."
NOON = MORNING + timedelta(hours=2)  # 12:00 in Moscow, before the opening
SCHEDULE_OPENS = datetime(2026, 11, 20, 15, 0, tzinfo=UTC)  # 18:00 in Moscow


def ids(client: Client, model: str) -> set[int]:
    """The database ids of the objects listed (by public id) on the changelist of ``model``."""
    response = client.get(LIST[model] + "?all=")
    assert response.status_code == 200, (model, response.status_code)
    return set(pks_from_keys(MODELS[model], dict.fromkeys(LINK[model].findall(response.content.decode()))))


def offered(client: Client, model: str) -> set[str]:
    return set(OPTION.findall(client.get(LIST[model]).content.decode())) - {""}


def act(client: Client, model: str, action: str, objects, *, submit: bool = False, **extra):
    """``action`` on ``objects``, confirmed, from the changelist of ``model`` (or with ``submit`` its intermediate
    page's form to the action's own URL), following redirects."""
    pks = [key_of(o) if hasattr(o, "pk") else o for o in objects]
    return post_console_action(client, LIST[model], action, pks, submit=submit, confirmed="yes", **extra)


def events():
    return GameEvent.objects.order_by("-id")


def session_state(session: VotingSession) -> tuple:
    s = VotingSession.objects.get(pk=session.pk)
    return s.opens_at, s.closes_at, s.opened_at, s.closed_at, s.result, CourtCase.objects.filter(session=s).exists()


class Day2:
    """Day 2 at 10:00 Moscow: in each city one nominee, one proxy request, one suicide declaration, and voting
    scheduled 18:00-23:00 by the city's Tribune."""

    def __init__(self, demo):
        self.demo = demo
        self.city1 = city1_day(demo).city
        self.city2 = City.objects.get(game=demo.game, number=2)
        self.nominee, self.proxies, self.suicides, self.sessions = {}, {}, {}, {}
        for city, tribune in ((self.city1, demo.tribune1), (self.city2, demo.tribune2)):
            plain = list(Resident.objects.filter(seats.rank_q("is_judge", False), city=city, status=LifeStatus.ALIVE)
                         .select_related("user").order_by("name"))
            n = city.number
            self.nominee[n] = plain[0]
            do_nominate(plain[0], acting_user=plain[5].user, now=MORNING)
            self.proxies[n] = do_request_proxy(plain[0], acting_user=plain[6].user, now=MORNING)
            self.suicides[n] = do_declare_suicide(demo.game, acting_user=plain[7].user, now=MORNING)
            self.sessions[n] = do_schedule_voting(city, OPENS, CLOSES, acting_user=tribune, now=MORNING)
        self.plain1 = list(Resident.objects.filter(seats.rank_q("is_judge", False), city=self.city1, status=LifeStatus.ALIVE)
                           .select_related("user").order_by("name"))


@pytest.fixture
def day2(demo):
    return Day2(demo)


# --------------------------------------------------------------------------------------------------------------
# Who sees what, who is offered what (L-STAFF-2, L-STAFF-6)
# --------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("persona, sessions, proxies, suicides", [
    ("procurator", {1, 2}, set(), set()),
    ("tribune1", {1}, {1}, {1}),
    ("tribune2", {2}, {2}, {2}),
    ("arbiter", {1, 2}, set(), set()),
    ("consigliere", set(), set(), set()),
])
def test_each_persona_sees_exactly_its_scope_L_STAFF_6(demo, day2, persona, sessions, proxies, suicides):
    # Proxy requests and suicide declarations are personal-inbox content: the resident and the city's Tribune
    # only; not even the Procurator (L-STAFF-6).
    client = staff_client(getattr(demo, persona))
    assert ids(client, "session") == {day2.sessions[n].pk for n in sessions}
    assert ids(client, "proxy") == {day2.proxies[n].pk for n in proxies}
    assert ids(client, "suicide") == {day2.suicides[n].pk for n in suicides}


@pytest.mark.parametrize("persona, session_actions, proxy_actions, suicide_actions, case_actions", [
    ("procurator", set(), set(), set(), set()),
    ("tribune1", {"open_voting", "extend_voting", "close_voting"}, {"accept_proxies"}, {"confirm_suicides", "refuse_suicides"}, set()),
    ("arbiter", {"put_before_court"}, set(), set(), {"close_court_cases"}),
    ("consigliere", set(), set(), set(), set()),
])
def test_each_persona_is_offered_only_the_actions_its_services_allow(demo, day2, persona, session_actions,
                                                                     proxy_actions, suicide_actions, case_actions):
    # The admin shows no action menu over an empty list: a court case exists (city 2, closed, no votes: its
    # leader is nobody, so the case is written directly; the menu is what is tested here).
    CourtCase.objects.create(session=day2.sessions[2], game=demo.game, city=day2.city2, day=2,
                             candidates=[str(day2.nominee[2].pk)], leader=day2.nominee[2], deadline=CLOSES,
                             opened_at=MORNING)
    client = staff_client(getattr(demo, persona))
    assert offered(client, "session") == session_actions
    assert offered(client, "proxy") == proxy_actions
    assert offered(client, "suicide") == suicide_actions
    assert offered(client, "case") == case_actions


@pytest.mark.parametrize("model", ["session", "proxy", "suicide"])
def test_tribune2_opens_a_city1_object_like_a_missing_one_L_STAFF_2(demo, day2, model):
    forbidden = key_of({"session": day2.sessions[1], "proxy": day2.proxies[1], "suicide": day2.suicides[1]}[model])
    missing = missing_key(MODELS[model])
    client = staff_client(demo.tribune2)
    answers = []
    for pk in (forbidden, missing):
        response = client.get(f"{LIST[model]}{pk}/change/", follow=True)
        answers.append((response.status_code, [(u, s) for u, s in response.redirect_chain],
                        [re.sub(f"[“«]{pk}[”“»]", "“ID”", m) for m in flashed(response)]))
    assert answers[0] == answers[1]
    assert answers[0][1] == [("/staff/", 302)]


def test_the_dashboard_links_the_tribune_to_his_day(demo, day2):
    body = staff_client(demo.tribune1).get("/staff/").content.decode()
    game = demo.game.slug
    for url in (LIST["session"], LIST["proxy"], LIST["suicide"]):
        assert f'href="{url}?game__slug__exact={game}"' in body
    assert f'href="/staff/cities/{day2.city1.public_id}/schedule-voting/"' in body
    assert f'href="{LIST["case"]}' not in body
    arbiter = staff_client(demo.arbiter).get("/staff/").content.decode()
    assert f'href="{LIST["case"]}?game__slug__exact={game}"' in arbiter and "schedule-voting" not in arbiter
    assert LIST["proxy"] not in arbiter and LIST["suicide"] not in arbiter


def test_staff_day_pages_render_and_leak_no_request_to_other_staff_L_STAFF_6(demo, day2):
    # Every changelist and object page reachable per persona renders; the requests' residents are named on no
    # page of a persona outside the city's Tribune.
    requesters = {day2.proxies[1].resident.name, day2.suicides[1].resident.name}
    for persona in STAFF_PERSONAS:
        client = staff_client(getattr(demo, persona))
        pages = []
        for model in LIST:
            for pk in ids(client, model):
                response = client.get(f"{LIST[model]}{key_of(MODELS[model].objects.get(pk=pk))}/change/")
                assert response.status_code == 200, (persona, model)
                pages.append(response.content.decode())
            pages.append(client.get(LIST[model] + "?all=").content.decode())
        everything = "\n".join(pages)
        assert any(name in everything for name in requesters) == (persona == "tribune1"), persona


# --------------------------------------------------------------------------------------------------------------
# Schedule voting (L-DAY-3)
# --------------------------------------------------------------------------------------------------------------

def test_the_tribune_schedules_voting_in_the_games_zone_L_DAY_3(demo):
    city = City.objects.get(game=demo.game, number=1)
    url = f"/staff/cities/{city.public_id}/schedule-voting/"
    client = staff_client(demo.tribune1)
    with time_machine.travel(MORNING, tick=False):
        page = client.get(url)
        assert page.status_code == 200 and 'name="opens_at"' in page.content.decode()
        n_events = events().count()
        late = client.post(url, {"opens_at": "2026-11-20T18:00", "closes_at": "2026-11-21T00:01"}, follow=True)
        assert late.status_code == 200 and flashed(late) == []  # the refusal is shown in the form (issue 7)
        assert ('<ul class="errorlist nonfield"><li>Голосование должно закрыться не позже 00:00 (21 ноября 2026 г. 0:00 MSK).'
                '</li></ul>') in late.content.decode()
        assert not VotingSession.objects.filter(city=city).exists() and events().count() == n_events

        response = client.post(url, {"opens_at": "2026-11-20T18:00", "closes_at": "2026-11-20T23:00"}, follow=True)
    session = VotingSession.objects.get(city=city, day=2)
    assert response.redirect_chain == [(url, 302)]  # back to the schedule page, listing the pending events
    assert flashed(response) == [
        "Голосование в городе {} назначено с 2026-11-20 18:00 до 2026-11-20 23:00 (Europe/Moscow).".format(city.name)]
    assert (session.opens_at, session.closes_at, session.opened_at) == (OPENS, CLOSES, None)
    event = events().first()
    assert (event.kind, event.actor_id, event.payload["session"]) == ("voting.scheduled", demo.tribune1.pk,
                                                                     session.pk)
    assert events().count() == n_events + 1
    assert set(ScheduledEvent.objects.filter(payload__session=session.pk).values_list("kind", "due_at")) == {
        ("voting_open", OPENS), ("voting_close", CLOSES)}


@pytest.mark.parametrize("persona", ["tribune2", "procurator", "arbiter", "consigliere"])
def test_only_the_citys_tribune_has_its_schedule_page(demo, persona):
    city = City.objects.get(game=demo.game, number=1)
    client = staff_client(getattr(demo, persona))
    for key in (city.public_id, new_public_id()):  # another city's page answers like a missing one
        assert client.get(f"/staff/cities/{key}/schedule-voting/").status_code == 404
        assert client.post(f"/staff/cities/{key}/schedule-voting/",
                           {"opens_at": "2026-11-20T18:00", "closes_at": "2026-11-20T23:00"}).status_code == 404
    assert not VotingSession.objects.filter(city=city).exists()


# --------------------------------------------------------------------------------------------------------------
# Open, extend, close (L-VOTE-1, L-DAY-3, L-VOTE-6)
# --------------------------------------------------------------------------------------------------------------

def test_the_tribune_opens_voting_now_L_VOTE_1(demo, day2):
    session = day2.sessions[1]
    client = staff_client(demo.tribune1)
    with time_machine.travel(NOON, tick=False):  # an unanswered proxy request: an early opening would strand it
        refused = act(client, "session", "open_voting", [session])
    assert flashed(refused)[0].startswith("Просьбы о голосовании по доверенности ждут вашего ответа: примите их")  # L-NOM-6
    assert VotingSession.objects.get(pk=session.pk).opened_at is None
    waiting = list(ProxyRequest.objects.filter(city=day2.city1, day=2, state=ProxyState.REQUESTED))
    assert waiting
    for proxy in waiting:
        do_accept_proxy(proxy, acting_user=demo.tribune1, now=NOON)
    n_events = events().count()
    with time_machine.travel(NOON, tick=False):
        response = act(client, "session", "open_voting", [session])
    assert flashed(response) == [f"Голосование в городе {day2.city1.name} открыто."]
    session.refresh_from_db()
    assert (session.opens_at, session.opened_at, session.closed_at) == (NOON, NOON, None)
    voting = Inbox.objects.get(kind=LepraInboxKind.VOTING, city=day2.city1, day_number=2)
    assert voting.resident == day2.nominee[1]
    assert [m.body for m in Message.objects.filter(inbox=voting)] == [  # the accepted proxies, cast at the opening
        "казнить" for p in waiting if p.nominee_id == voting.resident_id]
    kinds = [e.kind for e in events()[:events().count() - n_events]]
    assert "voting.opened" in kinds and events().filter(kind="voting.opened").get().actor_id == demo.tribune1.pk
    # Again: the service's refusal, nothing more written.
    n_events = events().count()
    with time_machine.travel(NOON + timedelta(minutes=1), tick=False):
        again = act(client, "session", "open_voting", [session])
    assert flashed(again) == ["Голосование уже открыто."] and events().count() == n_events


def test_the_tribune_extends_open_voting_in_the_games_zone_L_DAY_3(demo, day2):
    session = day2.sessions[1]
    do_open_voting(session, acting_user=None, now=OPENS)
    client = staff_client(demo.tribune1)
    n_events = events().count()
    with time_machine.travel(OPENS + timedelta(minutes=30), tick=False):
        page = act(client, "session", "extend_voting", [session])
        body = page.content.decode()
        assert page.status_code == 200 and 'name="closes_at"' in body and "Europe/Moscow" in body
        late = act(client, "session", "extend_voting", [session], submit=True, closes_at="2026-11-21T00:30")
        assert flashed(late) == ["Голосование должно закрыться не позже 00:00 (21 ноября 2026 г. 0:00 MSK)."]
        bad = act(client, "session", "extend_voting", [session], submit=True, closes_at="tomorrow")
        assert "Введите дату и время в виде ГГГГ-ММ-ДД ЧЧ:ММ." in bad.content.decode()
        assert session_state(session)[1] == CLOSES and events().count() == n_events

        response = act(client, "session", "extend_voting", [session], submit=True, closes_at="2026-11-20T23:45")
    new_close = datetime(2026, 11, 20, 20, 45, tzinfo=UTC)
    assert response.redirect_chain == [(LIST["session"], 302)]
    assert flashed(response) == [f"Голосование в городе {day2.city1.name} теперь закрывается в 2026-11-20 23:45 (Europe/Moscow)."]
    session.refresh_from_db()
    assert session.closes_at == new_close
    event = events().first()
    assert (event.kind, event.actor_id, event.payload) == ("voting.extended", demo.tribune1.pk, {
        "session": session.pk, "from": CLOSES.isoformat(), "to": new_close.isoformat()})
    assert events().count() == n_events + 1
    assert ScheduledEvent.objects.get(kind="voting_close", payload__session=session.pk, cancelled_at__isnull=True,
                                      done_at__isnull=True).due_at == new_close


def test_extending_takes_one_session_at_a_time(demo, day2):
    # The Tribune sees only his own city's session; two of them (two days) would be refused.
    VotingSession.objects.filter(pk=day2.sessions[1].pk).update(day=1)
    second = do_schedule_voting(day2.city1, OPENS, CLOSES, acting_user=demo.tribune1, now=MORNING)
    before = [session_state(s) for s in (day2.sessions[1], second)]
    response = act(staff_client(demo.tribune1), "session", "extend_voting", [day2.sessions[1], second], submit=True,
                   closes_at="2026-11-20T23:30")
    assert flashed(response) == ["Выбирайте по одному голосованию за раз."]
    assert [session_state(s) for s in (day2.sessions[1], second)] == before


def test_the_tribune_closes_voting_now_with_the_result_L_VOTE_6(demo, day2):
    session = day2.sessions[1]
    do_open_voting(session, acting_user=None, now=OPENS)
    voting = Inbox.objects.get(kind=LepraInboxKind.VOTING, city=day2.city1, day_number=2)
    do_post_message(voting, "казнить", acting_user=day2.plain1[5].user, now=OPENS + US)
    client = staff_client(demo.tribune1)
    at = OPENS + timedelta(hours=1)
    n_events = events().count()
    with time_machine.travel(at, tick=False):
        response = act(client, "session", "close_voting", [session])
    assert flashed(response) == [f"Голосование в городе {day2.city1.name} закрыто."]
    session.refresh_from_db()
    assert (session.closes_at, session.closed_at) == (at, at)
    assert session.result["leader"] == str(day2.nominee[1].pk)
    voting.refresh_from_db()
    assert voting.killed_at == at
    closed = events().filter(kind="voting.closed").get()
    assert (closed.actor_id, closed.payload["session"], closed.payload["leader"]) == (
        demo.tribune1.pk, session.pk, str(day2.nominee[1].pk))
    assert events().count() > n_events
    n_events = events().count()
    with time_machine.travel(at + US, tick=False):
        again = act(client, "session", "close_voting", [session])
    assert flashed(again) == ["Голосование уже закрыто."] and events().count() == n_events


def test_closing_before_the_opening_is_the_services_refusal(demo, day2):
    before, n_events = session_state(day2.sessions[1]), events().count()
    with time_machine.travel(NOON, tick=False):
        response = act(staff_client(demo.tribune1), "session", "close_voting", [day2.sessions[1]])
    assert flashed(response) == ["Голосование ещё не открыто."]
    assert session_state(day2.sessions[1]) == before and events().count() == n_events


@pytest.mark.parametrize("action, extra", [
    ("open_voting", {}),
    ("close_voting", {}),
    ("extend_voting", {"closes_at": "2026-11-20T23:30"}),
    ("put_before_court", {"deadline": "2026-11-20T23:50"}),
])
def test_tribune2_cannot_touch_city1_sessions_same_as_a_missing_id(demo, day2, action, extra):
    """From the action menu and at the action's own URL alike, a session of another city is answered as a
    missing id (the Tribune of city 2 has no "put before the court" at all: 403 at its URL)."""
    session = day2.sessions[1]
    before, n_events = session_state(session), events().count()
    client = staff_client(demo.tribune2)
    keys = (session.public_id, missing_key(VotingSession))
    with time_machine.travel(NOON, tick=False):
        menu = [act(client, "session", action, [pk], **extra) for pk in keys]
        own = [act(client, "session", action, [pk], submit=True, **extra) for pk in keys]
    expected = [NO_ACTION] if action == "put_before_court" else [nothing_found()]
    assert [flashed(r) for r in menu] == [expected, expected]
    assert menu[0].status_code == menu[1].status_code == 200
    assert [(r.status_code, flashed(r)) for r in own] == 2 * [
        (403, []) if action == "put_before_court" else (200, [nothing_found()])]
    assert session_state(session) == before and events().count() == n_events


@pytest.mark.parametrize("persona, action, expected", [
    ("procurator", "open_voting", []),  # nothing offered: the POST is just the list
    ("procurator", "close_voting", []),
    ("arbiter", "open_voting", [NO_ACTION]),
    ("arbiter", "extend_voting", [NO_ACTION]),
    ("consigliere", "close_voting", []),
])
def test_the_wrong_persona_cannot_run_voting(demo, day2, persona, action, expected):
    session = day2.sessions[1]
    do_open_voting(session, acting_user=None, now=OPENS)
    before, n_events = session_state(session), events().count()
    client = staff_client(getattr(demo, persona))
    with time_machine.travel(OPENS + timedelta(minutes=5), tick=False):
        menu = act(client, "session", action, [session])
        own = act(client, "session", action, [session], submit=True, closes_at="2026-11-20T23:30")
    assert flashed(menu) == expected
    assert own.status_code == 403 and flashed(own) == []  # the action's own URL: not offered to the persona
    assert session_state(session) == before and events().count() == n_events


# --------------------------------------------------------------------------------------------------------------
# Proxies (L-NOM-6) and suicides (L-NOM-5)
# --------------------------------------------------------------------------------------------------------------

def test_the_tribune_accepts_a_proxy_and_the_site_casts_it_at_the_opening_L_NOM_6(demo, day2):
    proxy = day2.proxies[1]
    client = staff_client(demo.tribune1)
    n_events = events().count()
    with time_machine.travel(NOON, tick=False):
        response = act(client, "proxy", "accept_proxies", [proxy])
    assert flashed(response) == [f"Голос жителя {proxy.resident.name} по доверенности за {proxy.nominee.name} принят."]
    proxy.refresh_from_db()
    assert (proxy.state, proxy.accepted_at) == (ProxyState.ACCEPTED, NOON)
    event = events().first()
    assert (event.kind, event.actor_id, event.payload) == ("voting.proxy_accepted", demo.tribune1.pk,
                                                          {"proxy": proxy.pk})
    assert events().count() == n_events + 1
    with time_machine.travel(NOON + timedelta(minutes=1), tick=False):
        again = act(client, "proxy", "accept_proxies", [proxy])
    assert flashed(again) == ["Этот голос по доверенности уже принят."] and events().count() == n_events + 1
    do_open_voting(day2.sessions[1], acting_user=None, now=OPENS)
    proxy.refresh_from_db()
    assert proxy.state == ProxyState.CAST


def test_a_proxy_after_the_opening_is_refused_L_NOM_6(demo, day2):
    do_open_voting(day2.sessions[1], acting_user=None, now=OPENS)
    n_events = events().count()
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=False):
        response = act(staff_client(demo.tribune1), "proxy", "accept_proxies", [day2.proxies[1]])
    assert flashed(response) == ["Голосование уже началось: голоса по доверенности принимаются до его начала."]
    assert ProxyRequest.objects.get(pk=day2.proxies[1].pk).state == ProxyState.REQUESTED
    assert events().count() == n_events


@pytest.mark.parametrize("persona", ["procurator", "tribune2", "arbiter", "consigliere"])
def test_only_the_citys_tribune_accepts_a_proxy_or_confirms_a_suicide(demo, day2, persona):
    client = staff_client(getattr(demo, persona))
    n_events = events().count()
    with time_machine.travel(NOON, tick=False):
        for model, action, obj in (("proxy", "accept_proxies", day2.proxies[1]),
                                   ("suicide", "confirm_suicides", day2.suicides[1])):
            for pk in (key_of(obj), missing_key(type(obj))):  # out of scope answers like a missing id
                response = act(client, model, action, [pk])
                # The city's other Tribune has the action, for his own city; the others are not offered it.
                assert flashed(response) == ([nothing_found()] if persona == "tribune2" else []), (model, pk)
    assert ProxyRequest.objects.get(pk=day2.proxies[1].pk).state == ProxyState.REQUESTED
    assert SuicideDeclaration.objects.get(pk=day2.suicides[1].pk).confirmed_at is None
    assert events().count() == n_events


def test_the_tribune_confirms_a_suicide_applied_at_the_opening_L_NOM_5(demo, day2):
    declaration = day2.suicides[1]
    client = staff_client(demo.tribune1)
    n_events = events().count()
    with time_machine.travel(NOON, tick=False):
        response = act(client, "suicide", "confirm_suicides", [declaration])
    assert flashed(response) == [f"Самоубийство жителя {declaration.resident.name} подтверждено."]
    declaration.refresh_from_db()
    assert (declaration.confirmed_at, declaration.applied_at) == (NOON, None)
    event = events().first()
    assert (event.kind, event.actor_id, event.payload) == ("voting.suicide_confirmed", demo.tribune1.pk,
                                                          {"declaration": declaration.pk})
    assert events().count() == n_events + 1
    with time_machine.travel(NOON + timedelta(minutes=1), tick=False):
        again = act(client, "suicide", "confirm_suicides", [declaration])
    assert flashed(again) == ["Это самоубийство уже подтверждено."] and events().count() == n_events + 1
    do_open_voting(day2.sessions[1], acting_user=None, now=OPENS)
    declaration.refresh_from_db()
    assert declaration.applied_at == OPENS
    assert Resident.objects.get(pk=declaration.resident_id).status != LifeStatus.ALIVE


# --------------------------------------------------------------------------------------------------------------
# The Supreme Court (L-COURT-1, L-COURT-4)
# --------------------------------------------------------------------------------------------------------------

def _closed_session(demo, day2) -> VotingSession:
    session = day2.sessions[1]
    do_open_voting(session, acting_user=None, now=OPENS)
    voting = Inbox.objects.get(kind=LepraInboxKind.VOTING, city=day2.city1, day_number=2)
    do_post_message(voting, "казнить", acting_user=day2.plain1[5].user, now=OPENS + US)
    do_close_voting(session, acting_user=None, now=CLOSES)
    session.refresh_from_db()
    return session


def test_the_arbiter_puts_the_result_before_the_court_and_closes_it_L_COURT_1_L_COURT_4(demo, day2):
    session = _closed_session(demo, day2)
    leader = day2.nominee[1]
    client = staff_client(demo.arbiter)
    n_events = events().count()
    with time_machine.travel(CLOSES + timedelta(minutes=1), tick=False):
        page = act(client, "session", "put_before_court", [session])
        assert page.status_code == 200 and 'name="deadline"' in page.content.decode()
        past = act(client, "session", "put_before_court", [session], submit=True, deadline="2026-11-20T22:00")
        assert flashed(past) == ["Срок суда должен быть в будущем и с указанием часового пояса."]
        assert not CourtCase.objects.exists() and events().count() == n_events

        response = act(client, "session", "put_before_court", [session], submit=True, deadline="2026-11-20T23:50")
    deadline = datetime(2026, 11, 20, 20, 50, tzinfo=UTC)
    assert flashed(response) == [
        f"Итог голосования города {day2.city1.name} передан в суд до 2026-11-20 23:50 (Europe/Moscow)."]
    case = CourtCase.objects.get(session=session)
    assert (case.candidates, case.leader_id, case.deadline, case.decided_at) == ([str(leader.pk)], leader.pk,
                                                                                 deadline, None)
    opened = events().filter(kind="court.case_opened").get()
    assert (opened.actor_id, opened.payload) == (demo.arbiter.pk, {"case": case.pk, "session": session.pk,
                                                                   "candidates": [str(leader.pk)]})
    assert ScheduledEvent.objects.get(kind="court_deadline", payload__case=case.pk).due_at == deadline

    # The Procurator reads the case, and may not close it; neither may a Tribune put it before the court again.
    assert ids(staff_client(demo.procurator), "case") == {case.pk}
    assert ids(staff_client(demo.tribune1), "case") == set()
    n_events = events().count()
    assert flashed(act(staff_client(demo.procurator), "case", "close_court_cases", [case])) == []
    assert flashed(act(staff_client(demo.tribune1), "case", "close_court_cases", [case])) == []
    assert CourtCase.objects.get(pk=case.pk).decided_at is None and events().count() == n_events

    at = CLOSES + timedelta(minutes=10)
    with time_machine.travel(at, tick=False):
        closed = act(client, "case", "close_court_cases", [case])
    assert flashed(closed) == [f"Дело города {day2.city1.name} закрыто: {leader.name} казнён."]
    case.refresh_from_db()
    assert (case.decided_at, case.sentenced_id, case.fallback) == (at, leader.pk, True)
    assert Resident.objects.get(pk=leader.pk).status != LifeStatus.ALIVE
    sentenced = events().filter(kind="court.sentenced").get()
    assert (sentenced.actor_id, sentenced.payload) == (demo.arbiter.pk, {"case": case.pk, "resident": leader.pk,
                                                                         "fallback": True})
    n_events = events().count()
    with time_machine.travel(at + US, tick=False):
        again = act(client, "case", "close_court_cases", [case])
    assert flashed(again) == ["Суд уже вынес решение по этому делу."] and events().count() == n_events


def test_putting_open_voting_before_the_court_is_refused(demo, day2):
    do_open_voting(day2.sessions[1], acting_user=None, now=OPENS)
    before, n_events = session_state(day2.sessions[1]), events().count()
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=False):
        response = act(staff_client(demo.arbiter), "session", "put_before_court", [day2.sessions[1]], submit=True,
                       deadline="2026-11-20T23:50")
    assert flashed(response) == ["Голосование ещё не закрыто."]
    assert session_state(day2.sessions[1]) == before and events().count() == n_events


@pytest.mark.parametrize("persona, expected", [
    ("tribune1", [NO_ACTION]),  # the Tribune has actions here, but not this one
    ("procurator", []),
    ("consigliere", []),
])
def test_only_the_arbiter_puts_a_case_before_the_court(demo, day2, persona, expected):
    session = _closed_session(demo, day2)
    before, n_events = session_state(session), events().count()
    client = staff_client(getattr(demo, persona))
    with time_machine.travel(CLOSES + timedelta(minutes=1), tick=False):
        menu = act(client, "session", "put_before_court", [session])
        own = act(client, "session", "put_before_court", [session], submit=True, deadline="2026-11-20T23:50")
    assert flashed(menu) == expected
    assert own.status_code == 403 and flashed(own) == []  # the action's own URL: not offered to the persona
    assert session_state(session) == before and events().count() == n_events
