"""Messages (issue 3 item 6, L-INBOX-21): the author edits for 10 minutes in discussion inboxes, every revision
stays and every reader sees it; moderators hide a message, readers see that it was hidden, moderators see the
text; nothing is deleted. Pages work without JavaScript (links and forms), addressed by thread position."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.translation import override

from cities.models import GameEvent
from inboxes import membership_services, posting, services
from inboxes.models import Inbox, Message, MessageRevision
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from tests.conftest import fresh

K = LepraInboxKind


def city1(demo) -> Inbox:
    return Inbox.objects.get(game=demo.game, kind=K.CITY, city__number=1, rolled_over_at__isnull=True)


def position(message: Message) -> int:
    return list(Message.objects.filter(inbox=message.inbox_id).order_by("received_at", "id").values_list("pk", flat=True)).index(message.pk) + 1


def test_the_author_edits_within_10_minutes_and_every_revision_stays_L_INBOX_21(demo):
    t0 = timezone.now()
    message = posting.do_post_message(city1(demo), "Первый вариант", acting_user=fresh(demo.honest), now=t0)
    membership_services.do_edit_message(message, "Второй вариант", acting_user=fresh(demo.honest), now=t0 + timedelta(minutes=3))
    membership_services.do_edit_message(message, "Третий **вариант**", acting_user=fresh(demo.honest),
                             now=t0 + timedelta(minutes=9, seconds=59))
    message.refresh_from_db()
    assert (message.body, message.body_html) == ("Третий **вариант**", "<p>Третий <strong>вариант</strong></p>\n")
    assert message.edited_at == t0 + timedelta(minutes=9, seconds=59)
    assert list(MessageRevision.objects.filter(message=message).values_list("body", "replaced_at")) == [
        ("Первый вариант", t0 + timedelta(minutes=3)), ("Второй вариант", t0 + timedelta(minutes=9, seconds=59))]
    assert GameEvent.objects.filter(kind="message.edited").count() == 2
    with override("en"), pytest.raises(WrongState) as exc:
        membership_services.do_edit_message(message, "Поздно", acting_user=fresh(demo.honest), now=t0 + timedelta(minutes=10))
    assert str(exc.value) == "A message can be edited only within 10 minutes of posting."
    assert MessageRevision.objects.filter(message=message).count() == 2


@pytest.mark.parametrize("case, error_class, text", [
    ("other", NotAllowed, "Only the author may edit a message."),
    ("court", NotAllowed, "Messages in this inbox can never be edited."),
    ("voting", NotAllowed, "Messages in this inbox can never be edited."),
    ("hidden", WrongState, "A hidden message cannot be edited."),
    ("banned", NotAllowed, "You are banned in this inbox."),
    ("unchanged", InvalidInput, "The text is unchanged."),
    ("empty", InvalidInput, "The message is empty."),
    ("unreadable", NotAllowed, "No such inbox."),
])
def test_edit_refusals_change_nothing_L_INBOX_21(demo, case, error_class, text):
    now = timezone.now()
    inbox, author, editor, new_text = city1(demo), demo.honest, demo.honest, "Новый текст"
    if case == "court":
        inbox, author, editor = Inbox.objects.get(game=demo.game, kind=K.COURT, rolled_over_at__isnull=True), demo.judge, demo.judge
    elif case == "voting":  # a real voting session (issue 4): only a keyword can be posted there (L-VOTE-3)
        from tests.rulesets.lepra.day.day_helpers import OPENS, city1_day, nominate_and_open
        nominate_and_open(demo, city1_day(demo), [demo.seat("mafioso")])
        inbox, now = Inbox.objects.get(kind=K.VOTING, resident=demo.seat("mafioso")), OPENS + timedelta(minutes=1)
    original = "казнить" if case == "voting" else "Исходный текст"
    message = posting.do_post_message(inbox, original, acting_user=fresh(author), now=now)
    if case == "other":
        editor = demo.mafioso
    elif case == "hidden":
        membership_services.do_hide_message(message, acting_user=fresh(demo.tribune1), now=now)
    elif case == "banned":
        services.do_ban_member(inbox, demo.seat("honest"), acting_user=fresh(demo.tribune1), now=now)
    elif case == "unchanged":
        new_text = "Исходный текст"
    elif case == "empty":
        new_text = " "
    elif case == "unreadable":
        editor = demo.resident2
    with override("en"), pytest.raises(error_class) as exc:
        membership_services.do_edit_message(message, new_text, acting_user=fresh(editor), now=now + timedelta(minutes=1))
    assert str(exc.value) == text
    message.refresh_from_db()
    assert message.body == original and message.edited_at is None
    assert not MessageRevision.objects.filter(message=message).exists()


def test_edit_page_for_the_author_and_revisions_shown_to_every_reader_L_INBOX_21(demo, client):
    message = posting.do_post_message(city1(demo), "Черновик мысли", acting_user=fresh(demo.honest))
    pos = position(message)
    thread = f"/inboxes/{message.inbox.public_id}/"
    edit_url = f"/inboxes/{message.inbox.public_id}/n{pos}/edit/"
    client.force_login(demo.honest)
    assert f'href="{edit_url}"' in client.get(thread).content.decode()
    form = client.get(edit_url)
    assert form.status_code == 200 and "Черновик мысли" in form.content.decode()
    response = client.post(edit_url, {"text": "Чистовик мысли"})
    assert response.status_code == 302 and response["Location"].endswith(f"#n{pos}")
    # Another reader sees the new text and the earlier version, and gets no edit link or form.
    client.force_login(demo.mafioso)
    page = client.get(thread).content.decode()
    assert "<p>Чистовик мысли</p>" in page and "<p>Черновик мысли</p>" in page
    assert f'href="{edit_url}"' not in page
    other = client.get(edit_url)
    assert other.status_code == 403 and "Чистовик мысли" not in other.content.decode()
    assert client.post(edit_url, {"text": "Подмена"}).status_code == 403
    message.refresh_from_db()
    assert message.body == "Чистовик мысли"
    # An unreadable inbox or a position beyond the thread is a 404.
    client.force_login(demo.resident2)
    assert client.get(edit_url).status_code == 404
    client.force_login(demo.honest)
    assert client.get(f"/inboxes/{message.inbox.public_id}/n{pos + 1}/edit/").status_code == 404


def test_a_moderator_hides_a_message_readers_see_it_was_hidden_moderators_see_the_text_L_INBOX_21(demo, client):
    message = posting.do_post_message(city1(demo), "Оскорбительный текст", acting_user=fresh(demo.mafioso))
    pos = position(message)
    thread = f"/inboxes/{message.inbox.public_id}/"
    hide_url = f"/inboxes/{message.inbox.public_id}/n{pos}/hide/"
    client.force_login(demo.honest)
    assert f'action="{hide_url}"' not in client.get(thread).content.decode()
    assert client.post(hide_url).status_code == 403
    message.refresh_from_db()
    assert message.is_hidden is False
    client.force_login(demo.tribune1)
    assert f'action="{hide_url}"' in client.get(thread).content.decode()
    response = client.post(hide_url)
    assert response.status_code == 302
    message.refresh_from_db()
    assert message.is_hidden and message.hidden_by == demo.tribune1 and message.hidden_at is not None
    assert Message.objects.filter(pk=message.pk).exists()  # nothing is deleted
    assert '<div class="body hidden-text"><p>Оскорбительный текст</p>' in client.get(thread).content.decode()
    client.force_login(demo.honest)
    page = client.get(thread).content.decode()
    assert "Оскорбительный текст" not in page
    assert re.search(rf'<article class="message hidden" id="n{pos}"', page)
    # The author cannot read it back through the edit form either (a hidden message is not editable).
    client.force_login(demo.mafioso)
    edit = client.get(f"/inboxes/{message.inbox.public_id}/n{pos}/edit/")
    assert edit.status_code == 403 and "Оскорбительный текст" not in edit.content.decode()
    with override("en"), pytest.raises(WrongState) as exc:
        membership_services.do_hide_message(message, acting_user=fresh(demo.procurator))
    assert (str(exc.value), exc.value.rule) == ("This message is already hidden.", "L-INBOX-21")


def test_only_moderators_hide_L_INBOX_21(demo):
    message = posting.do_post_message(city1(demo), "Текст", acting_user=fresh(demo.mafioso))
    for persona, text in (("honest", "Only the organizer of this inbox or the Procurator of the game may hide messages."),
                          ("arbiter", "No such inbox."), ("tribune2", "No such inbox.")):
        with override("en"), pytest.raises(NotAllowed) as exc:
            membership_services.do_hide_message(message, acting_user=fresh(getattr(demo, persona)))
        assert str(exc.value) == text, persona
    membership_services.do_hide_message(message, acting_user=fresh(demo.procurator))
    message.refresh_from_db()
    assert message.is_hidden
