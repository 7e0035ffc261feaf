""""For you": what needs a player now, on the game page, the home page and the notifications page, decided by the
state of their seat and the policy at the moment the page is shown (L-COMM-2, L-VOTE-8)."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from archive.notifications import attention_for
from rulesets.lepra.setup import services as role_services
from tests.conftest import fresh
from tests.rulesets.lepra.day.day_helpers import CLOSES, MORNING, city1_day
from tests.rulesets.lepra.setup.setup_helpers import FixedChoice
from tests.setup_factory import build_game

pytestmark = pytest.mark.django_db

OFFER_TEXT = "Вам предложен пост комиссара: ответьте на предложение."


def test_a_commissar_offer_is_announced_to_its_candidate_only_until_answered_L_COMM_2(client):
    built = build_game("numbers", slug="offers", cities=2, size=10)
    from cities.models import Alignment, Resident

    candidate = Resident.objects.filter(game=built.game, city__number=1, alignment=Alignment.HONEST).first()
    neighbour = Resident.objects.filter(game=built.game, city__number=1).exclude(pk=candidate.pk).first()
    offer = role_services.do_offer_commissar(candidate.city, acting_user=built.procurator, rng=FixedChoice(candidate))
    client.force_login(candidate.user)
    page = client.get(f"/games/{built.game.slug}/").content.decode()
    assert OFFER_TEXT in page and f'href="/games/{built.game.slug}/offers/{offer.public_id}/"' in page
    assert OFFER_TEXT in client.get("/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert OFFER_TEXT in client.get("/me/mentions/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    for other in (neighbour.user, built.procurator, built.staff["tribune1"], built.staff["consigliere"]):
        client.force_login(other)
        assert OFFER_TEXT not in client.get(f"/games/{built.game.slug}/").content.decode()
        assert attention_for(other, built.game, timezone.now()) == []
    role_services.do_answer_commissar_offer(offer, accept=True, acting_user=fresh(candidate.user))
    client.force_login(candidate.user)
    assert OFFER_TEXT not in client.get(f"/games/{built.game.slug}/").content.decode()


def test_a_deadline_within_a_day_concerns_the_living_of_its_city_only_L_VOTE_8(demo, client):
    from rulesets.lepra.day.services import do_schedule_voting

    day = city1_day(demo)
    do_schedule_voting(day.city, CLOSES - timedelta(hours=3), CLOSES, acting_user=demo.tribune1, now=MORNING)
    with time_machine.travel(MORNING, tick=False):
        mine = attention_for(demo.honest, demo.game, MORNING)
        assert [a.due_at for a in mine] == [CLOSES - timedelta(hours=3), CLOSES]
        assert attention_for(demo.resident2, demo.game, MORNING) == []  # another city
        client.force_login(demo.honest)
        page = client.get(f"/games/{demo.game.slug}/").content.decode()
    assert re.search(r"голосование закрывается \d{1,2} [а-я]+ \d{4} г\. в \d\d:\d\d", page), page
    assert "(UTC+03:00)" in page  # the zone's offset written out


def test_nothing_needs_an_anonymous_visitor(demo):
    from django.contrib.auth.models import AnonymousUser

    assert attention_for(AnonymousUser(), demo.game, MORNING) == []
