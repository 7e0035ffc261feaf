"""The shared pages of an M21 game follow its ruleset (M-SETUP-1, M-SETUP-3, M-VOTE-6, L-ARCH-3; DESIGN.md "Pages":
English for M21): no Lepra section (touring, cities' day pages, score by city) is shown, a Lepra page of an M21
game is a missing page, the refusal of a post by an eliminated player names M21's spectators' thread, and an
M21 player's own pages (notifications, consents, mentions, settings, the 403 page, log in) speak English."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core.exceptions import PermissionDenied
from django.test import Client, RequestFactory
from django.urls import reverse

from cities.i18n import account_language, permission_denied
from cities.models import Game, GameStatus
from inboxes.models import Inbox
from inboxes.posting import do_post_message
from kernel.errors import RuleViolation
from rulesets.m21 import console_services, host_services
from rulesets.m21.kinds import M21InboxKind
from tests.rulesets.m21.day_helpers import build_game, make_user

pytestmark = pytest.mark.django_db


def get(table, url: str, user=None, **headers):
    client = Client(**headers)
    if user is not None:
        client.force_login(user)
    with time_machine.travel(table.tick(), tick=False):
        return client.get(url)


def hammer(table, target: str) -> None:
    living = [n for n in table.users if table.seat(n).status == "alive"]
    for name in [n for n in living if n != target][:len(living) // 2 + 1]:
        table.post(name, f"##VOTE {target}\n##END")


def test_the_m21_game_page_shows_no_lepra_section_M_SETUP_1():
    table = build_game()
    body = get(table, reverse("game_detail", args=[table.game.slug]), table.users["Alice"]).content.decode()
    assert "The day: vote count, deadline, powers" in body
    assert "Touring rotation" not in body and "Ротация" not in body
    assert reverse("city_day", args=[table.game.slug, 1]) not in body
    assert reverse("night_page", args=[table.game.slug]) not in body


def test_lepra_pages_of_an_m21_game_are_missing_pages_M_SETUP_1():
    table = build_game()
    slug = table.game.slug
    for url in (reverse("city_day", args=[slug, 1]), reverse("night_page", args=[slug]),
                reverse("nominate", args=[slug]), reverse("impeachment", args=[slug]),
                reverse("mafia_role", args=[slug]), reverse("no_confidence", args=[slug]),
                reverse("draw_verification", args=[slug]), reverse("game_setup", args=[slug]),
                reverse("schedule_post", args=[slug])):
        for user in (table.users["Alice"], table.host):
            response = get(table, url, user)
            assert response.status_code == 404, url
            assert "Procurator" not in response.content.decode() and "judge" not in response.content.decode()


def test_an_eliminated_player_is_sent_to_the_spectators_thread_M_SETUP_3_M_VOTE_6():
    table = build_game()
    hammer(table, "Bob")
    assert table.seat("Bob").status == "imprisoned"
    with pytest.raises(RuleViolation) as refused:
        do_post_message(table.thread, "I was framed!", acting_user=table.users["Bob"], now=table.tick())
    assert str(refused.value) == ("Eliminated players may not post in the game thread: talk in the spectators' "
                                  "thread (M-VOTE-6, M-SETUP-3).")
    citizen = next(n for n in table.names_of_roles("citizen") if table.seat(n).status == "alive")
    console_services.do_modkill_m21_player(table.seat(citizen), reveal_role=False, acting_user=table.host,
                                           now=table.tick())
    table.game.refresh_from_db()
    assert table.game.status == GameStatus.RUNNING
    with pytest.raises(RuleViolation) as refused:
        do_post_message(table.thread, "Boo.", acting_user=table.users[citizen], now=table.tick())
    assert str(refused.value) == ("Eliminated players may not post in the game thread: talk in the spectators' "
                                  "thread (M-SETUP-3).")


def test_the_m21_archive_has_no_score_by_city_and_words_its_inboxes_its_own_way_L_ARCH_3():
    table = build_game()
    godfather, hooker = table.name_of_role("godfather"), table.name_of_role("hooker")
    hammer(table, godfather)
    table.run_clock(table.now + timedelta(days=1))
    hammer(table, hooker)
    table.game.refresh_from_db()
    assert table.game.status == GameStatus.FINISHED
    body = get(table, reverse("archive_game", args=[table.game.slug])).content.decode()
    assert 'data-section="cast"' in body
    assert "Score by city" not in body and "the office and the bar" not in body
    assert '<p class="log-in-to-open">Log in to open the mafia thread.</p>' in body


def test_an_m21_players_own_pages_speak_english_M_SETUP_1():
    table = build_game()
    alice = table.users["Alice"]
    assert account_language(alice) == "en"
    pages = {"archive_notifications": "<h1>Notifications</h1>", "archive_consents": "<h1>My consents</h1>",
             "archive_mentions": "Mentions", "archive_notification_settings": "Notification settings"}
    for name, english in pages.items():
        body = get(table, reverse(name), alice, HTTP_ACCEPT_LANGUAGE="ru").content.decode()
        assert english in body, name
        assert '<html lang="en"' in body, name
    request = RequestFactory().get("/me/notifications/")
    request.user = alice
    refused = permission_denied(request, PermissionDenied())
    assert refused.status_code == 403 and "<h1>Not allowed</h1>" in refused.content.decode()
    game_page = reverse("m21_game", args=[table.game.slug])
    login = get(table, f"{reverse('account_login')}?next={game_page}", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert '<html lang="en"' in login and "Войти" not in login


def test_an_m21_players_page_names_no_city_and_words_the_side_as_m21_does_M_SETUP_1_M_VOTE_6():
    table = build_game()
    citizen = table.names_of_roles("citizen")[0]
    host_services.do_remove_m21_player(table.seat(citizen), acting_user=table.host, reveal_role=True,
                                       now=table.tick())
    page = get(table, reverse("resident_detail", args=[table.game.slug, table.seat(citizen).public_id]))
    body = page.content.decode()
    assert page.status_code == 200
    assert '<dd data-fact="alignment:honest">Town</dd>' in body
    assert "<dt>City</dt>" not in body and ">honest<" not in body


def test_a_visitor_sent_to_log_in_from_the_m21_host_console_reads_it_in_english_M_SETUP_1():
    table = build_game()
    console = reverse("staff_admin:m21_console", args=[table.game.slug])
    sent = get(table, console, HTTP_ACCEPT_LANGUAGE="ru")
    assert sent.status_code == 302
    login = get(table, sent["Location"], HTTP_ACCEPT_LANGUAGE="ru")
    if login.status_code == 302:  # the staff console's log-in hands over to the site's
        login = get(table, login["Location"], HTTP_ACCEPT_LANGUAGE="ru")
    body = login.content.decode()
    assert login.status_code == 200 and '<html lang="en"' in body and "Войти" not in body


def test_an_m21_player_logging_in_from_the_russian_front_page_is_greeted_in_english_M_SETUP_1():
    """allauth's "signed in" flash is shown on the next page (a game's): it is written in the language of the
    account's games, not in that of the log-in page (Russian here: no ``?next=``, a Russian browser)."""
    table = build_game()
    client = Client(HTTP_ACCEPT_LANGUAGE="ru")
    with time_machine.travel(table.tick(), tick=False):
        login = client.get(reverse("account_login"))
        assert '<html lang="ru"' in login.content.decode()
        response = client.post(reverse("account_login"), {"login": "alice", "password": "x-secret-123"},
                               follow=True)
    assert response.status_code == 200
    assert [str(m) for m in response.context["messages"]] == ["Successfully signed in as alice."]


