"""Query budgets of the archive pages (DESIGN.md "Tests": ``django_assert_max_num_queries`` on list pages): the
count does not grow with the number of messages, events or residents."""
from __future__ import annotations

import pytest

from inboxes import posting
from tests.conftest import fresh

PAGES = {"archive/timeline/": 13, "archive/export.json": 13, "archive/print/": 13, "archive/map/": 10,
         "archive/votes/": 7, "archive/search/?q=hello": 7, "archive/": 13}  # incl. the GameResult


@pytest.mark.parametrize("path", list(PAGES))
def test_archive_pages_stay_within_their_query_budget_whatever_the_thread_lengths(world, client, path,
                                                                                 django_assert_max_num_queries):
    world.end()
    client.force_login(world.demo.honest)
    url = f"/games/{world.game.slug}/{path}"
    with django_assert_max_num_queries(PAGES[path]):
        assert client.get(url).status_code == 200
    Game = world.game.__class__
    Game.objects.filter(pk=world.game.pk).update(status="running")
    for n in range(15):
        posting.do_post_message(world.inbox("city1"), f"hello {n}", acting_user=fresh(world.demo.honest))
    Game.objects.filter(pk=world.game.pk).update(status="finished")
    with django_assert_max_num_queries(PAGES[path]):
        assert client.get(url).status_code == 200
