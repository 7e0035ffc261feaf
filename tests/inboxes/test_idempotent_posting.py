"""Idempotent posting: a form re-submitted (a double click, a network retry) stores one message and one secret
inbox (L-INBOX-21 messages, L-INBOX-13 secret inboxes). The form carries a fresh key per rendering; the service
checks it inside its transaction, backed by a unique constraint."""
from __future__ import annotations

import re

import pytest
from django.db import IntegrityError, transaction
from django.utils.translation import override

from cities.models import GameEvent
from inboxes import posting, selectors, services
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput
from tests.conftest import fresh

KEY = re.compile(r'name="idempotency_key" value="([^"]+)"')


def _city1(demo):
    return Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)


def test_a_double_submitted_post_form_stores_one_message_L_INBOX_21(demo, client):
    inbox = _city1(demo)
    client.force_login(demo.honest)
    page = client.get(f"/inboxes/{inbox.public_id}/").content.decode()
    key = KEY.search(page).group(1)
    assert KEY.search(client.get(f"/inboxes/{inbox.public_id}/").content.decode()).group(1) != key  # fresh per page
    before = Message.objects.filter(inbox=inbox).count()
    events = GameEvent.objects.filter(kind="message.posted").count()
    answers = [client.post(f"/inboxes/{inbox.public_id}/", {"text": "Один раз", "idempotency_key": key})
               for _ in range(3)]
    assert [a.status_code for a in answers] == [302, 302, 302]
    assert len({a["Location"] for a in answers}) == 1
    assert Message.objects.filter(inbox=inbox).count() == before + 1
    assert Message.objects.filter(inbox=inbox, body="Один раз").count() == 1
    assert GameEvent.objects.filter(kind="message.posted").count() == events + 1


def test_two_renderings_of_the_form_post_two_messages_L_INBOX_21(demo, client):
    inbox = _city1(demo)
    client.force_login(demo.honest)
    keys = [KEY.search(client.get(f"/inboxes/{inbox.public_id}/").content.decode()).group(1) for _ in range(2)]
    for key in keys:
        assert client.post(f"/inboxes/{inbox.public_id}/", {"text": "Дважды", "idempotency_key": key}).status_code == 302
    assert Message.objects.filter(inbox=inbox, body="Дважды").count() == 2


def test_the_service_returns_the_stored_message_for_a_repeated_key_L_INBOX_21(demo):
    inbox = _city1(demo)
    first = posting.do_post_message(inbox, "Ключ", acting_user=fresh(demo.honest), idempotency_key="k" * 22)
    again = posting.do_post_message(inbox, "Ключ", acting_user=fresh(demo.honest), idempotency_key="k" * 22)
    assert again.pk == first.pk
    # Another author with the same key is another submission.
    other = posting.do_post_message(inbox, "Ключ", acting_user=fresh(demo.mafioso), idempotency_key="k" * 22)
    assert other.pk != first.pk
    assert Message.objects.filter(inbox=inbox, body="Ключ").count() == 2


def test_the_database_refuses_a_second_message_with_the_same_key_L_INBOX_21(demo):
    inbox = _city1(demo)
    first = posting.do_post_message(inbox, "Раз", acting_user=fresh(demo.honest), idempotency_key="q" * 22)
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(inbox=inbox, author_user=first.author_user, author_name="x", body="x", body_html="x",
                               received_at=first.received_at, idempotency_key="q" * 22)


@pytest.mark.parametrize("key", [
    "short", "a" * 41, "k" * 2000, "!!<script>aaaaaaaaaaaaaaaaaaaa</script>", "\u0430" * 20,
    "a" * 20 + "\n" + "b" * 20])
def test_a_malformed_key_is_a_clear_400_and_stores_nothing_L_INBOX_21(demo, client, key):
    """The whole key must have the shape (a key of the shape inside a longer value once reached a 40-character
    column: a database error on PostgreSQL)."""
    inbox = _city1(demo)
    client.force_login(demo.honest)
    before = Message.objects.filter(inbox=inbox).count()
    response = client.post(f"/inboxes/{inbox.public_id}/", {"text": "x", "idempotency_key": key},
                           HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 400
    assert "Форма устарела: обновите страницу." in response.content.decode()  # a Lepra game speaks Russian
    assert Message.objects.filter(inbox=inbox).count() == before


def test_a_double_submitted_secret_inbox_form_creates_one_inbox_L_INBOX_13(demo, client):
    client.force_login(demo.honest)
    url = f"/games/{demo.game.slug}/inboxes/secret/new/"
    page = client.get(url).content.decode()
    key = KEY.search(page).group(1)
    other = demo.seat("mafioso")
    answers = [client.post(url, {"title": "Заговор", "members": [other.public_id], "idempotency_key": key})
               for _ in range(2)]
    assert [a.status_code for a in answers] == [302, 302]
    secret = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.SECRET, title="Заговор")
    assert {a["Location"] for a in answers} == {f"/inboxes/{secret.public_id}/"}
    assert GameEvent.objects.filter(kind="inbox.created", payload__inbox=secret.pk).count() == 1


