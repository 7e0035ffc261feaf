"""Each button of the night page posts its own form to its own URL, and the service decides who may (RULES.md
L-NIGHT-3, L-NIGHT-4, L-NIGHT-7): the success changes exactly what it should; a refusal gives the service's reason
with its status and changes nothing; the page itself takes no POST, the buttons' URLs no GET."""
from __future__ import annotations

from datetime import timedelta

import time_machine
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from cities.models import GameEvent
from inboxes.models import Message
from rulesets.lepra.models import NightActionKind, NightDecision
from rulesets.lepra import seats
from rulesets.lepra.night import services as night_services
from tests.rulesets.lepra.night.conftest import NOW, set_day
from tests.setup_factory import in_game_language

LATER = NOW + timedelta(days=1)


def _events(ng) -> int:
    return GameEvent.objects.filter(game=ng.game).count()


def test_the_night_page_takes_no_post_and_its_buttons_no_get(ng, client):
    client.force_login(ng.consigliere)
    slug = ng.game.slug
    page = client.get(reverse("night_page", args=[slug])).content.decode()
    assert 'name="action"' not in page and 'name="city"' not in page.split('class="stacked send-gift"')[0]
    for name, args in (("open_godfather_election", [slug, 1]), ("vote_godfather", [slug, 1]),
                       ("close_godfather_election", [slug, 1]), ("appoint_godfather", [slug, 1]),
                       ("decide_kill", [slug, 1]), ("decide_touring", [slug, 1]), ("check_resident", [slug]),
                       ("send_gift", [slug])):
        assert client.get(reverse(name, args=args)).status_code == 405, name
    assert f'action="{reverse("appoint_godfather", args=[slug, 1])}"' in page
    assert client.post(reverse("night_page", args=[slug]), {"target": ""}).status_code == 405


def test_the_consigliere_appoints_a_godfather_at_its_own_url_the_procurator_may_not_L_NIGHT_3(ng10, client):
    city = ng10.cities[0]
    a, b = ng10.mafia[1]
    url = reverse("appoint_godfather", args=[ng10.game.slug, 1])
    before = _events(ng10)
    client.force_login(ng10.procurator)
    with time_machine.travel(NOW, tick=False):
        refused = client.post(url, {"target": b.public_id})
        assert refused.status_code == 403
        assert in_game_language(ng10.game, "Only the Consigliere appoints a godfather.") in refused.content.decode()
        assert night_services.living_godfather(city).pk == ng10.godfather[1].pk and _events(ng10) == before
        client.force_login(ng10.consigliere)
        done = client.post(url, {"target": b.public_id})
    assert done.status_code == 302 and done.url == reverse("night_page", args=[ng10.game.slug])
    assert night_services.living_godfather(city).pk == b.pk
    assert a.pk != b.pk and seats.is_godfather(ng10.r(a)) is False


def test_the_touring_citys_godfather_decides_the_touring_at_its_own_url_L_NIGHT_4(ng, client):
    touring = night_services.touring_city_for(ng.game, 2)
    assert touring == ng.cities[0]
    toured = ng.honest[2][0]  # a resident of another city
    url = reverse("decide_touring", args=[ng.game.slug, touring.number])
    client.force_login(ng.godfather[2].user)  # the godfather of a city that does not tour tonight
    with time_machine.travel(NOW, tick=False):
        refused = client.post(reverse("decide_touring", args=[ng.game.slug, 2]), {"target": toured.public_id})
        assert refused.status_code == 409
        with translation.override("ru"):
            reason = gettext("%(city)s is not the touring city tonight.") % {"city": ng.cities[1].name}
        assert reason in refused.content.decode()
        assert not NightDecision.objects.filter(kind=NightActionKind.TOUR).exists()
        client.force_login(ng.godfather[1].user)
        done = client.post(url, {"target": toured.public_id})
    assert done.status_code == 302
    decision = night_services.last_decision(touring, 2, NightActionKind.TOUR)
    assert (decision.target_id, decision.kind) == (toured.pk, NightActionKind.TOUR)
    assert night_services.last_decision(touring, 2, NightActionKind.KILL) is None


def test_the_consigliere_sends_a_gift_at_its_own_url_a_godfather_may_not_L_NIGHT_7(ng, client):
    c1, c2, _c3 = ng.cities
    night_services.do_resolve_night(ng.game, night=2, now=NOW)  # city 1 toured: it may now get gifts
    set_day(ng, 3)
    url = reverse("send_gift", args=[ng.game.slug])
    inbox = night_services.mafia_inbox_of(c1)
    messages = Message.objects.filter(inbox=inbox).count()
    client.force_login(ng.godfather[2].user)
    with time_machine.travel(LATER, tick=False):
        refused = client.post(url, {"city": c2.number, "to_city": c1.number, "kind": "gift", "text": "x"})
        assert refused.status_code == 403
        assert in_game_language(ng.game, "Gifts and fish go through the Consigliere.") in refused.content.decode()
        assert Message.objects.filter(inbox=inbox).count() == messages
        client.force_login(ng.consigliere)
        done = client.post(url, {"city": c2.number, "to_city": c1.number, "kind": "fish", "text": "Рыба вам."})
    assert done.status_code == 302
    message = Message.objects.filter(inbox=inbox).order_by("-received_at", "-id").first()
    assert c2.name in message.body and "Рыба вам." in message.body
    assert Message.objects.filter(inbox=inbox).count() == messages + 1
