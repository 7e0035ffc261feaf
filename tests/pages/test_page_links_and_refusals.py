"""Rough edges of the game pages: links to each city's day page (L-NOM, L-STAFF-2), the nomination recorded in
the nominator's personal inbox (L-NOM-1), a refused post's reason inside the posting form, and the impeachment
page linked from the city day page for its residents (L-IMPEACH)."""
from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from rulesets.lepra.day.services import do_nominate
from tests.conftest import DEMO_NOW


def client_of(user) -> Client:
    client = Client()
    if getattr(user, "is_authenticated", False):
        client.force_login(user)
    return client


def day_links(body: str, slug: str) -> set[int]:
    return {int(n) for n in re.findall(rf'href="/games/{re.escape(slug)}/cities/(\d+)/day/"', body)}


@pytest.mark.parametrize("persona, expected", [
    ("honest", {1}), ("resident2", {2}), ("tribune2", {2}), ("procurator", {1, 2, 3}), ("arbiter", {1, 2, 3}),
    ("outsider", set()), ("anonymous", set()),
])
def test_game_page_links_the_day_pages_of_the_viewers_cities_L_STAFF_2(demo, persona, expected):
    body = client_of(getattr(demo, persona)).get(reverse("game_detail", args=[demo.game.slug])).content.decode()
    assert day_links(body, demo.game.slug) == expected


def test_nomination_is_recorded_in_the_nominators_personal_inbox_L_NOM_1(demo):
    seat = demo.seat("honest")
    nominee = (demo.game.residents.filter(seats.rank_q("is_judge", False), city=seat.city, status="alive")
               .exclude(pk=seat.pk).order_by("name").first())
    personal = Inbox.objects.get(kind=LepraInboxKind.PERSONAL, resident=seat, rolled_over_at__isnull=True)
    before = Message.objects.filter(inbox=personal).count()
    do_nominate(nominee, acting_user=demo.honest, now=DEMO_NOW)
    texts = list(Message.objects.filter(inbox=personal).order_by("id").values_list("body", flat=True))
    assert len(texts) == before + 1
    with translation.override(demo.game.language):
        expected = translation.gettext("%(nominator)s nominates %(nominee)s for execution (day %(day)s).") % {
            "nominator": seat.name, "nominee": nominee.name, "day": 2}
    assert texts[-1] == expected
    page = client_of(demo.honest).get(reverse("inbox_thread", args=[personal.public_id])).content.decode()
    assert nominee.name in page


def test_refused_post_shows_its_reason_inside_the_posting_form(demo):
    personal = Inbox.objects.get(kind=LepraInboxKind.PERSONAL, resident=demo.seat("honest"), rolled_over_at__isnull=True)
    response = client_of(demo.honest).post(reverse("inbox_thread", args=[personal.public_id]), {"text": ""})
    assert response.status_code == 400
    form = re.search(r'<form method="post" action="[^"]*#post-form" id="post-form".*?</form>',
                     response.content.decode(), re.DOTALL).group(0)
    assert 'class="error post-error" role="alert"' in form


@pytest.mark.parametrize("persona, linked", [("honest", True), ("resident2", False), ("procurator", False)])
def test_city_day_page_links_the_impeachment_page_for_its_residents_L_IMPEACH(demo, persona, linked):
    body = client_of(getattr(demo, persona)).get(
        reverse("city_day", args=[demo.game.slug, 1])).content.decode()
    assert (f'href="{reverse("impeachment", args=[demo.game.slug])}"' in body) is linked
