"""The night page over HTTP (issue 6): each form is one service call; refusals re-render with the reason."""
from __future__ import annotations

import time_machine
from django.urls import reverse

from cities.models import LifeStatus
from rulesets.lepra.models import CommissarCheck, NightActionKind, NightDecision
from rulesets.lepra.night import services as night_services
from tests.rulesets.lepra.night.conftest import NOW
from tests.setup_factory import in_game_language


def url(ng):
    return f"/games/{ng.game.slug}/night/"


def test_godfather_decides_through_the_night_page_L_NIGHT_1(ng, client):
    client.force_login(ng.godfather[1].user)
    victim = ng.honest[1][0]
    with time_machine.travel(NOW, tick=False):
        response = client.post(reverse("decide_kill", args=[ng.game.slug, 1]), {"target": victim.public_id})
    assert response.status_code == 302
    decision = NightDecision.objects.get(city=ng.cities[0])
    assert (decision.target_id, decision.kind, decision.by_consigliere) == (victim.pk, NightActionKind.KILL, False)
    with time_machine.travel(NOW, tick=False):
        response = client.post(reverse("decide_kill", args=[ng.game.slug, 1]), {"target": ""})
    assert night_services.last_decision(ng.cities[0], 2, NightActionKind.KILL).target is None
    page = client.get(url(ng)).content.decode()
    assert in_game_language(ng.game, "no kill") in page


def test_refused_decision_shows_the_reason_with_its_status_L_NIGHT_1(ng, client):
    client.force_login(ng.godfather[1].user)
    # A mafioso is no legal target: the kill picker offers the city's honest residents only, and the refusal is
    # the picker's own error, inside its form; nothing is recorded.
    response = client.post(reverse("decide_kill", args=[ng.game.slug, 1]), {"target": ng.mafia[1][0].public_id})
    assert response.status_code == 400
    form = next(f.split("</form>")[0] for f in response.content.decode().split("<form") if "id_decide_1_target" in f)
    assert 'class="errorlist' in form and NightDecision.objects.filter(city=ng.cities[0]).count() == 0
    # A legal target the service still refuses (the honest are no godfather): its reason, with its status.
    client.force_login(ng.honest[1][0].user)
    response = client.post(reverse("decide_kill", args=[ng.game.slug, 1]), {"target": ng.honest[1][1].public_id})
    assert response.status_code == 403
    assert NightDecision.objects.count() == 0


def test_commissar_checks_through_the_night_page_L_NIGHT_5(ng, client):
    commissar = ng.commissar[1]
    client.force_login(commissar.user)
    with time_machine.travel(NOW, tick=False):
        response = client.post(reverse("check_resident", args=[ng.game.slug]), {"target": ng.mafia[1][0].public_id})
    assert response.status_code == 302
    assert CommissarCheck.objects.get(commissar=commissar).is_mafia is True
    page = client.get(url(ng)).content.decode()
    assert f"{ng.mafia[1][0].name} — {in_game_language(ng.game, 'mafia')}" in page
    with time_machine.travel(NOW, tick=False):
        again = client.post(reverse("check_resident", args=[ng.game.slug]), {"target": ng.honest[1][0].public_id})
    assert again.status_code == 400


def test_consigliere_opens_and_mafia_vote_and_consigliere_closes_through_the_page_L_NIGHT_3(ng10, client):
    a, b = ng10.mafia[1]
    client.force_login(ng10.consigliere)
    assert client.post(reverse("open_godfather_election", args=[ng10.game.slug, 1]), {}).status_code == 302
    for voter in (a, b):
        client.force_login(voter.user)
        assert client.post(reverse("vote_godfather", args=[ng10.game.slug, 1]), {"target": b.public_id}).status_code == 302
    client.force_login(ng10.consigliere)
    assert client.post(reverse("close_godfather_election", args=[ng10.game.slug, 1]), {}).status_code == 302
    assert night_services.living_godfather(ng10.cities[0]).pk == b.pk
    assert ng10.r(a).status == LifeStatus.ALIVE


def test_anonymous_visitor_sees_the_rotation_and_cannot_post(ng, client):
    page = client.get(url(ng))
    assert page.status_code == 200
    assert ng.cities[0].name in page.content.decode()
    response = client.post(reverse("decide_kill", args=[ng.game.slug, 1]), {"target": ""})
    assert response.status_code == 302 and response.url.startswith(reverse("account_login"))
    assert NightDecision.objects.count() == 0


def test_an_action_posted_from_no_picker_the_page_shows_is_refused_in_words_on_the_page_L_NIGHT_1(ng, client):
    """A picker holds the errors of what is posted from it; an action posted from no picker the page shows (the
    Consigliere voting in a godfather election: he runs it, the mafia vote) is left to its service, whose refusal
    the page shows above the forms, not in a form it does not show."""
    client.force_login(ng.consigliere)
    page = client.get(url(ng)).content.decode()
    assert "id_vote_godfather_1_target" not in page
    with time_machine.travel(NOW, tick=False):
        response = client.post(reverse("vote_godfather", args=[ng.game.slug, 1]), {"target": ng.mafia[1][0].public_id})
    assert response.status_code == 409
    alert = response.content.decode().split('class="error" role="alert">')[1].split("</p>")[0]
    assert alert == in_game_language(ng.game, "No godfather election is open.")
