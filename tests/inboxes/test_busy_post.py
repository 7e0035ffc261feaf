"""A post that meets a busy database (its inbox's row held by a hung transaction longer than the lock timeout) is
refused in words, "busy, try again" (503 with Retry-After), the typed text kept in the form, nothing stored; never a
500 nor a web worker held until the statement timeout (DESIGN.md "The clock"). Every other view gets the same
answer from ``DatabaseBusyMiddleware``.

On PostgreSQL a real second session holds the row (``SELECT ... FOR UPDATE``) and the request's lock timeout is
300 ms; on SQLite, whose writers wait on one file lock, the post's service meets "database is locked".
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest
from django.db import OperationalError, connection, connections, transaction
from django.test import RequestFactory

from inboxes import posting
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.busy import DatabaseBusy, is_database_busy
from mafia_site.middleware import DatabaseBusyMiddleware

pytestmark = pytest.mark.postgres

BUSY_RU = "Сайт занят: сообщение не сохранено. Попробуйте ещё раз через несколько секунд; ваш текст остался в форме."
BUSY_PAGE_RU = ("Сайт занят: ничего не сохранено. Попробуйте ещё раз через несколько секунд (кнопка «Назад» браузера "
                "вернёт форму с тем, что вы ввели).")


def city1(demo) -> Inbox:
    return Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)


@contextmanager
def inbox_row_held(inbox: Inbox, monkeypatch):
    """The inbox's row locked by another session for the block (PostgreSQL), this session waiting 300 ms for a
    lock; on SQLite the post's write meets the file lock of another writer."""
    if connection.vendor != "postgresql":
        def locked(*args, **kwargs):
            raise OperationalError("database is locked")

        with monkeypatch.context() as patched:
            patched.setattr(posting, "do_post_message_by_id", locked)
            yield
        return
    held, release = threading.Event(), threading.Event()
    locked_rows = []

    def holder():
        try:
            with transaction.atomic():
                locked_rows.extend(Inbox.objects.select_for_update().filter(pk=inbox.pk))
                held.set()
                release.wait(30)
        finally:
            connections.close_all()

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(30)
        # The other session sees the row only when it is committed (a transactional test): else nothing is held.
        assert [row.pk for row in locked_rows] == [inbox.pk]
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '300ms'")  # the site's is 2 s (DATABASE_LOCK_TIMEOUT_MS)
        yield
    finally:
        release.set()
        thread.join(30)
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")


@pytest.mark.django_db(transaction=True)  # the demo committed, so that another session can lock its rows
def test_a_post_to_a_held_inbox_is_refused_busy_with_its_text_kept_L_INBOX_16(demo, client, monkeypatch):
    inbox = city1(demo)
    before = Message.objects.filter(inbox=inbox).count()
    client.force_login(demo.honest)
    text = "Голосую за Петрова, и вот почему: он молчал весь день."
    with inbox_row_held(inbox, monkeypatch):
        plain = client.post(f"/inboxes/{inbox.public_id}/", {"text": text, "idempotency_key": "k" * 32})
        htmx = client.post(f"/inboxes/{inbox.public_id}/", {"text": text, "idempotency_key": "k" * 32},
                           HTTP_HX_REQUEST="true")
    assert plain.status_code == 503 and plain["Retry-After"] == "5"
    page = plain.content.decode()
    assert BUSY_RU in page
    assert f">\n{text}</textarea>" in page  # the form comes back with the player's text
    assert 'value="kkkkkkkk' not in page  # a fresh form key: sending the text again is a new post
    assert htmx.status_code == 200 and htmx["X-Post-Refused"] == "503" and htmx["Retry-After"] == "5"
    assert BUSY_RU in htmx.content.decode()
    assert 'hx-swap-oob="true"' in htmx.content.decode()
    assert Message.objects.filter(inbox=inbox).count() == before
    # Once the row is free, the same text is stored.
    assert client.post(f"/inboxes/{inbox.public_id}/", {"text": text}).status_code == 302
    assert Message.objects.filter(inbox=inbox).latest("received_at").body == text


def _busy_error() -> OperationalError:
    """A real busy error of this database: a lock not obtained in time (PostgreSQL), a locked file (SQLite)."""
    if connection.vendor != "postgresql":
        return OperationalError("database is locked")
    held, release, caught = threading.Event(), threading.Event(), []

    def holder():
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("LOCK TABLE cities_clockpause IN ACCESS EXCLUSIVE MODE")
                held.set()
                release.wait(30)
        finally:
            connections.close_all()

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(30)
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '100ms'")
                cursor.execute("SELECT 1 FROM cities_clockpause")
        except OperationalError as exc:
            caught.append(exc)
    finally:
        release.set()
        thread.join(30)
    assert [e.__cause__.pgcode for e in caught] == ["55P03"]
    return caught[0]


def test_any_view_that_meets_a_busy_database_answers_503_busy_with_retry_after(demo):
    error = _busy_error()
    assert is_database_busy(error)
    assert not is_database_busy(OperationalError("server closed the connection unexpectedly"))
    assert not is_database_busy(ValueError("database is locked"))
    middleware = DatabaseBusyMiddleware(lambda request: None)
    factory = RequestFactory()
    request = factory.post("/staff/games/x/clock/", {"reason": "upgrade"})
    request.user = demo.honest
    page = middleware.process_exception(request, error)
    assert page.status_code == 503 and page["Retry-After"] == "5"
    assert BUSY_PAGE_RU in page.content.decode() and "<title>Занято, попробуйте ещё раз</title>" in page.content.decode()
    htmx = factory.post("/inboxes/x/", HTTP_HX_REQUEST="true")
    htmx.user = demo.honest
    fragment = middleware.process_exception(htmx, error)
    assert fragment.status_code == 200 and fragment["X-Post-Refused"] == "503"
    assert 'id="post-error"' in fragment.content.decode() and BUSY_RU in fragment.content.decode()
    assert middleware.process_exception(request, OperationalError("no such table")) is None
    assert str(DatabaseBusy()) == BUSY_RU
