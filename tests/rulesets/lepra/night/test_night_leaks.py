"""Leak tests of the night (L-STAFF-6): a persona who is not of the city's mafia (or the Consigliere) never sees
the night decision, the godfather or the election; nobody but the asker sees who asked a commissar check."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser

from inboxes import knowledge
from rulesets.lepra.night import services as night_services
from tests.conftest import knows_rank
from tests.rulesets.lepra.night.conftest import NOW, build_night_game_rows


@pytest.fixture
def night_scene(db):
    """Night 2 of a two-city game: an election open in city 1 with a vote, the godfather's decision there, and a
    check by city 1's commissar."""
    ng = build_night_game_rows("leaks", cities=2, size=10)
    city1 = ng.cities[0]
    _a, b = ng.mafia[1]
    election = night_services.do_open_godfather_election(city1, acting_user=b.user, now=NOW)
    night_services.do_vote_godfather(election, b, acting_user=b.user, now=NOW)
    night_services.do_submit_night_decision(city1, ng.honest[1][0], acting_user=ng.godfather[1].user, now=NOW)
    night_services.do_check_resident(ng.mafia[1][0], acting_user=ng.commissar[1].user, now=NOW + timedelta(minutes=1))
    return ng


SECRET_MARKERS = ['data-city="1"', "Decision for night", "Godfather election"]


def _pages(ng):
    slug = ng.game.slug
    return [f"/games/{slug}/night/", f"/games/{slug}/", f"/games/{slug}/inboxes/"]


def _outsiders(ng):
    """Everyone who must not see city 1's night: staff but the Consigliere, honest residents of city 1 (the
    commissar and the judge too), the mafia of city 2, a logged-out visitor."""
    return {
        "procurator": ng.procurator, "tribune1": ng.staff["tribune1"], "arbiter": ng.staff["arbiter"],
        "honest": ng.honest[1][1].user, "commissar": ng.commissar[1].user, "judge": ng.judge[1].user,
        "mafioso2": ng.godfather[2].user, "anonymous": AnonymousUser(),
    }


def test_non_mafia_never_see_the_decision_the_godfather_or_the_election_L_STAFF_6(night_scene, client):
    ng = night_scene
    for name, user in _outsiders(ng).items():
        client.logout()
        if user.is_authenticated:
            client.force_login(user)
        for url in _pages(ng):
            response = client.get(url)
            if response.status_code == 302:  # my inboxes asks a visitor to log in
                continue
            html = response.content.decode()
            assert response.status_code == 200, (name, url)
            leaked = [m for m in SECRET_MARKERS if m in html]
            assert leaked == [], (name, url, leaked)
            own = 1 if name == "mafioso2" and url.endswith("/night/") else 0
            assert html.count('data-fact="godfather"') == own, (name, url)
        assert not knows_rank(user, ng.r(ng.godfather[1]), "godfather"), name
        assert not knowledge.knows_night_of(user, ng.cities[0]), name
        mafia_inbox = night_services.mafia_inbox_of(ng.cities[0])
        assert client.get(f"/inboxes/{mafia_inbox.public_id}/").status_code == 404, name


def test_city_mafia_and_the_consigliere_do_see_the_night(night_scene, client):
    ng = night_scene
    for user in (ng.mafia[1][1].user, ng.consigliere):
        client.force_login(user)
        html = client.get(f"/games/{ng.game.slug}/night/").content.decode()
        assert 'data-city="1"' in html and ng.godfather[1].name in html
        assert ng.honest[1][0].name in html  # tonight's decision


def test_check_asker_is_seen_by_the_asker_only_L_NIGHT_5(night_scene, client):
    ng = night_scene
    commissar = ng.commissar[1]
    channel = night_services.check_channel_of(ng.cities[0])
    client.force_login(ng.consigliere)
    thread = client.get(f"/inboxes/{channel.public_id}/").content.decode()
    assert ng.mafia[1][0].name in thread
    assert commissar.name not in thread and commissar.user.public_name not in thread
    night = client.get(f"/games/{ng.game.slug}/night/").content.decode()
    assert 'class="checks"' not in night
    for name, user in _outsiders(ng).items():
        if name == "commissar":
            continue
        client.logout()
        if user.is_authenticated:
            client.force_login(user)
        assert client.get(f"/inboxes/{channel.public_id}/").status_code == 404, name
        html = client.get(f"/games/{ng.game.slug}/night/").content.decode()
        assert 'class="checks"' not in html, name
    client.force_login(commissar.user)
    own = client.get(f"/games/{ng.game.slug}/night/").content.decode()
    assert 'class="checks"' in own and ng.mafia[1][0].name in own


def test_night_page_is_private_for_logged_in_users(night_scene, client):
    client.force_login(night_scene.mafia[1][1].user)
    assert "private" in client.get(f"/games/{night_scene.game.slug}/night/")["Cache-Control"]


def test_staff_console_does_not_list_the_check_channels_member_to_the_consigliere_L_NIGHT_5(night_scene, client):
    ng = night_scene
    channel = night_services.check_channel_of(ng.cities[0])
    client.force_login(ng.consigliere)
    response = client.get(f"/staff/inboxes/membership/?inbox={channel.public_id}")
    assert response.status_code == 200
    assert ng.commissar[1].name not in response.content.decode()
    everything = client.get("/staff/inboxes/membership/").content.decode()
    assert ng.commissar[1].name not in everything
