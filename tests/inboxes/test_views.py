"""Inbox and game pages over HTTP: exact status codes and messages (L-INBOX-17, L-INBOX-16, L-STAFF-6)."""
from __future__ import annotations

import re
from datetime import timedelta

from django.utils import timezone

from inboxes import posting, services
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from tests.conftest import fresh


def city1(demo) -> Inbox:
    return Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)


def test_member_posts_through_the_form_and_sees_the_message(demo, client):
    inbox = city1(demo)
    client.force_login(demo.honest)
    response = client.post(f"/inboxes/{inbox.public_id}/", {"text": "Голосую головой."})
    assert response.status_code == 302
    assert response["Location"] == f"/inboxes/{inbox.public_id}/#latest"
    message = Message.objects.filter(inbox=inbox).latest("received_at")
    assert (message.body, message.author_resident) == ("Голосую головой.", demo.seat("honest"))
    page = client.get(f"/inboxes/{inbox.public_id}/").content.decode()
    assert "<p>Голосую головой.</p>" in page


def test_empty_post_is_400_with_the_message_and_changes_nothing(demo, client):
    inbox = city1(demo)
    before = Message.objects.filter(inbox=inbox).count()
    client.force_login(demo.honest)
    response = client.post(f"/inboxes/{inbox.public_id}/", {"text": "   "})
    assert response.status_code == 400
    assert "Сообщение пустое." in response.content.decode()
    assert Message.objects.filter(inbox=inbox).count() == before


def test_banned_member_gets_403_with_the_reason_and_still_reads_L_INBOX_17(demo, client):
    inbox = city1(demo)
    services.do_ban_member(inbox, demo.seat("honest"), acting_user=fresh(demo.tribune1))
    before = Message.objects.filter(inbox=inbox).count()
    client.force_login(demo.honest)
    page = client.get(f"/inboxes/{inbox.public_id}/")
    assert page.status_code == 200
    assert "Вы забанены в этом ящике." in page.content.decode()
    assert 'name="text"' not in page.content.decode()  # no post form
    response = client.post(f"/inboxes/{inbox.public_id}/", {"text": "Пустите!"})
    assert response.status_code == 403
    assert "Вы забанены в этом ящике." in response.content.decode()
    assert Message.objects.filter(inbox=inbox).count() == before


def test_posting_in_a_killed_inbox_is_409(demo, client):
    inbox = city1(demo)
    Inbox.objects.filter(pk=inbox.pk).update(killed_at=timezone.now() - timedelta(minutes=1))
    client.force_login(demo.honest)
    response = client.post(f"/inboxes/{inbox.public_id}/", {"text": "Эй"})
    assert response.status_code == 409
    assert "Этот ящик закрыт." in response.content.decode()


def test_forbidden_and_missing_inboxes_are_the_same_404(demo, client):
    mafia2 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=2)
    client.force_login(demo.honest)
    forbidden = client.get(f"/inboxes/{mafia2.public_id}/")
    missing = client.get("/inboxes/99999999/")
    garbage = client.get("/inboxes/x1/")
    post = client.post(f"/inboxes/{mafia2.public_id}/", {"text": "привет"})
    assert [forbidden.status_code, missing.status_code, garbage.status_code, post.status_code] == [404] * 4
    def strip_csrf(response) -> str:
        return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())

    assert strip_csrf(forbidden) == strip_csrf(missing) == strip_csrf(garbage)
    assert Message.objects.filter(inbox=mafia2, body="привет").count() == 0


def test_logged_out_visitor_sees_public_pages_but_no_inbox(demo, client):
    game_page = client.get(f"/games/{demo.game.slug}/")
    assert game_page.status_code == 200
    text = game_page.content.decode()
    assert "Набор в демонстрационную партию" in text  # the recruitment post (L-INBOX-16)
    assert all(name in text for name in Membership.objects.filter(inbox=city1(demo)).values_list("resident__name", flat=True))
    assert client.get(f"/inboxes/{city1(demo).public_id}/").status_code == 404
    inboxes = client.get(f"/games/{demo.game.slug}/inboxes/")
    assert inboxes.status_code == 302 and inboxes["Location"].startswith("/accounts/login/")


def test_my_inboxes_counts_unread_per_viewer_and_reading_clears_it_L_INBOX_20(demo, client):
    inbox = city1(demo)
    posting.do_post_message(inbox, "Новость!", acting_user=fresh(demo.mafioso))
    client.force_login(demo.honest)
    rows = {i.pk: i.unread for i in client.get(f"/games/{demo.game.slug}/inboxes/").context["active"]}
    # Never opened: unread is everything received after the reader's own last post (posting marks read).
    last_own = Message.objects.filter(inbox=inbox, author_resident=demo.seat("honest")).latest("received_at").received_at
    assert rows[inbox.pk] == Message.objects.filter(inbox=inbox, received_at__gt=last_own).count() >= 2
    client.get(f"/inboxes/{inbox.public_id}/")
    rows = {i.pk: i.unread for i in client.get(f"/games/{demo.game.slug}/inboxes/").context["active"]}
    assert rows[inbox.pk] == 0
    posting.do_post_message(inbox, "И ещё одна.", acting_user=fresh(demo.mafioso))
    rows = {i.pk: i.unread for i in client.get(f"/games/{demo.game.slug}/inboxes/").context["active"]}
    assert rows[inbox.pk] == 1
    # The poster's own message does not count as unread for them.
    client.force_login(demo.mafioso)
    rows = {i.pk: i.unread for i in client.get(f"/games/{demo.game.slug}/inboxes/").context["active"]}
    assert rows[inbox.pk] == 0


def test_lepra_pages_are_in_russian(demo, client):
    client.force_login(demo.honest)
    text = client.get(f"/games/{demo.game.slug}/inboxes/").content.decode()
    assert "Мои ящики" in text and "Непрочитано" in text
    assert "My inboxes" not in text and "Unread" not in text


def test_resident_page_shows_own_role_and_hides_others(demo, client):
    mafioso = demo.seat("mafioso")
    client.force_login(demo.honest)
    page = client.get(f"/games/{demo.game.slug}/residents/{mafioso.public_id}/").content.decode()
    assert 'data-fact="alignment' not in page
    client.force_login(demo.mafioso)
    page = client.get(f"/games/{demo.game.slug}/residents/{mafioso.public_id}/").content.decode()
    assert '<dd data-fact="alignment:mafia">мафия</dd>' in page


def test_banned_members_are_marked_in_the_member_list(demo, client):
    inbox = city1(demo)
    services.do_ban_member(inbox, demo.seat("honest"), acting_user=fresh(demo.tribune1))
    client.force_login(demo.mafioso)
    members = client.get(f"/inboxes/{inbox.public_id}/").context["members"]
    states = {m.resident.name: m.state for m in members}
    assert states[demo.seat("honest").name] == MembershipState.BANNED
    assert len(states) == 20