def test_a_body_over_the_upload_limit_is_refused_in_the_language_of_the_players_game(settings):
    """Django refuses a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` before any view runs (400): the page says so, in
    the language of the poster's games (an M21 player: English, whatever the browser asks), and nothing is stored."""
    from django.contrib.auth import get_user_model

    from tests.conftest import load_personas

    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2_000
    table = build_game()
    before = table.thread.messages.count()
    url = reverse("inbox_thread", args=[table.thread.public_id])
    client = Client(HTTP_ACCEPT_LANGUAGE="ru")
    client.force_login(table.users["Alice"])
    with time_machine.travel(table.tick(), tick=False):
        response = client.post(url, {"text": "x" * 5_000})
    body = response.content.decode()
    assert response.status_code == 400
    assert '<html lang="en"' in body and "The request is too large: at most 2.0\xa0KB may be sent at once." in body
    assert table.thread.messages.count() == before
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 200_000
    lepra_player = get_user_model().objects.get(pk=load_personas().honest.pk)
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(lepra_player)
    response = client.post(url, {"text": "x" * 300_000})
    assert response.status_code == 400
    assert "Запрос слишком велик: за один раз можно отправить не более 195,3\xa0КБ." in response.content.decode()


def test_an_account_in_games_of_two_languages_keeps_the_browsers_language():
    table = build_game()
    lepra = Game.objects.create(title="Lepra", slug="lepra-x", ruleset="lepra")
    lepra.signups.create(user=table.users["Alice"], signed_up_at=table.tick())
    assert account_language(table.users["Alice"]) is None
    assert account_language(make_user("Nobody")) is None


def test_an_m21_thread_page_links_no_lepra_staff_page_M_SETUP_1():
    table = build_game()
    mafioso = next(n for n in table.users if table.seat(n).alignment == "mafia")
    for kind in (M21InboxKind.MAFIA_THREAD, M21InboxKind.ROLE_PM, M21InboxKind.GAME_THREAD):
        inbox = Inbox.objects.filter(game=table.game, kind=kind).filter(
            resident=table.seat(mafioso) if kind == M21InboxKind.ROLE_PM else None).get()
        for user in (table.users[mafioso], table.host):
            response = get(table, reverse("inbox_thread", args=[inbox.public_id]), user)
            assert (response.status_code, response.context["thread_links"]) == (200, []), (kind, user)
            body = response.content.decode()
            assert "mafia-role-link" not in body and "no-confidence-link" not in body
