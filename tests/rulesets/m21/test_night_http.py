"""The M21 night page over HTTP (RULES.md M-NIGHT-1, M-MAFIA-1, M-MAFIA-2): exactly the legal actions and
targets, submissions and refusals, and the leak suite: nobody sees another player's submissions, only the living
mafia see the tally and the stash."""
from __future__ import annotations

from html import unescape

import pytest
import time_machine
from django.urls import reverse

from kernel.errors import InvalidInput
from rulesets.m21 import night_services as ns
from rulesets.m21.console_services import do_modkill_m21_player
from rulesets.m21.night_models import M21NightAction
from tests.rulesets.m21.night_helpers import mafia_post, to_night

from .day_helpers import build_game

pytestmark = pytest.mark.django_db


@pytest.fixture
def table():
    return build_game()


def _page(client, table, user=None, data=None, *, to: str = "m21_night_submit"):
    """GET the night page, or POST ``data`` to its button's own URL ``to`` (a night action by default), as ``user``
    (default: the logged-in one) at the table's clock."""
    if user is not None:
        client.force_login(user)
    with time_machine.travel(table.tick(), tick=False):
        if data is None:
            return client.get(reverse("m21_night_page", args=[table.game.slug]))
        return client.post(reverse(to, args=[table.game.slug]), data)


def test_the_night_page_lists_exactly_the_legal_actions_and_targets_M_NIGHT_1(client, table):
    victim = table.names_of_roles("citizen")[0]
    to_night(table, victim)
    cop = table.name_of_role("cop")
    response = _page(client, table, table.users[cop])
    assert response.status_code == 200
    assert "private" in response["Cache-Control"]
    html = response.content.decode()
    assert html.count('data-option="') == 1 and 'data-option="investigate"' in html
    targets = sorted(n for n in table.users if n not in (cop, victim))
    option = html.split('data-option="investigate"')[1].split("</li>")[0]
    assert sorted(option.split("</strong>: ")[1].replace('<span class="target">', "").replace("</span>", "")
                  .split(", ")) == targets


def test_a_submission_through_the_page_and_a_refusal_with_the_reason_M_NIGHT_1(client, table):
    victim = table.names_of_roles("citizen")[0]
    to_night(table, victim)
    cop, hooker = table.name_of_role("cop"), table.name_of_role("hooker")
    ok = _page(client, table, table.users[cop], {"option": "investigate", "target": hooker})
    assert ok.status_code == 302
    row = M21NightAction.objects.get(seat=table.seat(cop))
    assert (row.action, row.target.name) == ("investigate", hooker)
    bad = _page(client, table, None, {"option": "investigate", "target": victim})
    assert bad.status_code == 400
    page = _page(client, table)
    assert f'<li data-standing="role">Investigate → {hooker}' in page.content.decode()
    gone = _page(client, table, None, {"option": "role"}, to="m21_night_withdraw")
    assert gone.status_code == 302
    assert ns.current_choices(ns.open_night(table.game), table.seat(cop)) == {}
    # Nothing left to take back: the withdrawal's own form refuses it, with its reason, and changes nothing.
    again = _page(client, table, None, {"option": "role"}, to="m21_night_withdraw")
    assert again.status_code == 409 and "You have no such action standing tonight." in again.content.decode()
    assert M21NightAction.objects.filter(seat=table.seat(cop)).count() == 2  # the submission and its withdrawal
    page = _page(client, table).content.decode()
    assert 'name="form"' not in page and 'name="withdraw"' not in page
    for name in ("m21_night_submit", "m21_night_withdraw", "m21_night_stash"):
        assert client.get(reverse(name, args=[table.game.slug])).status_code == 405


def test_nobody_sees_another_players_submission_on_the_night_page(client, table):
    to_night(table)
    cop, hooker = table.name_of_role("cop"), table.name_of_role("hooker")
    godfather = table.name_of_role("godfather")
    ns.do_submit_night_action(table.game, option="investigate", target=godfather, acting_user=table.users[cop],
                              now=table.tick())
    ns.do_submit_night_action(table.game, option="roleblock", target=cop, acting_user=table.users[hooker],
                              now=table.tick())
    mafia_post(table, hooker, f"kill {cop}")
    for name, user in table.users.items():
        client.force_login(user)
        html = _page(client, table).content.decode()
        assert ("→ " + godfather in html) == (name == cop), name
        assert (f"Roleblock → {cop}" in html) == (name == hooker), name
        assert ("Kill vote" in html) == (name in (godfather, hooker)), name
        assert ("Tonight&#x27;s stash item" in html or "Tonight's stash item" in html) == (
            name in (godfather, hooker)), name
    client.logout()
    for user in (None, table.host):
        if user is not None:
            client.force_login(user)
        html = _page(client, table).content.decode()
        assert "Kill vote" not in html and "→ " not in html


def test_the_mafia_assign_the_stash_item_from_the_page_M_MAFIA_2(client, table):
    to_night(table)
    godfather, hooker = table.name_of_role("godfather"), table.name_of_role("hooker")
    response = _page(client, table, table.users[godfather], {"item": "binoculars",
                                                            "holder": hooker}, to="m21_night_stash")
    assert response.status_code == 302
    night = ns.open_night(table.game)
    assert (night.stash_assignment.item, night.stash_assignment.holder.name) == ("binoculars", hooker)
    cop = table.name_of_role("cop")
    refused = _page(client, table, table.users[cop], {"item": "gun", "holder": hooker}, to="m21_night_stash")
    assert refused.status_code == 400


