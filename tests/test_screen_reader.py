"""What a screen reader and a keyboard find on the pages (the browser suite's axe pass checks the rest): a skip link
first, to the post form where there is one; the unread badge's count read out once; the login field labelled as a
field, not like the button; the staff console greeting the name the players see."""
from __future__ import annotations

import re

from django.test import Client

from inboxes import posting
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from tests.conftest import fresh
from tests.support.staff_console import staff_client

HX = {"HTTP_HX_REQUEST": "true"}


def _first_link(page: str) -> tuple[str, str]:
    """(href, text) of the first link of the page's body."""
    body = page[page.index("<body"):]
    match = re.search(r'<a [^>]*href="([^"]*)"[^>]*>(.*?)</a>', body, re.DOTALL)
    return match.group(1), match.group(2)


def test_a_thread_one_may_post_in_starts_with_a_skip_link_to_the_post_form(demo):
    client = Client(HTTP_ACCEPT_LANGUAGE="ru")
    client.force_login(demo.honest)
    square = Inbox.objects.filter(game=demo.game, kind=LepraInboxKind.CITY, city__number=1).order_by("-pk").first()
    page = client.get(f"/inboxes/{square.public_id}/").content.decode()
    assert 'id="post-form"' in page
    assert _first_link(page) == ("#post-form", "Перейти к форме сообщения")


def test_other_pages_start_with_a_skip_link_to_the_content(demo):
    page = Client(HTTP_ACCEPT_LANGUAGE="ru").get(f"/games/{demo.game.slug}/").content.decode()
    assert _first_link(page) == ("#content", "Перейти к содержанию")
    assert '<main id="content" tabindex="-1">' in page


def test_the_unread_badge_says_its_count_once_L_INBOX_20(demo, client):
    inbox = Inbox.objects.filter(game=demo.game, kind=LepraInboxKind.CITY, city__number=1).order_by("-pk").first()
    client.force_login(demo.honest)
    for active in client.get(f"/games/{demo.game.slug}/inboxes/").context["active"]:
        client.post(f"/inboxes/{active.public_id}/read/")
    posting.do_post_message(inbox, "Раз", acting_user=fresh(demo.mafioso))
    badge = client.get(f"/games/{demo.game.slug}/live/unread/", **HX).content.decode()
    # The visible number is hidden from the screen reader; the words say it once.
    assert re.search(r'<span class="unread" aria-hidden="true"[^>]*>1</span>', badge), badge
    spoken = re.sub(r'<span class="unread" aria-hidden="true"[^>]*>.*?</span>', "", badge)
    assert re.sub(r"<[^>]+>", "", spoken).strip() == "1 непрочитанное сообщение"


def test_the_login_field_is_labelled_login_not_like_the_log_in_button(db):
    page = Client(HTTP_ACCEPT_LANGUAGE="ru").get("/accounts/login/").content.decode()
    assert re.search(r'<label for="id_login">Логин:</label>', page), page
    assert "Войти:" not in page


def test_the_staff_console_greets_the_display_name_not_the_login(demo):
    page = staff_client(demo.tribune1).get("/staff/").content.decode()
    assert demo.tribune1.display_name and demo.tribune1.display_name != demo.tribune1.username
    assert f"<strong>{demo.tribune1.display_name}</strong>" in page
    assert f"<strong>{demo.tribune1.username}</strong>" not in page
