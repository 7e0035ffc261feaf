"""Live pages in a real browser: two players in two browser contexts read the same city square; one posts and
the other sees the post appear without reloading within the poll interval; the top bar's unread badge appears
and clears; an inbox with unread messages opens at the first unread one (L-INBOX-20)."""
from __future__ import annotations

import pytest

from inboxes import posting
from rulesets.lepra.kinds import LepraInboxKind
from tests.e2e.game_helpers import _open_game

from .stack import LIVE_POLL_SECONDS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


#: How long a page may take to show news: two poll intervals and the request.
WAIT_MS = (2 * LIVE_POLL_SECONDS + 5) * 1000


def test_a_post_appears_in_the_other_players_open_thread_without_reloading_L_INBOX_20(lepra, screenshots):
    _open_game(lepra)
    inbox = lepra.inbox(LepraInboxKind.CITY, city__number=1)
    first, second = lepra.residents(1)[:2]
    writer, reader = lepra.of(first), lepra.of(second)
    thread = f"/inboxes/{inbox.public_id}/"
    writer.open(thread)
    reader.open(thread)
    reader.page.evaluate("window.__notReloaded = true")
    writer.page.evaluate("window.__notReloaded = true")

    writer.page.fill("#post-form textarea[name=text]", "Кто за то, чтобы начать с Самовара?")
    writer.page.locator("#post-form button[type=submit]").click()
    writer.page.locator("article.message", has_text="Кто за то, чтобы начать с Самовара?").wait_for(timeout=WAIT_MS)
    assert writer.page.input_value("#post-form textarea[name=text]") == ""  # the form is emptied, no reload
    reader.page.locator("article.message", has_text="Кто за то, чтобы начать с Самовара?").wait_for(timeout=WAIT_MS)
    assert reader.page.evaluate("window.__notReloaded") is True
    assert writer.page.evaluate("window.__notReloaded") is True
    assert reader.page.locator("article.message", has_text="Кто за то, чтобы начать с Самовара?").count() == 1
    assert reader.page.locator("#no-messages").count() == 0  # "no messages yet" is gone
    screenshots.take(reader.page, "live-thread")

    # A refused post (empty) shows the reason in place and keeps the page.
    writer.page.fill("#post-form textarea[name=text]", "   ")
    writer.page.locator("#post-form button[type=submit]").click()
    writer.page.locator("#post-feedback .post-error").wait_for(timeout=WAIT_MS)
    assert writer.page.evaluate("window.__notReloaded") is True


def test_unread_badge_appears_and_clears_and_the_inbox_opens_at_the_first_unread_L_INBOX_20(lepra):
    _open_game(lepra)
    inbox = lepra.inbox(LepraInboxKind.CITY, city__number=1)
    first, second = lepra.residents(1)[:2]
    reader = lepra.of(second)
    reader.open(f"/inboxes/{inbox.public_id}/")  # everything there is read now
    reader.open(f"/games/{lepra.slug}/")
    assert reader.page.locator("#unread-badge .unread").count() == 0
    for n in range(3):
        posting.do_post_message(inbox, f"Новость номер {n + 1}", acting_user=first.user,
                                       now=lepra.stack.clock.now())
    badge = reader.page.locator("#unread-badge .unread")
    # The badge may poll between the three posts and first show 1 or 2: wait for the count of all three.
    from playwright.sync_api import expect  # noqa: PLC0415 - playwright is optional at collection (tests/e2e/conftest.py)

    expect(badge).to_have_text("3", timeout=WAIT_MS)
    assert badge.inner_text().strip() == "3"
    reader.page.locator("header nav a[href$='/inboxes/']").click()
    reader.page.wait_for_load_state()
    reader.open(f"/inboxes/{inbox.public_id}/")
    divider = reader.page.locator("#unread")
    assert divider.count() == 1
    first_new = reader.page.locator("#unread + article.message")
    assert "Новость номер 1" in first_new.inner_text()
    reader.open(f"/games/{lepra.slug}/")
    reader.page.wait_for_timeout(1000)
    assert reader.page.locator("#unread-badge .unread").count() == 0
