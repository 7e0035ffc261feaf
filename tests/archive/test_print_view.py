"""The printable page of a game renders posts and messages from Markdown as the other pages do (markdown-it-py +
nh3), shows each time with its zone's abbreviation, and carries print styling."""
from __future__ import annotations

import re

from django.test import Client

from cities.models import PublicPost
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from tests.conftest import fresh


def test_the_print_view_renders_markdown_and_zoned_times(demo):
    square = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    do_post_message(square, "## План\n\n**жирно** и <script>alert(1)</script>", acting_user=fresh(demo.honest))
    client = Client(HTTP_ACCEPT_LANGUAGE="ru")
    client.force_login(demo.honest)
    response = client.get(f"/games/{demo.game.slug}/archive/print/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "<h2>План</h2>" in page and "<strong>жирно</strong>" in page
    assert "<script>alert(1)</script>" not in page and "## План" not in page and "**жирно**" not in page
    lists = PublicPost.objects.filter(game=demo.game).exclude(body="").first()
    assert lists is not None and "**" not in re.sub(r"<style>.*?</style>", "", page, flags=re.DOTALL)
    times = re.findall(r"<time>([^<]*)</time>", page)
    assert times and all(t.endswith(" MSK") for t in times), times[:3]
    assert "@media print" in page and "@page" in page
