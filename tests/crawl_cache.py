"""The leak crawl fetched once per persona per test session (per pytest-xdist worker).

Several leak suites crawl the same unmodified demo game as the same persona: every site page
(``tests.support.page_leaks.pages_for``) and every staff console page
(``tests.support.staff_console.staff_pages_for``). The pages a persona gets depend only on the database, which
each test receives in the same state (the demo loaded once, every test rolled back), so the first test that asks
crawls and later tests of the session reuse its pages.

- The crawl runs inside a savepoint that is rolled back: what opening pages writes (read marks) is undone, and the
  test that asked sees the database as the others do.
- The cache is keyed by a fingerprint of the demo game (its residents' public ids and seats, its inboxes and
  messages): a transactional test that flushes and reloads the demo, or a test that changed the game before
  asking, gets a crawl of its own database, never pages of another state.
- Each test gets its own copy of the ``url -> html`` dict; the assertions on the pages are unchanged.

The life-cycle suite (``tests/inboxes/test_lifecycle_leaks.py``) crawls another world (deaths, a replacement),
built once for its module; it keeps its own module-scoped crawl.
"""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import transaction
from django.db.models import Count, Max

from cities.models import Resident
from inboxes.models import Inbox, Message
from rulesets.lepra import seats


def demo_fingerprint(game) -> tuple:
    """What the crawled pages of ``game`` depend on, cheaply: the residents (public id, seat and life state), the
    inboxes and the messages (count and last id)."""
    residents = tuple(Resident.objects.filter(game=game).order_by("public_id").values_list(
        "public_id", "user_id", "status", "alignment",
        *(f"{seats.SEAT}__{flag}" for flag in seats.FLAGS)))
    inboxes = Inbox.objects.filter(game=game).aggregate(n=Count("id"), last=Max("id"))
    messages = Message.objects.filter(inbox__game=game).aggregate(n=Count("id"), last=Max("id"))
    return game.pk, game.status, game.day_number, residents, tuple(inboxes.values()), tuple(messages.values())


class CrawlCache:
    """Pages by (crawl kind, persona, demo fingerprint), kept for the session."""

    def __init__(self) -> None:
        self._pages: dict[tuple, dict[str, str]] = {}
        self.crawls = 0

    def pages(self, kind: str, persona: str, game, crawl: Callable[[], dict[str, str]]) -> dict[str, str]:
        """``crawl()`` of ``persona`` in ``game`` (``kind`` names the crawl: "site", "staff"), run once per
        fingerprint inside a rolled-back savepoint; returns a copy of the ``url -> html`` dict."""
        key = (kind, persona, demo_fingerprint(game))
        if key not in self._pages:
            with transaction.atomic():
                self._pages[key] = crawl()
                transaction.set_rollback(True)
            self.crawls += 1
        return dict(self._pages[key])


@pytest.fixture(scope="session")
def crawl_cache() -> CrawlCache:
    """The session's crawl cache (one per pytest-xdist worker)."""
    return CrawlCache()


class DemoPages:
    """The crawls of the demo game for one test: ``site(persona)`` and ``staff(persona)``."""

    def __init__(self, demo, cache: CrawlCache) -> None:
        self.demo = demo
        self.cache = cache

    def site(self, persona: str) -> dict[str, str]:
        """Every site page ``persona`` can open in the demo (``pages_for``), url -> html."""
        # Imported when used: tests/conftest.py loads this module before the test modules, which import it.
        from tests.support.page_leaks import client_for, pages_for

        return self.cache.pages("site", persona, self.demo.game,
                                lambda: pages_for(self.demo, client_for(getattr(self.demo, persona))))

    def staff(self, persona: str) -> dict[str, str]:
        """Every /staff/ page ``persona`` reaches (``staff_pages_for``), url -> html."""
        # Imported when used, as in ``site``.
        from tests.support.staff_console import staff_client, staff_pages_for

        return self.cache.pages("staff", persona, self.demo.game,
                                lambda: staff_pages_for(staff_client(getattr(self.demo, persona))))


@pytest.fixture
def demo_pages(demo, crawl_cache) -> DemoPages:
    """The demo's crawls, cached for the session; ask before the test changes the game (a changed game is
    crawled anew)."""
    return DemoPages(demo, crawl_cache)
