"""The day actions of roles and items from the M21 game page (RULES.md M-ROLE jailbreaker, coroner, reporter;
M-MAFIA-2): each offered only to whom it belongs, posted through the page, refused with the service's reason."""
from __future__ import annotations

from html import unescape

import pytest
import time_machine
from django.urls import reverse

from cities.models import LifeStatus
from inboxes.models import Message
from tests.rulesets.m21.night_helpers import role_pm_texts
from tests.rulesets.m21.roles_helpers import CORONER_SETUP, JAIL_SETUP, SETUP, _busted_out, give

from .day_helpers import build_game

pytestmark = pytest.mark.django_db


def _get(client, table, user):
    client.force_login(user)
    with time_machine.travel(table.tick(), tick=False):
        return client.get(reverse("m21_game", args=[table.game.slug])).content.decode()


def _post(client, table, action, data, htmx=False):
    with time_machine.travel(table.tick(), tick=False):
        return client.post(reverse("m21_day_action", args=[table.game.slug, action]), data,
                           headers={"HX-Request": "true"} if htmx else {})


def test_the_busted_out_prisoner_writes_to_the_jailbreaker_from_the_game_page_M_ROLE_jailbreaker(client):
    table = build_game(setup=JAIL_SETUP)
    prisoner = _busted_out(table)
    assert "a message to the Jailbreaker" in _get(client, table, table.users[prisoner])
    refused = _post(client, table, "bust_out_message", {"text": " ".join(["w"] * 21)}, htmx=True)
    assert refused.status_code == 400
    assert not Message.objects.filter(body__contains="whom you busted out").exists()
    assert _post(client, table, "bust_out_message", {"text": "the cop is Bob"}).status_code == 302
    jailbreaker = table.name_of_role("jailbreaker")
    assert f"**A message from {prisoner}, whom you busted out:** the cop is Bob" in role_pm_texts(table, jailbreaker)
    assert "a message to the Jailbreaker" not in _get(client, table, table.users[prisoner])
    for name in table.users:
        if name != prisoner:
            assert "a message to the Jailbreaker" not in _get(client, table, table.users[name]), name


def test_the_coroner_and_the_gun_from_the_game_page_M_ROLE_coroner_M_MAFIA_2(client):
    table = build_game(setup=CORONER_SETUP)
    coroner, goon = table.name_of_role("coroner"), table.name_of_role("goon")
    victim = table.names_of_roles("citizen")[0]
    give(table, goon, "gun")
    assert "Fire your gun" in _get(client, table, table.users[goon])
    assert "Fire your gun" not in _get(client, table, table.users[coroner])
    client.force_login(table.users[goon])
    assert _post(client, table, "gun", {"target": victim, "confirmed": "yes"}).status_code == 302
    assert table.seat(victim).status == LifeStatus.DEAD
    page = _get(client, table, table.users[coroner])
    assert f'<option value="{victim}">{victim}</option>' in page and "Conduct the post mortem" in page
    assert _post(client, table, "post_mortem", {"target": victim}).status_code == 302
    assert f"Post mortem of {victim}: they were killed by the Mafia goon." in role_pm_texts(table, coroner)
    assert _post(client, table, "post_mortem", {"target": victim}, htmx=True).status_code == 409
    assert _post(client, table, "nonsense", {}).status_code == 404


def test_the_reporters_extra_from_the_game_page_M_ROLE_reporter(client):
    table = build_game(setup=SETUP)
    reporter = table.name_of_role("reporter")
    assert "Publish the extra" in _get(client, table, table.users[reporter])
    assert _post(client, table, "extra", {"text": "red hat"}).status_code == 302
    assert Message.objects.filter(inbox=table.thread, body="**EXTRA, EXTRA!** red hat").count() == 1


def test_the_gun_fires_only_at_a_target_the_page_offers_M_ITEM_1(client):
    """The gun's picker is a form field over the living players (legal choices only): a name the page does not
    offer (the shooter, a dead player, nonsense) is the picker's error, a 400, and nobody is shot."""
    table = build_game(setup=CORONER_SETUP)
    goon = table.name_of_role("goon")
    give(table, goon, "gun")
    page = _get(client, table, table.users[goon])
    assert 'for="id_gun_target"' in page and f'<option value="{goon}">' not in page
    for bad in (goon, "Nobody", ""):
        assert _post(client, table, "gun", {"target": bad}, htmx=True).status_code == 400, bad
    assert {table.seat(name).status for name in table.users} == {LifeStatus.ALIVE}


def test_the_gun_asks_for_a_confirmation_before_it_fires_M_ITEM_1(client):
    table = build_game(setup=CORONER_SETUP)
    goon = table.name_of_role("goon")
    victim = table.names_of_roles("citizen")[0]
    give(table, goon, "gun")
    client.force_login(table.users[goon])
    asked = _post(client, table, "gun", {"target": victim})
    html = unescape(asked.content.decode())
    assert asked.status_code == 200
    assert "Fire your gun?" in html
    assert f"You shoot {victim} now. Your gun has one shot, and the game thread hears it." in html
    assert f'name="target" value="{victim}"' in html and 'name="confirmed" value="yes"' in html
    assert table.seat(victim).status == LifeStatus.ALIVE
    assert _post(client, table, "gun", {"target": victim, "confirmed": "yes"}).status_code == 302
    assert table.seat(victim).status == LifeStatus.DEAD


def test_the_guns_targets_list_the_town_first_and_the_shooters_partners_last_M_ITEM_1(client):
    table = build_game(setup=CORONER_SETUP)
    goon, godfather = table.name_of_role("goon"), table.name_of_role("godfather")
    give(table, goon, "gun")
    page = _get(client, table, table.users[goon])
    select = page.split('id="id_gun_target"')[1].split("</select>")[0]
    listed = [part.split('"')[0] for part in select.split('<option value="')[1:]]
    listed = [name for name in listed if name]
    town = sorted((n for n in table.users if n not in (goon, godfather)), key=str.casefold)
    assert listed == [*town, godfather]
