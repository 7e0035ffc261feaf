"""The M21 host console on /staff/ leaks nothing (RULES.md M-SETUP-4, L-STAFF-5, L-INBOX-20): for every persona who
is not a host of the game (a living player, a mafioso, an imprisoned or dead player, a spectator, another M21
game's host, a Lepra Procurator, a logged-out visitor) the console page, its every action and the dashboard show
no role, no count of the night and change nothing; the host and the co-host get the page."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from cities.models import GameEvent
from cities.services import do_create_game
from inboxes.models import Message
from rulesets.m21 import night_services as ns
from rulesets.m21 import services
from rulesets.m21.roles import ROLES
from tests.rulesets.m21.day_helpers import build_game, make_user

pytestmark = pytest.mark.django_db

#: The console's buttons (each its own URL, ``m21_console_<name>``) and what each posts.
ACTIONS = (("extend", {"extend-hours": "2"}), ("shorten", {"shorten-hours": "2"}), ("vote_count", {}),
           ("prod", {}), ("thread_public", {}), ("thread_members_only", {}),
           ("modkill", {"modkill-player": "PLAYER", "confirmed": "yes"}),
           ("replace", {"replace-player": "PLAYER", "replace-username": "spectator", "confirmed": "yes"}),
           ("volunteer", {"volunteer-player": "PLAYER", "volunteer-volunteer": "1", "confirmed": "yes"}))


@pytest.fixture
def night_table():
    """A 7-player game on night 1 (a citizen imprisoned on day 1) with a cop's investigation standing, plus a
    spectator account, another M21 game with its own host, and the roles' secrets to look for."""
    table = build_game()
    victim = table.names_of_roles("citizen")[0]
    for name in [n for n in table.users if n != victim][:4]:
        table.post(name, f"##VOTE {victim}\n##END")
    table.run_clock(table.now + timedelta(minutes=1))
    cop = table.name_of_role("cop")
    ns.do_submit_night_action(table.game, option="investigate", target=table.name_of_role("godfather"),
                              acting_user=table.users[cop], now=table.tick())
    table.other_host = make_user("OtherHost")
    services.do_create_m21_game(title="Other Wars", slug="m21-other", acting_user=table.other_host, now=table.now)
    table.spectator = make_user("Spectator")
    table.victim = victim
    return table


def personas(table, lepra_procurator) -> dict[str, object]:
    return {"player": table.users[table.name_of_role("cop")],
            "mafioso": table.users[table.name_of_role("godfather")],
            "imprisoned": table.users[table.victim], "spectator": table.spectator,
            "other_game_host": table.other_host, "lepra_procurator": lepra_procurator, "anonymous": None}


def client_of(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def secrets_of(table) -> list[str]:
    """Texts only the hosts may see here: every role's name next to its player, the night's count line."""
    return [f"{ROLES[role].name}</td>" for role in set(table.roles.values())] + [
        "Night actions submitted", 'data-need="m21_night_actions"']


def test_nobody_but_the_hosts_reaches_the_console_or_its_actions_M_SETUP_4(night_table):
    table = night_table
    procurator = make_user("LepraProc")
    do_create_game(title="Лепра", slug="lepra-other", acting_user=procurator, now=table.now)
    url = reverse("staff_admin:m21_console", args=[table.game.slug])
    player_key = table.seat("Bob").public_id
    events = GameEvent.objects.filter(game=table.game).count()
    messages = Message.objects.filter(inbox__game=table.game).count()
    with time_machine.travel(table.tick(), tick=False):
        for name, user in personas(table, procurator).items():
            client = client_of(user)
            page = client.get(url, follow=True)
            expected = {"anonymous": 200, "other_game_host": 404, "lepra_procurator": 404}.get(name, 403)
            assert page.status_code == expected, name
            if name == "anonymous":
                assert page.redirect_chain[-1][0].startswith(reverse("account_login")), name
            body = page.content.decode()
            for secret in secrets_of(table):
                assert secret not in body, (name, secret)
            for button, data in ACTIONS:
                data = {k: (player_key if v == "PLAYER" else v) for k, v in data.items()}
                answer = client.post(reverse(f"staff_admin:m21_console_{button}", args=[table.game.slug]), data)
                assert answer.status_code in (302, 403, 404), (name, data)
                assert answer.status_code != 302 or answer["Location"].startswith(
                    (reverse("account_login"), reverse("staff_admin:login"))), (name, data)
            dashboard = client.get(reverse("staff_admin:index"), follow=True).content.decode()
            for secret in secrets_of(table):
                assert secret not in dashboard, (name, secret)
            assert url not in dashboard, name
    assert GameEvent.objects.filter(game=table.game).count() == events
    assert Message.objects.filter(inbox__game=table.game).count() == messages


def test_the_host_and_the_cohost_get_the_console_with_the_night_by_count_M_SETUP_4(night_table):
    table = night_table
    url = reverse("staff_admin:m21_console", args=[table.game.slug])
    with time_machine.travel(table.tick(), tick=False):
        for user in (table.host, table.cohost):
            page = client_of(user).get(url)
            body = page.content.decode()
            assert page.status_code == 200
            assert 'data-need="m21_night_actions" data-count="1"' in body
            assert f"{ROLES['godfather'].name}</td>" in body  # the hosts know every role (M-SETUP-4)
            dashboard = client_of(user).get(reverse("staff_admin:index")).content.decode()
            assert url in dashboard and 'data-need="m21_night_actions" data-count="1"' in dashboard
        # the other game's host sees their own console, never this game's count
        other = client_of(table.other_host).get(reverse("staff_admin:index")).content.decode()
        assert url not in other and 'data-need="m21_night_actions"' not in other
