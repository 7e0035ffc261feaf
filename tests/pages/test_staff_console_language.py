"""The staff console speaks the game's language (DESIGN.md "Pages": Russian for Lepra): every model name, column
header, filter, action and page title of ``/staff/`` goes through gettext, so a Lepra staff member meets no
English label; and the console's title is the Russian "пульт ведущих" (L-STAFF)."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from staff.console import staff_admin_site

from .conftest import MARK

#: English labels the console showed before the fix (model names, column headers, filter titles, page texts).
KNOWN_ENGLISH = [
    "voting session", "voting sessions", "proxy request", "proxy requests", "suicide declaration",
    "suicide declarations", "court case", "court cases", "judge election", "judge elections", "removal demand",
    "removal demands", "game event", "game events", "speech request", "speech requests", "membership",
    "memberships", "message", "messages", "inbox", "inboxes", "resident", "residents", "games",
    "opens at", "closes at", "opened at", "closed at", "requested at", "accepted at", "declared at",
    "confirmed at", "applied at", "decided at", "received at", "created at", "killed at", "edited at",
    "hidden at", "banned until", "day number", "is hidden", "is judge", "died at", "sentenced", "deadline",
    "fallback", "leader", "nominee", "organizer", "status", "state", "day", "kind", "reason", "since", "ruling",
    "ruled at", "reached at", "starts at", "ends at", "ended at", "stand in", "stand-in", "stand-ins", "considered",
    "valid at", "removed at", "at", "time zone", "slug", "ruleset", "Mafia Host: game staff", "Your games",
]

PERSONAS = ["procurator", "tribune1", "arbiter", "consigliere"]


class _Text(HTMLParser):
    """The visible text of a page (no tags, attributes, scripts or styles), one string per text node."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and data.strip():
            self.chunks.append(data.strip())


#: The audit log's event kinds and payloads are the record's data (codes and ``key=value``), not labels.
AUDIT_DATA = re.compile(r'<td class="field-(?:details|kind)">.*?</td>|<div class="readonly">.*?</div>'
                        r'|<li[^>]*>\s*<a href="\?[^"]*kind=[^"]*"[^>]*>.*?</a></li>', re.DOTALL)


def english_labels_in(html: str, url: str = "") -> set[str]:
    """The ``KNOWN_ENGLISH`` labels shown as bare English (not through gettext) in ``html``'s visible text."""
    if "/gameevent/" in url:
        html = AUDIT_DATA.sub("", html)
    parser = _Text()
    parser.feed(html)
    text = "\n".join(chunk.split(MARK)[0] for chunk in parser.chunks)  # a marked msgid runs to its node's end
    return {label for label in KNOWN_ENGLISH if re.search(rf"(?<!\w){re.escape(label)}(?!\w)", text, re.IGNORECASE)}


def console_client(user) -> Client:
    """A client logged in as ``user`` whose browser asks for Russian, as a Lepra host's does."""
    client = Client(HTTP_ACCEPT_LANGUAGE="ru")
    client.force_login(user)
    return client


def console_pages(client: Client) -> list[str]:
    """The console's index, every changelist the viewer may open, and the change page of its first object."""
    urls = [reverse("admin:index", current_app=staff_admin_site.name)]
    for model in staff_admin_site._registry:
        opts = model._meta
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist", current_app=staff_admin_site.name)
        response = client.get(changelist)
        if response.status_code != 200:
            continue
        urls.append(changelist)
        first = re.search(rf'href="({re.escape(changelist)}[a-z0-9]+/change/)[^"]*"', response.content.decode())
        if first:
            urls.append(first.group(1))
    return urls


@pytest.mark.parametrize("persona", PERSONAS)
def test_lepra_staff_console_shows_no_english_label_L_STAFF(demo, marked_russian, persona):
    client = console_client(getattr(demo, persona))
    pages = console_pages(client)
    assert len(pages) >= 6, pages
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert '<html lang="ru"' in response.content.decode(), url
        assert english_labels_in(response.content.decode(), url) == set(), (persona, url)


def test_lepra_staff_console_is_titled_the_hosts_console_in_russian(demo):
    body = console_client(demo.procurator).get("/staff/").content.decode()
    with translation.override("ru"):
        title = str(staff_admin_site.site_header)
    assert title == translation.gettext_lazy("Mafia Host — game staff console")
    assert title in body
    assert "Mafia Host: ведущие игр" not in body


def test_staff_console_shows_times_in_the_games_zone_L_DAY_1(demo):
    from datetime import UTC, datetime

    from rulesets.lepra.models import VotingSession

    session = VotingSession.objects.create(game=demo.game, city=demo.game.cities.get(number=1), day=9,
                                           opens_at=datetime(2026, 11, 20, 9, 0, tzinfo=UTC),
                                           closes_at=datetime(2026, 11, 20, 20, 59, tzinfo=UTC))
    client = console_client(demo.tribune1)
    listing = client.get("/staff/lepra/votingsession/?all=").content.decode()
    row = re.search(rf'href="/staff/lepra/votingsession/{session.public_id}/change/.*?</tr>', listing, re.DOTALL).group(0)
    assert "12:00" in row and "23:59" in row  # 09:00 and 20:59 UTC in Moscow (UTC+3)
    assert "09:00" not in row and "20:59" not in row
    page = client.get(f"/staff/lepra/votingsession/{session.public_id}/change/").content.decode()
    assert "12:00" in page and "09:00" not in page
