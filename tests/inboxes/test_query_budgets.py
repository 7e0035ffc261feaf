"""Query budgets (DESIGN.md "Tests"): "my inboxes" and a thread page cost the same number of queries with 10
and with 2,000 messages (L-INBOX-20: the per-viewer counts are computed in the database, not in a loop)."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from tests.inboxes.inbox_helpers import _fill

MY_INBOXES_BUDGET = 7
THREAD_BUDGET = 13


def _count(client, url: str) -> tuple[int, int]:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    return response.status_code, len(ctx.captured_queries)


@pytest.mark.parametrize("total", [10, 2000])
def test_my_inboxes_query_budget_is_flat_L_INBOX_20(demo, client, django_assert_max_num_queries, total):
    seat = demo.seat("mafioso")
    city = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city=seat.city, rolled_over_at__isnull=True)
    own = Message.objects.filter(inbox=city, author_resident=seat).order_by("-received_at").first()
    last_own = own.received_at if own else datetime(1970, 1, 1, tzinfo=UTC)
    author = demo.seat("honest")
    for kind in (LepraInboxKind.CITY, LepraInboxKind.MAFIA):
        _fill(Inbox.objects.get(game=demo.game, kind=kind, city=seat.city), author, total)
    client.force_login(demo.mafioso)
    with django_assert_max_num_queries(MY_INBOXES_BUDGET):
        response = client.get(f"/games/{demo.game.slug}/inboxes/")
    assert response.status_code == 200
    # The unread count is exact: the seat's own demo posts advanced its read mark (do_post_message); every
    # message received after its last own post is unread.
    row = next(i for i in response.context["active"] if i.pk == city.pk)
    assert row.unread == Message.objects.filter(inbox=city, received_at__gt=last_own).count()
    assert row.unread >= total - 10


def test_my_inboxes_and_thread_cost_the_same_with_10_and_2000_messages(demo, client):
    seat = demo.seat("honest")
    inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city=seat.city, rolled_over_at__isnull=True)
    client.force_login(demo.honest)
    _fill(inbox, seat, 10)
    small = [_count(client, f"/games/{demo.game.slug}/inboxes/"), _count(client, f"/inboxes/{inbox.public_id}/")]
    _fill(inbox, seat, 2000)
    large = [_count(client, f"/games/{demo.game.slug}/inboxes/"), _count(client, f"/inboxes/{inbox.public_id}/")]
    assert small == large
    assert small[0][0] == small[1][0] == 200
    assert small[0][1] <= MY_INBOXES_BUDGET and small[1][1] <= THREAD_BUDGET


def test_thread_shows_the_newest_page_when_all_is_read_and_older_pages_on_request(demo, client, settings):
    seat = demo.seat("honest")
    inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city=seat.city, rolled_over_at__isnull=True)
    _fill(inbox, seat, 2000)
    client.force_login(demo.honest)
    assert client.post(f"/inboxes/{inbox.public_id}/read/").status_code == 302  # nothing unread: the newest page
    newest = client.get(f"/inboxes/{inbox.public_id}/")
    per_page = settings.MAFIA_MESSAGES_PER_PAGE
    assert newest.context["page"].number == -(-2000 // per_page)
    assert newest.context["messages_on_page"][-1].pk == Message.objects.filter(inbox=inbox).order_by("-received_at", "-id")[0].pk
    first = client.get(f"/inboxes/{inbox.public_id}/?page=1")
    assert first.context["page"].number == 1
    assert first.context["messages_on_page"][0].pk == Message.objects.filter(inbox=inbox).order_by("received_at", "id")[0].pk
    assert len(first.context["messages_on_page"]) == per_page
