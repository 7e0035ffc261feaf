"""An error page raised inside a staff console view (a 404, a refusal by the rules, a tool the game's ruleset lacks)
speaks the language of the viewer's games, as the console's pages do, whatever the browser asks."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from rulesets.m21.setup_services import do_create_m21_game
from tests.conftest import fresh

pytestmark = pytest.mark.django_db


def _browser(user, language: str) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    return client


def _user(name: str):
    return get_user_model().objects.create_user(name.lower(), f"{name.lower()}@example.com", "x-secret-123",
                                                display_name=name)


def test_a_404_inside_a_lepra_console_view_is_russian_with_an_english_browser(demo):
    # The Arbiter is staff of the demo, but not its Procurator: the play-ban page is a 404 from inside the view.
    response = _browser(fresh(demo.arbiter), "en").get(f"/staff/games/{demo.game.slug}/play-ban/")
    assert response.status_code == 404
    body = response.content.decode()
    assert "<h1>Не найдено</h1>" in body and "Not found" not in body
    assert response.headers["Content-Language"] == "ru"


def test_a_refusal_by_the_rules_raised_inside_a_console_view_is_in_the_games_language():
    # The M21 host opens a Lepra list (voting sessions): the changelist view refuses (NotProvidedByRuleset).
    host = _user("M21Host")
    do_create_m21_game(title="Mafia Wars", slug="m21-lists", acting_user=host)
    response = _browser(host, "ru").get("/staff/lepra/votingsession/")
    assert response.status_code in (400, 403, 409)
    body = response.content.decode()
    assert "<h1>Refused</h1>" in body and "Отказано" not in body
    assert response.headers["Content-Language"] == "en"


def test_a_lepra_tool_refused_to_an_m21_host_is_english_with_a_russian_browser():
    host = _user("M21Host")
    game = do_create_m21_game(title="Mafia Wars", slug="m21-errors", acting_user=host)
    response = _browser(host, "ru").get(f"/staff/games/{game.slug}/play-ban/")
    assert response.status_code in (400, 403, 409)
    body = response.content.decode()
    assert "<h1>Refused</h1>" in body and "Отказано" not in body
    assert response.headers["Content-Language"] == "en"
