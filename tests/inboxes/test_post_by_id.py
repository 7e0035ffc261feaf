"""The page's post: ``do_post_message_by_id`` reads the inbox through the access policy and locks its row in the
same statement (``access_inbox_by_id(..., lock=True)``). It answers as the page always did: one 404 for an inbox
the poster may not read, whatever the text; refusals in the game's language; the vote counted once (L-VOTE-2,
L-INBOX-17). The lock itself is shown by the race with the Tribune's close (``tests/voting/test_close_race.py``)."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import transaction
from django.http import Http404
from django.test import Client
from django.urls import reverse
from django.utils import translation

from cities.errors import InvalidInput
from inboxes import policies
from inboxes.models import Inbox, InboxKind, Message
from inboxes.services import do_post_message_by_id
from tests.conftest import fresh
from tests.voting.day_helpers import OPENS, city1_day, nominate_and_open
from voting.models import LepraVote, VoteState

pytestmark = pytest.mark.django_db


@pytest.fixture
def voting(demo):
    day = city1_day(demo)
    nominee, other = day.plain[0], day.plain[1]
    nominate_and_open(demo, day, [nominee, other])
    voter = next(r for r in day.plain if r not in (nominee, other))
    return day.inbox_of(nominee), voter


def test_a_vote_posted_by_public_id_is_stored_and_counted_once_L_VOTE_2(voting):
    inbox, voter = voting
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=False):
        message = do_post_message_by_id(inbox.public_id, "казнить", acting_user=fresh(voter.user))
    assert message.inbox.pk == inbox.pk and message.author_resident_id == voter.pk and message.body == "казнить"
    assert list(LepraVote.objects.filter(inbox=inbox, voter=voter).values_list("state", "message_id")) == [
        (VoteState.STANDING, message.pk)]


def test_an_unreadable_inbox_is_the_same_404_whatever_the_text_and_nothing_is_stored_L_INBOX_17(demo):
    mafia = Inbox.objects.filter(game=demo.game, kind=InboxKind.MAFIA).order_by("id").first()
    before = Message.objects.count()
    for text, inbox_id in (("hello", mafia.public_id), ("", mafia.public_id), ("hello", "zzzzzzzzzzzz"),
                           ("hello", "not an id!")):
        with pytest.raises(Http404, match="No such inbox."):
            do_post_message_by_id(inbox_id, text, acting_user=fresh(demo.honest))
    assert Message.objects.count() == before


def test_refusals_are_worded_in_the_games_language_whatever_is_active_L_VOTE_2(voting):
    inbox, voter = voting
    with (time_machine.travel(OPENS + timedelta(minutes=1), tick=False), translation.override("en"),
          pytest.raises(InvalidInput, match="^Сообщение пустое.$")):
        do_post_message_by_id(inbox.public_id, "\u200b", acting_user=fresh(voter.user))
    assert not Message.objects.filter(inbox=inbox).exists()


def test_a_second_vote_through_the_page_is_refused_with_status_400_and_not_stored_L_VOTE_2(voting):
    inbox, voter = voting
    client = Client()
    client.force_login(voter.user)
    url = reverse("inbox_thread", args=[inbox.public_id])
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=False):
        assert client.post(url, {"text": "казнить"}).status_code == 302
        again = client.post(url, {"text": "казнить"})
    assert again.status_code == 400
    assert Message.objects.filter(inbox=inbox, author_resident=voter).count() == 1
    assert LepraVote.objects.filter(inbox=inbox, voter=voter).count() == 1


def test_a_locking_read_is_a_logged_in_users_and_marks_the_inbox(voting, demo):
    """(Outside a transaction the locking read raises ``TransactionManagementError``: ``tests/kernel/test_prepared``.)"""
    inbox, voter = voting
    with transaction.atomic(), pytest.raises(ValueError, match="logged-in"):
        policies.access_inbox_by_id(demo.anonymous, inbox.public_id, lock=True)
    with transaction.atomic():
        locked = policies.access_inbox_by_id(fresh(voter.user), inbox.public_id, lock=True)
    assert locked.pk == inbox.pk and locked.row_locked is True
    assert policies.access_inbox_by_id(fresh(voter.user), inbox.public_id).row_locked is False