def test_a_secret_inbox_key_of_another_account_is_refused_L_INBOX_13(demo):
    first = services.do_create_secret_inbox(demo.game, title="Своё", members=[demo.seat("mafioso")],
                                            acting_user=fresh(demo.honest), idempotency_key="s" * 22)
    again = services.do_create_secret_inbox(demo.game, title="Своё", members=[demo.seat("mafioso")],
                                            acting_user=fresh(demo.honest), idempotency_key="s" * 22)
    assert again.pk == first.pk
    with override("en"), pytest.raises(InvalidInput) as exc:
        services.do_create_secret_inbox(demo.game, title="Чужое", members=[demo.seat("honest")],
                                        acting_user=fresh(demo.mafioso), idempotency_key="s" * 22)
    assert str(exc.value) == "This form is out of date: reload the page."
    assert Inbox.objects.filter(game=demo.game, kind=LepraInboxKind.SECRET, title__in=["Своё", "Чужое"]).count() == 1


def _personal(demo, user):
    return Inbox.objects.get(game=demo.game, kind=LepraInboxKind.PERSONAL, resident__user=user, rolled_over_at__isnull=True)


STALE = ("This form was already used to post another message, so nothing was posted. Your text is kept: send it "
         "again to post it.")


def test_a_key_reused_for_another_inbox_or_text_is_refused_not_dropped_L_INBOX_21(demo):
    city, personal = _city1(demo), _personal(demo, demo.honest)
    first = posting.do_post_message(city, "Первое", acting_user=fresh(demo.honest), idempotency_key="r" * 22)
    with override("en"):
        with pytest.raises(InvalidInput) as other_inbox:
            posting.do_post_message(personal, "Первое", acting_user=fresh(demo.honest), idempotency_key="r" * 22)
        with pytest.raises(InvalidInput) as other_text:
            posting.do_post_message(city, "Второе", acting_user=fresh(demo.honest), idempotency_key="r" * 22)
    assert str(other_inbox.value) == str(other_text.value) == STALE
    assert not Message.objects.filter(inbox=personal, body="Первое").exists()
    assert list(Message.objects.filter(author_user=demo.honest, idempotency_key="r" * 22)) == [first]
    assert not Message.objects.filter(body="Второе").exists()


def test_the_thread_page_refuses_a_reused_key_in_words_and_a_fresh_key_posts_it_L_INBOX_21(demo, client):
    city, personal = _city1(demo), _personal(demo, demo.honest)
    client.force_login(demo.honest)
    key = KEY.search(client.get(f"/inboxes/{city.public_id}/").content.decode()).group(1)
    assert client.post(f"/inboxes/{city.public_id}/", {"text": "В город", "idempotency_key": key}).status_code == 302
    for inbox, text in ((personal, "В личку"), (city, "Снова в город")):
        response = client.post(f"/inboxes/{inbox.public_id}/", {"text": text, "idempotency_key": key},
                               HTTP_ACCEPT_LANGUAGE="en")
        assert response.status_code == 400
        page = response.content.decode()
        with override("ru"):
            assert selectors.stale_post_form().message in page
        assert not Message.objects.filter(body=text).exists()
        fresh_key = KEY.search(page).group(1)
        assert fresh_key != key
        assert client.post(f"/inboxes/{inbox.public_id}/", {"text": text, "idempotency_key": fresh_key}).status_code == 302
        assert Message.objects.filter(inbox=inbox, body=text).count() == 1
    assert Message.objects.filter(inbox=city, body="В город").count() == 1


def test_an_open_page_gets_the_refusal_and_a_fresh_key_for_a_reused_one_L_INBOX_21(demo, client):
    city = _city1(demo)
    client.force_login(demo.honest)
    key = KEY.search(client.get(f"/inboxes/{city.public_id}/").content.decode()).group(1)
    assert client.post(f"/inboxes/{city.public_id}/", {"text": "Раз", "idempotency_key": key}).status_code == 302
    response = client.post(f"/inboxes/{city.public_id}/", {"text": "Два", "idempotency_key": key}, HTTP_HX_REQUEST="true")
    assert (response.status_code, response["X-Post-Refused"]) == (200, "400")
    body = response.content.decode()
    with override("ru"):
        assert selectors.stale_post_form().message in body
    fresh_key = re.search(r'name="idempotency_key" value="([^"]+)" id="id_idempotency_key" hx-swap-oob="true"',
                          body).group(1)
    assert fresh_key != key and not Message.objects.filter(body="Два").exists()
