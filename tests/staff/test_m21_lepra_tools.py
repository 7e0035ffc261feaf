"""The staff console's Lepra tools are absent for an M21 game and refused when posted (RULES.md M-SETUP-4, M-DEATH
rules: the dead and the imprisoned talk only in the spectators' thread): the M21 host's dashboard, residents' list
and model index offer no stage, clock, death record, voting, court, judge, stand-in, impeachment, early end,
no-confidence or play-ban tool; each posted anyway is refused in words (409, ``NotProvidedByRuleset``), never a
500, and changes nothing."""
from __future__ import annotations

import html
import random
import re
from datetime import UTC, datetime

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from cities.models import HOST_STAFF_KIND, City, GameEvent, LifeStatus, Resident, StaffRole
from inboxes.models import Inbox
from kernel.public_ids import new_public_id
from rulesets.lepra.demo import demo_account_maker
from rulesets.m21.demo import load_m21_demo
from tests.admin_keys import action_url

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 7, 8, 13, 35, tzinfo=UTC)
REFUSAL = "The m21 ruleset does not provide"


@pytest.fixture
def m21():
    with time_machine.travel(NOW, tick=False):
        demo = load_m21_demo(make_user=demo_account_maker(), rng=random.Random(2026), now=NOW)
    with time_machine.travel(NOW, tick=False):
        yield demo


def host_client(demo) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(demo.host)
    return client


def lepra_pages(game) -> list[str]:
    city = City.objects.filter(game=game).first()
    pages = [reverse("staff_admin:stage_inbox", args=[game.slug]), reverse("staff_admin:game_clock", args=[game.slug]),
             reverse("staff_admin:daily_post", args=[game.slug, 1]),
             reverse("staff_admin:grant_stand_in", args=[game.slug]),
             reverse("staff_admin:end_game_early", args=[game.slug]),
             reverse("staff_admin:record_play_ban", args=[game.slug]),
             reverse("staff_admin:schedule_election", args=[game.slug]),
             reverse("staff_admin:court_procedure", args=[game.slug]),
             reverse("staff_admin:reschedule_voting", args=[new_public_id()])]
    if city is not None:
        pages.append(reverse("staff_admin:schedule_voting", args=[city.public_id]))
    return pages


LEPRA_MODELS = ("lepra_votingsession", "lepra_proxyrequest", "lepra_suicidedeclaration", "lepra_courtcase",
                "lepra_cityjudge", "lepra_judgeelection", "lepra_removaldemand", "lepra_speechrequest",
                "staff_staffstandin", "lepra_impeachmentdemand", "lepra_noconfidencecase", "sanctions_playban")


def test_recording_a_death_from_the_residents_list_of_an_m21_game_is_refused_not_a_500(m21):
    client = host_client(m21)
    player = Resident.objects.filter(game=m21.game, status=LifeStatus.ALIVE).order_by("name").first()
    events = GameEvent.objects.filter(game=m21.game).count()
    response = client.post(action_url(reverse("staff_admin:cities_resident_changelist"), "record_death"), {
        "_selected_action": [player.public_id], "cause": "killed"})
    assert response.status_code == 409
    body = html.unescape(response.content.decode())
    assert REFUSAL in body and "recording a death from the residents' list" in body
    player.refresh_from_db()
    assert player.status == LifeStatus.ALIVE
    assert GameEvent.objects.filter(game=m21.game).count() == events
    for action in ("replace_player", "penalty_ban"):
        response = client.post(action_url(reverse("staff_admin:cities_resident_changelist"), action), {
            "_selected_action": [player.public_id], "username": "m21host"})
        assert response.status_code == 409, action
    assert GameEvent.objects.filter(game=m21.game).count() == events


def test_the_m21_hosts_console_offers_no_lepra_tool(m21):
    client = host_client(m21)
    dashboard = client.get(reverse("staff_admin:index"))
    assert dashboard.status_code == 200
    body = dashboard.content.decode()
    for url in lepra_pages(m21.game):
        assert url not in body, url
    for model in LEPRA_MODELS:
        assert reverse(f"staff_admin:{model}_changelist") not in body, model
    assert reverse("staff_admin:m21_console", args=[m21.game.slug]) in body  # the M21 console stays
    residents = client.get(reverse("staff_admin:cities_resident_changelist"))
    assert residents.status_code == 200
    for action in ("record_death", "replace_player", "penalty_ban"):
        assert f'value="{action}"' not in residents.content.decode(), action


