"""M21's own words on shared pages: the recruitment page lists the signed-up players (as a forum sign-up thread
does) and the archive says "The town won." (M-WIN-1), not Lepra's line."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse

from cities.models import GameStatus
from cities.recruitment_services import do_close_signups, do_sign_up, do_withdraw_signup
from rulesets.m21 import services
from tests.rulesets.m21.night_helpers import archive_page, play_to_the_end

from .day_helpers import START, build_game, make_user

pytestmark = pytest.mark.django_db


def test_the_recruitment_page_lists_the_signed_up_players_M_SETUP_1():
    host = make_user("Host")
    now = START - timedelta(days=3)
    game = services.do_create_m21_game(title="Sign-ups", slug="m21-signups", acting_user=host, now=now)
    users = [make_user(n) for n in ("Ann", "Ben", "Cid")]
    for user in users:
        do_sign_up(game, acting_user=user, now=now)
    do_withdraw_signup(game, acting_user=users[1], now=now)
    html = Client().get(reverse("game_detail", args=[game.slug])).content.decode()
    assert '<ol class="signups"><li>Ann</li><li>Cid</li></ol>' in html
    assert "2 signed up" in html
    do_close_signups(game, acting_user=host, now=now)
    assert '<ol class="signups"><li>Ann</li><li>Cid</li></ol>' in Client().get(
        reverse("game_detail", args=[game.slug])).content.decode()


def test_after_the_deal_the_seats_replace_the_sign_up_list_M_SETUP_1():
    table = build_game(slug="m21-dealt")
    html = Client().get(reverse("game_detail", args=[table.game.slug])).content.decode()
    assert 'class="signups"' not in html
    assert all(name in html for name in table.users)


def test_the_archive_says_the_town_won_in_m21_words_M_WIN_1():
    table = build_game(slug="m21-archive-words")
    play_to_the_end(table)
    assert table.game.status == GameStatus.FINISHED
    html = archive_page(table)
    assert '<p class="winner" data-winner="town">The town won.</p>' in html
    assert "The honest residents won." not in html