def test_the_night_page_of_a_lepra_game_does_not_exist(client, table, django_user_model):
    from cities.models import Game
    Game.objects.filter(pk=table.game.pk).update(ruleset="lepra")
    assert _page(client, table).status_code == 404


def test_a_dead_or_imprisoned_target_is_refused_for_what_it_is_M_NIGHT_1(client, table):
    victim = table.names_of_roles("citizen")[0]
    to_night(table, victim)
    cop = table.name_of_role("cop")
    bad = _page(client, table, table.users[cop], {"option": "investigate", "target": victim})
    assert bad.status_code == 400
    reason = f"{victim} is {table.seat(victim).status}: choose one of the players offered for this action."
    assert reason in bad.content.decode().replace("&#x27;", "'")
    assert "That action is not open to you tonight." not in bad.content.decode()
    with pytest.raises(InvalidInput, match=f"^{reason}$"):
        ns.do_submit_night_action(table.game, option="investigate", target=victim, acting_user=table.users[cop],
                                  now=table.tick())
    dead = table.names_of_roles("citizen")[1]
    do_modkill_m21_player(table.seat(dead), reveal_role=False, acting_user=table.host, now=table.tick())
    refused = _page(client, table, None, {"option": "investigate", "target": dead})
    assert f"{dead} is dead: choose one of the players offered for this action." in refused.content.decode()
    unknown = _page(client, table, None, {"option": "investigate", "target": "Nobody"})
    assert "Choose one of the players offered for this action." in unknown.content.decode()


def test_the_mafia_see_their_stash_assignment_and_a_second_one_replaces_it_visibly_M_MAFIA_2(client, table):
    to_night(table)
    godfather, hooker = table.name_of_role("godfather"), table.name_of_role("hooker")
    before = _page(client, table, table.users[godfather]).content.decode()
    assert "Nothing is assigned tonight." in before
    assert "One stash item per night: a later assignment tonight replaces this one." in before
    first = _page(client, table, None, {"item": "gun", "holder": hooker}, to="m21_night_stash")
    assert first.status_code == 302
    page = unescape(client.get(first["Location"]).content.decode())
    assert f"Assigned the Gun to {hooker}, collected at the end of the night." in page
    assert f"Tonight's assignment: the Gun to {hooker}, collected at the end of the night." in page
    assert '<option value="gun" selected>' in page and f'<option value="{hooker}" selected>' in page
    assert "assigning again replaces tonight's assignment" in page and ">Assign instead</button>" in page
    with time_machine.travel(table.tick(), tick=False):
        second = client.post(reverse("m21_night_stash", args=[table.game.slug]),
                             {"item": "whiskey", "holder": godfather}, follow=True)
    html = unescape(second.content.decode())
    assert (f"Assigned the Whiskey to {godfather}, collected at the end of the night. It replaces the Gun to "
            f"{hooker}.") in html
    assert f"Tonight's assignment: the Whiskey to {godfather}" in html
    assert '<option value="whiskey" selected>' in html and f'<option value="{godfather}" selected>' in html
    thread = mafia_thread_texts(table)
    assert thread[-1] == (f"{godfather} assigns tonight's stash item: **Whiskey** to {godfather} (collected at the "
                          f"end of the night). It replaces the Gun to {hooker}.")
    client.force_login(table.users[hooker])
    assert f"Tonight's assignment: the Whiskey to {godfather}" in unescape(_page(client, table).content.decode())
    client.force_login(table.users[table.name_of_role("cop")])
    assert "assignment" not in _page(client, table).content.decode()


def mafia_thread_texts(table) -> list[str]:
    from inboxes.models import Inbox, Message
    from rulesets.m21.kinds import M21InboxKind
    thread = Inbox.objects.get(game=table.game, kind=M21InboxKind.MAFIA_THREAD)
    return list(Message.objects.filter(inbox=thread).order_by("received_at", "id").values_list("body", flat=True))


def test_the_action_form_offers_only_the_seats_actions_and_an_item_field_only_when_needed_M_NIGHT_1(client, table):
    to_night(table)
    cop = table.name_of_role("cop")
    html = _page(client, table, table.users[cop]).content.decode()
    form = html.split('class="stacked action-form"')[1].split("</form>")[0]
    assert "My role action" not in html
    assert '<option value="role"' not in form
    assert 'name="item"' not in form
    refused = _page(client, table, None, {"option": "role", "target": ""})
    assert refused.status_code == 400
    assert "That action is not open to you tonight." in refused.content.decode()


def test_a_mafiosos_targets_list_the_town_first_and_their_partners_last_M_NIGHT_1(client, table):
    victim = table.names_of_roles("citizen")[0]
    to_night(table, victim)
    godfather, hooker = table.name_of_role("godfather"), table.name_of_role("hooker")
    html = _page(client, table, table.users[hooker]).content.decode()
    select = html.split('name="target"')[1].split("</select>")[0]
    listed = [part.split('"')[0] for part in select.split('<option value="')[1:]][1:]
    town = sorted((n for n in table.users if n not in (godfather, hooker, victim)), key=str.casefold)
    assert listed == [*town, godfather]
    option = html.split('data-option="roleblock"')[1].split("</li>")[0]
    assert option.split("</strong>: ")[1].replace('<span class="target">', "").replace("</span>", "").split(
        ", ") == [*town, godfather]
