"""The game thread page shows every post's receipt (RULES.md M-VOTE-1) in a constant number of queries: the same
count for a page of 10 posts and of 200, on the thread page and on the live poll that appends new posts."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from inboxes.models import Message
from rulesets.m21.models import M21PostReceipt

from .day_helpers import build_game

pytestmark = pytest.mark.django_db

#: The queries of one thread page of an M21 game thread for a player, whatever the number of posts shown.
#: The count is read from the day's stored vote (re-deriving it from the posts took 20); the seats' names after
#: replacements take 2 (one name per seat), the vote buttons 2 (the living players, whether No Lynch is allowed).
THREAD_PAGE_QUERIES = 17
#: The queries of one live poll of the same thread.
LIVE_POLL_QUERIES = 7  # the seats' names after replacements (one name per seat)


@pytest.fixture
def table(settings):
    settings.MAFIA_MESSAGES_PER_PAGE = 500  # every post on one page: the count must not grow with the page
    return build_game()


def _add_posts(table, count: int) -> None:
    """``count`` posts in the game thread, each with a receipt (state only: the page is under test, not posting)."""
    seat = table.seat("Alice")
    day = table.day(1)
    base = Message.objects.filter(inbox=table.thread).count()
    rows = Message.objects.bulk_create([
        Message(inbox=table.thread, author_user=seat.user, author_resident=seat, author_name=seat.name,
                body=f"##VOTE Bob post {base + i}", body_html=f"<p>##VOTE Bob post {base + i}</p>",
                received_at=table.now + timedelta(seconds=base + i))
        for i in range(count)])
    M21PostReceipt.objects.bulk_create([
        M21PostReceipt(message=m, day=day, lines=[{"command": "##VOTE Bob", "accepted": True,
                                                   "message": f"RECEIPT-{m.pk}", "candidates": []}])
        for m in rows])


def _count(table, url: str) -> tuple[int, str]:
    client = Client()
    client.force_login(table.users["Carol"])
    with time_machine.travel(table.now + timedelta(hours=1), tick=False), \
            CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries), response.content.decode()


@pytest.mark.parametrize("posts", [10, 200])
def test_the_thread_page_shows_receipts_in_a_constant_number_of_queries_M_VOTE_1(table, posts):
    _add_posts(table, posts)
    last = M21PostReceipt.objects.filter(day__game=table.game).order_by("-message_id").first()
    count, html = _count(table, reverse("inbox_thread", args=[table.thread.public_id]) + "?page=1")
    assert f"RECEIPT-{last.message_id}" in html
    assert html.count('class="m21-receipt"') == posts
    assert count == THREAD_PAGE_QUERIES


@pytest.mark.parametrize("posts", [10, 200])
def test_the_live_poll_shows_receipts_in_a_constant_number_of_queries_M_VOTE_1(table, posts):
    _add_posts(table, posts)
    before = Message.objects.filter(inbox=table.thread).count() - min(posts, 50)
    count, html = _count(table, reverse("inbox_live", args=[table.thread.public_id]) + f"?after={before}")
    assert html.count('class="m21-receipt"') == min(posts, 50)
    assert count == LIVE_POLL_QUERIES
