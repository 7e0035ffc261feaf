"""The end of an M21 game (M-WIN-1) and the deal verified after it (M-SETUP-1, the provable draw)."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from cities.models import GameStatus, ScheduledEvent
from rulesets.m21 import selectors, services
from rulesets.m21.models import M21Game
from tests.rulesets.m21.day_helpers import build_game

pytestmark = pytest.mark.django_db


def test_imprisoning_the_last_mafioso_wins_for_the_town_and_publishes_the_deal_M_WIN_1():
    table = build_game(setup={"citizen": 5, "cop": 1, "goon": 1}, slug="m21-win", cop_insanity=1)
    goon = table.name_of_role("goon")
    voters = [n for n in table.users if n != goon][:4]
    for name in voters:
        table.post(name, f"##VOTE {goon}\n##END")
    table.game.refresh_from_db()
    assert table.game.status == GameStatus.FINISHED
    assert not ScheduledEvent.objects.filter(game=table.game, done_at__isnull=True, cancelled_at__isnull=True).exists()
    end = table.thread.messages.get(body__startswith="**The game is over: the town wins.**").body
    cop = table.name_of_role("cop")
    assert f"- {cop}: Cop (insane)" in end and f"- {goon}: Mafia goon" in end
    check = selectors.deal_check(table.game)
    settings = M21Game.objects.get(game=table.game)
    assert (check.verified, check.salt, check.commitment) == (True, settings.deal_salt, settings.deal_commitment)
    assert check.lists["goon"] == [goon] and check.lists["insane_cop"] == [cop]
    page = Client().get(reverse("m21_game", args=[table.game.slug])).content.decode()
    assert settings.deal_salt in page and "The deal checks out" in page


def test_the_deal_stays_secret_while_the_game_runs_M_SETUP_1():
    table = build_game(slug="m21-secret-deal")
    settings = M21Game.objects.get(game=table.game)
    assert selectors.deal_check(table.game) is None
    client = Client()
    client.force_login(table.users["Alice"])
    page = client.get(reverse("m21_game", args=[table.game.slug])).content.decode()
    assert settings.deal_commitment in page and settings.deal_salt not in page


def test_the_mafia_reaching_half_wins_M_WIN_1():
    table = build_game(setup={"citizen": 3, "goon": 2}, names=("Alice", "Bob", "Carol", "Dave", "Erin"),
                       slug="m21-mafia-win")
    town = table.names_of_roles("citizen")
    services.do_remove_m21_player(table.seat(town[0]), acting_user=table.host, now=table.tick())
    table.game.refresh_from_db()
    assert table.game.status == GameStatus.FINISHED
    assert table.thread.messages.filter(body__startswith="**The game is over: the mafia wins.**").exists()
