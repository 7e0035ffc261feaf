"""Unread is never lost (L-INBOX-20): a thread opens at the first unread message, only what a page showed is
marked read, and "mark all read" is an explicit action."""
from __future__ import annotations

from inboxes import posting
from inboxes.models import Inbox, Message, ReadMark
from rulesets.lepra.kinds import LepraInboxKind
from tests.conftest import fresh


def _city1(demo) -> Inbox:
    return Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)


def _unread(client, demo, inbox) -> int:
    rows = {i.pk: i.unread for i in client.get(f"/games/{demo.game.slug}/inboxes/").context["active"]}
    return rows[inbox.pk]


def _setup(demo, client, settings, new: int) -> tuple[Inbox, int]:
    """The honest reader has read everything; then ``new`` messages arrive. Returns the inbox and the position
    of the first new message."""
    settings.MAFIA_MESSAGES_PER_PAGE = 5
    inbox = _city1(demo)
    client.force_login(demo.honest)
    client.post(f"/inboxes/{inbox.public_id}/read/")
    assert _unread(client, demo, inbox) == 0
    read = Message.objects.filter(inbox=inbox).count()
    for i in range(new):
        posting.do_post_message(inbox, f"Новость {i + 1}", acting_user=fresh(demo.mafioso))
    return inbox, read + 1


def test_thread_opens_at_the_first_unread_and_marks_only_what_it_showed_L_INBOX_20(demo, client, settings):
    inbox, first = _setup(demo, client, settings, new=12)
    assert _unread(client, demo, inbox) == 12
    response = client.get(f"/inboxes/{inbox.public_id}/")
    assert response.status_code == 200
    page = response.context["page"]
    assert page.number == (first - 1) // 5 + 1
    assert response.context["first_unread"] == first
    html = response.content.decode()
    assert 'id="unread"' in html and "Новость 1</p>" in html
    shown_new = page.end_index() - first + 1
    assert _unread(client, demo, inbox) == 12 - shown_new
    # The next page continues where the reader stopped.
    response = client.get(f"/inboxes/{inbox.public_id}/")
    assert response.context["page"].number == page.number + 1
    assert _unread(client, demo, inbox) == max(0, 12 - shown_new - 5)


def test_jumping_to_the_newest_page_does_not_mark_skipped_messages_read_L_INBOX_20(demo, client, settings):
    inbox, first = _setup(demo, client, settings, new=12)
    mark_before = ReadMark.objects.get(user=demo.honest, inbox=inbox).last_read_at
    response = client.get(f"/inboxes/{inbox.public_id}/?page=last")
    assert response.status_code == 200 and response.context["page"].number == response.context["page"].paginator.num_pages
    assert ReadMark.objects.get(user=demo.honest, inbox=inbox).last_read_at == mark_before
    assert _unread(client, demo, inbox) == 12
    assert f'href="?page={(first - 1) // 5 + 1}#unread"' in response.content.decode()


def test_mark_all_read_is_explicit_and_clears_the_count_L_INBOX_20(demo, client, settings):
    inbox, _first = _setup(demo, client, settings, new=7)
    response = client.post(f"/inboxes/{inbox.public_id}/read/")
    assert response.status_code == 302 and response["Location"] == f"/inboxes/{inbox.public_id}/?page=last#latest"
    assert _unread(client, demo, inbox) == 0
    # With nothing unread the thread opens on its newest page, with no unread marker.
    response = client.get(f"/inboxes/{inbox.public_id}/")
    assert response.context["first_unread"] is None
    assert response.context["page"].number == response.context["page"].paginator.num_pages
    assert 'id="unread"' not in response.content.decode()


def test_mark_all_read_of_a_forbidden_inbox_is_404_and_changes_nothing(demo, client):
    mafia2 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=2)
    client.force_login(demo.honest)
    assert client.post(f"/inboxes/{mafia2.public_id}/read/").status_code == 404
    assert client.get(f"/inboxes/{mafia2.public_id}/read/").status_code == 405
    assert not ReadMark.objects.filter(user=demo.honest, inbox=mafia2).exists()
