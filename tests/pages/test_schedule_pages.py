"""Issue 7 point 2, the schedule editor: one "Schedule" entry on the dashboard of the Procurator (day starts, long
and shortened days), the Tribunes (voting times) and the Arbiter (election times); each change validated by its
service (L-DAY-1..4), a refusal shown in the form with nothing changed, and after a change the pending scheduled
events listed at their new times in the game's zone."""
from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.test import Client

from cities.models import City, ScheduledEvent
from rulesets.lepra.models import LepraSeat
from tests.cities.clock_helpers import DAY1, advance, clocked_game, night_handler, pending

pytestmark = pytest.mark.django_db
H = timedelta(hours=1)


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.fixture
def built():
    with night_handler():
        yield clocked_game("schedule-game")


def client_of(user) -> Client:
    """A client whose browser asks for English, logged in as ``user`` on the game's first day (its session outlives
    the test). The console speaks the game's language whatever the browser asks: Russian for this Lepra game."""
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    with time_machine.travel(DAY1, tick=False):
        client.force_login(user)
    return client


def form_error(body: str) -> str:
    """The text of the non-field error shown inside the page's form."""
    found = re.search(r'<form method="post"[^>]*>.*?<ul class="errorlist nonfield"><li>(.*?)</li>', body, re.DOTALL)
    return html.unescape(found.group(1)) if found else ""


def shown_due(body: str) -> list[str]:
    """The due times (game zone) of the pending events listed on the page."""
    block = re.search(r'<div class="module pending-events">.*?</div>', body, re.DOTALL).group(0)
    return re.findall(r'<td class="due">([^<]+)</td>', block)


@pytest.mark.parametrize("persona, url_name", [("procurator", "clock/"), ("tribune1", "schedule-voting/"),
                                               ("arbiter", "schedule-election/")])
def test_each_scheduling_role_has_one_schedule_entry_on_its_dashboard(built, persona, url_name):
    user = built.procurator if persona == "procurator" else built.staff[persona]
    body = client_of(user).get("/staff/").content.decode()
    links = re.findall(r'<a href="([^"]+)">Расписание: сроки и ожидающие события</a>', body)
    assert len(links) == 1 and links[0].endswith(url_name)


def test_procurator_long_day_refused_in_the_form_then_moves_the_pending_events_L_DAY_2(built):
    game = built.game
    advance(game, DAY1)
    url = f"/staff/games/{game.slug}/clock/"
    client = client_of(built.procurator)
    before = pending(game)
    with time_machine.travel(utc(2027, 3, 1, 14), tick=False):  # 17:00 MSK: past day 1's first half
        refused = client.post(f"{url}long-day/", {"day": "1", "calendar_days": "2"})
    assert refused.status_code == 409  # the service's WrongState, said inside the form
    assert form_error(refused.content.decode()) == "Первая половина дня 1 прошла: его длину уже нельзя изменить."
    assert pending(game) == before
    with time_machine.travel(DAY1 + H, tick=False):
        done = client.post(f"{url}long-day/", {"day": "1", "calendar_days": "2"}, follow=True)
    assert done.redirect_chain == [(url, 302)]
    assert pending(game) == [
        ("night_start", {"day": 1}, utc(2027, 3, 2, 21)),
        ("night_end", {"night": 1}, utc(2027, 3, 3, 6)),
        ("daily_post_draft", {"day": 2}, utc(2027, 3, 3, 6)),
        ("day_start", {"day": 2}, utc(2027, 3, 3, 7)),
    ]
    assert shown_due(done.content.decode()) == ["2027-03-03 00:00 MSK", "2027-03-03 09:00 MSK",
                                                "2027-03-03 09:00 MSK", "2027-03-03 10:00 MSK"]


def test_tribune_voting_refused_in_the_form_then_rescheduled_with_its_events_L_DAY_3(built):
    game = built.game
    advance(game, utc(2027, 3, 2, 7))  # day 2: first half until 17:00 MSK (14:00 UTC)
    city = City.objects.get(game=game, number=1)
    url = f"/staff/cities/{city.public_id}/schedule-voting/"
    client = client_of(built.staff["tribune1"])

    def voting_events():
        return sorted(ScheduledEvent.objects.filter(game=game, kind__in=["voting_open", "voting_close"],
                                                    done_at__isnull=True, cancelled_at__isnull=True)
                      .values_list("kind", "due_at"))

    with time_machine.travel(utc(2027, 3, 2, 8), tick=False):
        first = client.post(url, {"opens_at": "2027-03-02T18:00", "closes_at": "2027-03-02T22:00"}, follow=True)
    assert first.redirect_chain == [(url, 302)]
    assert voting_events() == [("voting_close", utc(2027, 3, 2, 19)), ("voting_open", utc(2027, 3, 2, 15))]
    with time_machine.travel(utc(2027, 3, 2, 14), tick=False):
        refused = client.post(url, {"opens_at": "2027-03-02T19:00", "closes_at": "2027-03-02T23:00"})
    assert refused.status_code == 200
    assert form_error(refused.content.decode()) == (
        "Время голосования объявляется в первой половине дня, до 2 марта 2027 г. 17:00 MSK.")
    assert voting_events() == [("voting_close", utc(2027, 3, 2, 19)), ("voting_open", utc(2027, 3, 2, 15))]
    with time_machine.travel(utc(2027, 3, 2, 9), tick=False):
        moved = client.post(url, {"opens_at": "2027-03-02T19:00", "closes_at": "2027-03-02T23:00"}, follow=True)
    assert voting_events() == [("voting_close", utc(2027, 3, 2, 20)), ("voting_open", utc(2027, 3, 2, 16))]
    assert shown_due(moved.content.decode()) == ["2027-03-02 19:00 MSK", "2027-03-02 23:00 MSK"]


def test_arbiter_election_refused_in_the_form_then_rescheduled_with_its_events_L_DAY_4(built):
    game = built.game
    advance(game, utc(2027, 3, 2, 7))
    city = City.objects.get(game=game, number=1)
    LepraSeat.objects.filter(city=city).update(is_judge=False)
    url = f"/staff/games/{game.slug}/schedule-election/"
    client = client_of(built.staff["arbiter"])

    def election_events():
        return sorted(ScheduledEvent.objects.filter(game=game, kind__in=["election_open", "election_close"],
                                                    done_at__isnull=True, cancelled_at__isnull=True)
                      .values_list("kind", "due_at"))

    before = election_events()
    with time_machine.travel(utc(2027, 3, 2, 8), tick=False):
        refused = client.post(url, {"city": city.public_id, "opens_at": "2027-03-02T13:00", "closes_at": "2027-03-02T20:00"})
        assert refused.status_code == 200
        assert form_error(refused.content.decode()) == (
            "Выборы объявляются не менее чем за 6 ч до начала.")
        assert election_events() == before
        first = client.post(url, {"city": city.public_id, "opens_at": "2027-03-02T18:00", "closes_at": "2027-03-02T23:00"},
                            follow=True)
        assert first.redirect_chain == [(url, 302)]
        assert election_events() == [("election_close", utc(2027, 3, 2, 20)), ("election_open", utc(2027, 3, 2, 15))]
        moved = client.post(url, {"city": city.public_id, "opens_at": "2027-03-02T19:00", "closes_at": "2027-03-02T23:30"},
                            follow=True)
    assert election_events() == [("election_close", utc(2027, 3, 2, 20, 30)), ("election_open", utc(2027, 3, 2, 16))]
    assert shown_due(moved.content.decode()) == ["2027-03-02 19:00 MSK", "2027-03-02 23:30 MSK"]
