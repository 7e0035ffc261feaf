"""The Judge's casting-vote form names players by public id, never by database id (M-ROLE judge; the README's
"random public ids"): a database id or a foreign id posted is the 404 of a missing player and registers nothing."""
from __future__ import annotations

import re

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from cities.models import GameEvent, Resident
from tests.rulesets.m21.day_helpers import build_game

pytestmark = pytest.mark.django_db


def test_the_casting_vote_form_offers_public_ids_and_refuses_database_ids_M_ROLE_judge():
    table = build_game()
    judge_name = table.name_of_role("judge")
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(table.users[judge_name])
    target = table.seat(next(n for n in table.users if n != judge_name))
    with time_machine.travel(table.tick(), tick=False):
        page = client.get(reverse("m21_game", args=[table.game.slug])).content.decode()
        form = re.search(r'<form[^>]*action="[^"]*/m21/judge/cast/".*?</form>', page, re.DOTALL).group(0)
        values = re.findall(r'<option value="([^"]*)"', form)
        assert values[0] == "no_lynch" and target.public_id in values
        assert not [v for v in values[1:] if v.isdigit()]
        url = reverse("m21_judge_cast", args=[table.game.slug])
        events = GameEvent.objects.filter(game=table.game).count()
        foreign = Resident.objects.exclude(game=table.game).first()
        for value in [str(target.pk), "٣", *([foreign.public_id] if foreign else [])]:
            assert client.post(url, {"target": value}).status_code == 404, value
        assert GameEvent.objects.filter(game=table.game).count() == events
        assert client.post(url, {"target": target.public_id}).status_code == 302
        assert GameEvent.objects.filter(game=table.game).count() > events
