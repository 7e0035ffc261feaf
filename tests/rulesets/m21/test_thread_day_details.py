"""Details of the M21 game thread (RULES.md M-VOTE-1, M-VOTE-7): an over-long paste is refused as a whole and kept
for the author (never cut by the browser into a shorter command that counts), an edited vote post says that its
votes count as first posted, and every time on the thread and the game page is written one way."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from inboxes.membership_services import do_edit_message
from tests.rulesets.m21.day_helpers import build_game


def _client(table, name):
    client = Client()
    client.force_login(table.users[name])
    return client


@pytest.mark.django_db
def test_an_over_long_post_is_refused_whole_and_kept_never_cut_M_VOTE_1():
    table = build_game()
    client = _client(table, "Alice")
    url = reverse("inbox_thread", args=[table.thread.public_id])
    page = client.get(url).content.decode()
    assert "maxlength" not in page  # the browser cuts nothing
    text = "##VOTE Grace " + "x" * (settings.MAFIA_MESSAGE_MAX_LENGTH + 2 - len("##VOTE Grace "))
    before = table.thread.messages.count()
    response = client.post(url, {"text": text})
    html = response.content.decode()
    assert response.status_code in (200, 400)
    assert f"The message is too long: {len(text)} characters, at most {settings.MAFIA_MESSAGE_MAX_LENGTH}." in html
    assert text in html  # kept in the post box
    assert table.thread.messages.count() == before


@pytest.mark.django_db
def test_an_edited_vote_post_says_its_votes_count_as_first_posted_M_VOTE_7():
    table = build_game()
    message = table.post("Alice", "##VOTE Grace")
    table.tick(1)
    do_edit_message(message, "##VOTE Bob", acting_user=table.users["Alice"], now=table.now)
    html = _client(table, "Carol").get(reverse("inbox_thread", args=[table.thread.public_id])).content.decode()
    assert "Alice votes Grace." in html
    assert "Edited after posting: the votes count as first posted" in html


@pytest.mark.django_db
def test_the_thread_and_the_game_page_write_times_one_way():
    table = build_game()
    table.post("Alice", "Morning.")
    client = _client(table, "Carol")
    thread = client.get(reverse("inbox_thread", args=[table.thread.public_id])).content.decode()
    game = client.get(reverse("m21_game", args=[table.game.slug])).content.decode()
    deadline = table.day(1).deadline  # Wed 7 Jan 2026, 22:00 GMT (London in winter)
    assert deadline == table.day(1).starts_at + timedelta(hours=48)
    assert "Deadline Wed 7 Jan 2026, 22:00 GMT" in thread
    assert "Wed 7 Jan 2026, 22:00 GMT" in game
    assert "Mon 5 Jan 2026, 22:0" in thread  # the posts' times, same format
    assert "a.m." not in thread + game and "p.m." not in thread + game
    assert "**Day 1 has begun.** It ends at the deadline, Wed 7 Jan 2026, 22:00 GMT" in table.thread.messages.get(
        body__startswith="**Day 1 has begun.**").body
