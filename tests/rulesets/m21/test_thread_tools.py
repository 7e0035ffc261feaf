"""The thread tools forum players expect (RULES.md M-VOTE-1, M-VOTE-5, M-VOTE-8): a quote button on each post (a
quote carries no command), ISO (the thread filtered to some players' posts, with their receipts), the activity of
each day (posts and votes per player) and a vote button beside each living player. Every page reads the game
thread through the policy: who may not read the thread gets a 404."""
from __future__ import annotations

from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import reverse

from cities.models import Resident
from tests.rulesets.m21.day_helpers import build_game, make_user


def _client(user=None):
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def _thread_url(table):
    return reverse("inbox_thread", args=[table.thread.public_id])


@pytest.mark.django_db
def test_a_quote_link_fills_the_post_box_and_the_quote_carries_no_command_M_VOTE_1():
    table = build_game()
    table.post("Alice", "Town, listen.\n##VOTE Grace")
    client = _client(table.users["Bob"])
    page = client.get(_thread_url(table)).content.decode()
    position = table.thread.messages.count()  # Alice's post is the latest
    assert f'href="?quote={position}#post-form"' in page
    filled = client.get(f"{_thread_url(table)}?quote={position}").context["form"]["text"].value()
    assert filled == "> **Alice** wrote:\n>\n> Town, listen.\n> ##VOTE Grace\n\n"
    reply = table.post("Bob", filled + "I disagree.")
    assert table.receipt(reply) == []
    view = client.get(reverse("m21_game", args=[table.game.slug])).context["view"]
    assert [(row["target"], row["voters"]) for row in view.count_rows] == [("Grace", ["Alice"])]


@pytest.mark.django_db
def test_a_quote_of_a_position_out_of_range_fills_nothing():
    table = build_game()
    client = _client(table.users["Bob"])
    for bad in ("999", "x", "-1", "99999999999999999999999", "\u0663", "1e3"):
        response = client.get(f"{_thread_url(table)}?quote={bad}")
        assert response.status_code == 200 and (response.context["form"]["text"].value() or "") == ""


@pytest.mark.django_db
def test_a_vote_button_beside_each_living_player_fills_the_post_box_M_VOTE_8():
    table = build_game()
    client = _client(table.users["Alice"])
    page = client.get(_thread_url(table)).content.decode()
    for name in ("Bob", "Grace"):
        assert f'href="?say={quote("##VOTE " + name, safe="")}#post-form" data-fill="##VOTE {name}"' in page
    filled = client.get(f"{_thread_url(table)}?say={quote('##VOTE Grace', safe='')}").context["form"]["text"].value()
    assert filled == "##VOTE Grace"
    assert table.thread.messages.filter(author_user=table.users["Alice"]).count() == 0  # nothing is sent
    outsider = _client(make_user("Olive")).get(_thread_url(table)).content.decode()
    assert "m21-vote-button" not in outsider  # who cannot post gets no button


@pytest.mark.django_db
def test_iso_shows_the_chosen_players_posts_with_their_receipts_paginated(settings):
    settings.MAFIA_MESSAGES_PER_PAGE = 3
    table = build_game()
    for i in range(4):
        table.post("Alice", f"Alice talks {i}")
        table.post("Bob", f"Bob talks {i}")
    table.post("Alice", "##VOTE Grace")
    table.post("Carol", "Carol talks")
    alice, carol = Resident.objects.get(game=table.game, name="Alice"), Resident.objects.get(game=table.game, name="Carol")
    client = _client(table.users["Dave"])
    url = reverse("m21_iso", args=[table.game.slug])
    first = client.get(url, {"players": [alice.public_id, carol.public_id]}).content.decode()
    assert "6 posts" in first and "Alice talks 0" in first and "Bob talks" not in first
    last = client.get(url, {"players": [alice.public_id, carol.public_id], "page": 2}).content.decode()
    assert "Alice votes Grace." in last and "Carol talks" in last and "Alice talks 0" not in last
    assert client.get(url, {"players": ["nope"]}).status_code == 400


@pytest.mark.django_db
def test_the_activity_of_a_day_counts_posts_and_votes_per_player_M_VOTE_5():
    table = build_game()
    table.post("Alice", "Hello")
    table.post("Alice", "##VOTE Grace")
    table.post("Bob", "##VOTE Alice\n##UNVOTE")
    rows = {row.name: row for row in _client(table.users["Carol"]).get(
        reverse("m21_activity", args=[table.game.slug])).context["rows"]}
    assert (rows["Alice"].posts, rows["Alice"].votes, rows["Alice"].vote, rows["Alice"].missing) == (2, 1, "Grace", [])
    assert (rows["Bob"].posts, rows["Bob"].votes, rows["Bob"].vote) == (1, 1, "")
    assert rows["Bob"].missing == ["no vote in place", "fewer than two posts"]
    assert rows["Carol"].missing == ["no vote in place", "no vote cast", "fewer than two posts"]
    assert _client(table.users["Carol"]).get(reverse("m21_activity_day", args=[table.game.slug, 7])).status_code == 404


@pytest.mark.django_db
def test_iso_and_activity_are_404_to_whoever_may_not_read_the_thread():
    table = build_game()
    table.post("Alice", "words")
    alice = Resident.objects.get(game=table.game, name="Alice")
    for client in (_client(make_user("Olive")), _client()):
        thread_status = client.get(_thread_url(table)).status_code
        iso = client.get(reverse("m21_iso", args=[table.game.slug]), {"players": [alice.public_id]}).status_code
        activity = client.get(reverse("m21_activity", args=[table.game.slug])).status_code
        assert iso == activity == (200 if thread_status == 200 else 404), (thread_status, iso, activity)
    player = _client(table.users["Bob"])
    assert player.get(reverse("m21_activity", args=[table.game.slug])).status_code == 200
