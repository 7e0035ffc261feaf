"""The staff console speaks the language of the viewer's games (DESIGN.md "Pages": Russian for Lepra, English for
M21), as the player pages do, whatever the browser asks: its own labels, the Django admin's chrome, its flash
messages after a redirect, the names of its objects (a message's time in the game's zone) and the Content-Language
header. A viewer who is staff of games of both languages gets
the browser's language (LocaleMiddleware). The request's language is given back when the console view is done."""
from __future__ import annotations

import html
import re
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import translation

from cities.services import do_create_game
from inboxes.models import Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.m21.setup_services import do_create_m21_game
from rulesets.lepra import staff_services
from tests.admin_keys import key_of
from tests.conftest import fresh
from tests.staff.conftest import NOW
from tests.support.staff_console import _opened_demand, flashed

pytestmark = pytest.mark.django_db

LANG = re.compile(r'<html lang="([a-z-]+)"')
RUSSIAN = {"header": "Mafia Host — пульт ведущих", "index": "<h1>Ваши игры</h1>", "chrome": "Выйти"}
ENGLISH = {"header": "Mafia Host — game staff console", "index": "<h1>Your games</h1>", "chrome": "Log out"}


def make_user(name: str):
    return get_user_model().objects.create_user(name.lower(), f"{name.lower()}@example.com", "x-secret-123",
                                                display_name=name)


def browser(user, language: str) -> Client:
    """A client whose browser asks for ``language`` (Accept-Language), logged in as ``user``."""
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    return client


def lepra_procurator():
    user = make_user("LepraProcurator")
    do_create_game(title="Лепра", slug="lepra-lang", acting_user=user)
    return user


def m21_host():
    user = make_user("M21Host")
    do_create_m21_game(title="Mafia Wars", slug="m21-lang", acting_user=user)
    return user


def shown_in(response, texts: dict[str, str], language: str) -> None:
    body = response.content.decode()
    assert response.status_code == 200
    assert LANG.findall(body) == [language]
    assert response.headers["Content-Language"] == language
    for key, text in texts.items():
        assert text in body, (key, text)


def test_a_lepra_console_page_is_russian_with_an_english_browser():
    client = browser(lepra_procurator(), "en")
    shown_in(client.get("/staff/"), RUSSIAN, "ru")
    changelist = client.get("/staff/inboxes/inbox/")
    # The Django admin's own chrome: "Select %s to view", "Log out".
    shown_in(changelist, {"title": "<title>Выберите ящик для просмотра | Mafia Host — пульт ведущих</title>",
                          "chrome": "Выйти"}, "ru")
    assert "Log out" not in changelist.content.decode()
    # A flash message after the admin's redirect (an action posted with nothing selected) is Russian too.
    response = client.post("/staff/inboxes/inbox/", {"action": "kill_inboxes", "index": "0"}, follow=True)
    assert response.redirect_chain == [("/staff/inboxes/inbox/", 302)]
    assert flashed(response) == [("Чтобы произвести действия над объектами, необходимо их выбрать. Объекты не были "
                                  "изменены.")]
    # The request's own language (the browser's) is given back once the console view is done.
    assert translation.get_language() == "en"


def test_an_m21_host_console_page_is_english_with_a_russian_browser():
    client = browser(m21_host(), "ru")
    shown_in(client.get("/staff/"), ENGLISH, "en")
    assert "Выйти" not in client.get("/staff/").content.decode()
    assert translation.get_language() == "ru"


@pytest.mark.parametrize("language, texts", [("en", ENGLISH), ("ru", RUSSIAN)])
def test_staff_of_games_of_both_languages_gets_the_browsers_language(language, texts):
    user = lepra_procurator()
    do_create_m21_game(title="Mafia Wars", slug="m21-both", acting_user=user)
    shown_in(browser(user, language).get("/staff/"), texts, language)


def test_a_membership_is_named_in_the_games_language_on_the_lepra_console(demo):
    membership = Membership.objects.select_related("resident", "inbox").filter(
        inbox__game=demo.game, inbox__kind=LepraInboxKind.CITY, inbox__city__number=1, state=MembershipState.MEMBER,
        resident=demo.seat("honest")).get()
    body = browser(demo.procurator, "en").get(
        f"/staff/inboxes/membership/{key_of(membership)}/change/").content.decode()
    name = html.escape(f"{membership.resident.name} в ящике «{membership.inbox.title}»: участник")
    assert f"<title>{name} | Просмотр: участие | Mafia Host — пульт ведущих</title>" in body


def test_a_message_is_named_with_its_time_in_the_games_zone_on_the_console(demo):
    message = Message.objects.filter(inbox__game=demo.game, inbox__kind=LepraInboxKind.OFFICE).order_by("pk").first()
    local = message.received_at.astimezone(ZoneInfo(demo.game.time_zone))
    body = browser(demo.procurator, "en").get(f"/staff/inboxes/message/{key_of(message)}/change/").content.decode()
    name = html.escape(f"{message.author_name} @ {local:%Y-%m-%d %H:%M:%S} MSK")
    assert demo.game.time_zone == "Europe/Moscow"
    assert f"<title>{name} | Просмотр: сообщение | Mafia Host — пульт ведущих</title>" in body


def test_the_impeachment_inbox_is_titled_in_the_games_language_whatever_the_callers_L_IMPEACH_2(demo):
    # The console used to title it in the browser's language; a stored title is the game's (Russian for Lepra).
    demand = _opened_demand(demo)
    with translation.override("en"):
        inbox = staff_services.do_open_impeachment_inbox(demand, acting_user=fresh(demo.procurator), now=NOW)
    assert inbox.title == f"Импичмент трибуна города {demand.city.name}"