def test_every_lepra_page_and_list_refuses_the_m21_host_and_changes_nothing(m21):
    client = host_client(m21)
    game = m21.game
    dead = Resident.objects.filter(game=game).exclude(status=LifeStatus.ALIVE)
    assert {r.status for r in dead} == {LifeStatus.DEAD, LifeStatus.IMPRISONED}
    inboxes, events = Inbox.objects.filter(game=game).count(), GameEvent.objects.filter(game=game).count()
    for url in lepra_pages(game):
        for response in (client.get(url), client.post(url, {
                "title": "Stage", "speakers": [r.public_id for r in dead] + [r.pk for r in dead],
                "audience": "all", "reason": "x", "until": "2026-07-09 10:00"})):
            assert response.status_code == 409, url
            assert REFUSAL in response.content.decode(), url
    for model in LEPRA_MODELS:
        response = client.get(reverse(f"staff_admin:{model}_changelist"))
        assert response.status_code == 409, model
        assert REFUSAL in response.content.decode(), model
    assert Inbox.objects.filter(game=game).count() == inboxes
    assert GameEvent.objects.filter(game=game).count() == events


def test_a_host_of_both_rulesets_records_a_lepra_death_and_is_refused_the_m21_one(demo, m21):
    """The Procurator of a Lepra game who also hosts an M21 game is offered "record a death"; it acts only on the
    Lepra resident and names the M21 ruleset's refusal for the other (nothing of the M21 game changes)."""
    StaffRole.objects.filter(game=demo.game, kind=HOST_STAFF_KIND).update(user=m21.host)
    client = host_client(m21)
    residents = reverse("staff_admin:cities_resident_changelist")
    assert 'value="record_death"' in client.get(residents).content.decode()
    m21_player = Resident.objects.filter(game=m21.game, status=LifeStatus.ALIVE).order_by("name").first()
    lepra_player = demo.seat("resident2")
    events = GameEvent.objects.filter(game=m21.game).count()
    response = client.post(action_url(residents, "record_death"), {"cause": "killed", "confirmed": "yes",
                                       "_selected_action": [m21_player.public_id, lepra_player.public_id]},
                           follow=True)
    assert response.status_code == 200
    flashed = [str(m) for m in response.context["messages"]]
    assert flashed == ["The m21 ruleset does not provide recording a death from the residents' list.",
                       f"The death of {lepra_player.name} is recorded."]
    m21_player.refresh_from_db()
    lepra_player.refresh_from_db()
    assert (m21_player.status, lepra_player.status) == (LifeStatus.ALIVE, LifeStatus.DEAD)
    assert GameEvent.objects.filter(game=m21.game).count() == events


def test_the_console_names_a_seat_by_its_city_only_where_the_game_has_cities(demo, m21):
    """A Lepra seat is "name · city" on the death record's page and "name (city)" in its confirmation; an M21 seat
    (in no city) is named by its name alone (the page itself refuses it: M21 records no death from the list)."""
    StaffRole.objects.filter(game=demo.game, kind=HOST_STAFF_KIND).update(user=m21.host)
    client = host_client(m21)
    residents = reverse("staff_admin:cities_resident_changelist")
    m21_player = Resident.objects.filter(game=m21.game, status=LifeStatus.ALIVE).order_by("name").first()
    lepra_player = demo.seat("resident2")
    assert m21_player.city is None and lepra_player.city is not None
    assert (m21_player.name_and_city, lepra_player.name_and_city) == (
        m21_player.name, f"{lepra_player.name} · {lepra_player.city.name}")
    selected = {"_selected_action": [lepra_player.public_id]}
    page = html.unescape(client.post(residents, {"action": "record_death", **selected}).content.decode())
    targets = re.findall(r"<li>([^<]*)<input", page.split('class="action-targets"')[1].split("</ul>")[0])
    assert targets == [f"{lepra_player.name} · {lepra_player.city.name}"]
    confirm = html.unescape(client.post(action_url(residents, "record_death"), {"cause": "killed", **selected})
                            .content.decode())
    assert f": {lepra_player.name} ({lepra_player.city.name})." in confirm
