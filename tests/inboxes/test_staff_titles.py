"""A staff post's badge names the role as the game's ruleset does: the Procurator of a Lepra game (Прокурор in its
Russian pages), the Host of an M21 game (M-SETUP-4), never the other ruleset's title; a co-host is a Co-host."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from inboxes.models import Inbox
from rulesets.m21.kinds import M21InboxKind
from inboxes.posting import do_post_message
from tests.rulesets.m21.day_helpers import build_game

pytestmark = pytest.mark.django_db

BADGE = re.compile(r'<span class="badge badge-staff" data-author="staff">([^<]+)</span>')


def _badges(user, inbox) -> list[str]:
    client = Client()
    client.force_login(user)
    page = client.get(f"/inboxes/{inbox.public_id}/")
    assert page.status_code == 200
    return BADGE.findall(page.content.decode())


def test_an_m21_hosts_posts_carry_the_host_badge_M_SETUP_4():
    table = build_game()
    thread = Inbox.objects.get(game=table.game, kind=M21InboxKind.GAME_THREAD)
    do_post_message(thread, "Day 1 begins.", acting_user=table.host, now=table.tick())
    do_post_message(thread, "Votes are open.", acting_user=table.cohost, now=table.tick())
    assert _badges(table.users["Alice"], thread) == ["Host", "Co-host"]


def test_a_lepra_procurators_and_tribunes_posts_carry_their_russian_titles_L_STAFF_1(demo):
    office = Inbox.objects.filter(game=demo.game, kind=M21InboxKind.OFFICE, rolled_over_at__isnull=True).get()
    do_post_message(office, "Совещание.", acting_user=demo.procurator)
    do_post_message(office, "Принято.", acting_user=demo.tribune1)
    assert _badges(demo.tribune1, office)[-2:] == ["Прокурор", "Трибун"]
