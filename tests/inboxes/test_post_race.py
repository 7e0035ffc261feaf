"""Posts that wait for their inbox's lock decide on what was committed before it was granted (``lock_for_post``):
the same form sent twice at once stores one vote and is answered with it both times (L-INBOX-21); a ban committed
while a post waits refuses it (L-INBOX-18). The lock is held by a transaction of the test while the posts
queue behind it. Full form on PostgreSQL (row locks); on SQLite the posts run one after the other.
"""
from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.db import connection, connections, transaction

from cities.errors import RuleViolation
from inboxes.models import Inbox, Membership, MembershipState, Message
from inboxes.services import do_post_message, do_post_message_by_id
from tests.voting.day_helpers import OPENS
from tests.voting.test_lepra_day_concurrency import _big_city_voting
from voting.models import LepraVote, VoteState


def _queue_behind_lock(inbox: Inbox, posts, change=None) -> dict:
    """Hold ``inbox``'s row lock (and run ``change`` under it) while every one of ``posts`` (callables) starts in a
    thread of its own and waits for it; then commit and let them go on. Returns {index: result or error text}."""
    outcomes: dict = {}

    def run(k, post):
        try:
            outcomes[k] = post()
        except RuleViolation as exc:
            outcomes[k] = str(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(k, post)) for k, post in enumerate(posts)]
    with transaction.atomic():
        assert list(Inbox.objects.select_for_update().filter(pk=inbox.pk).values_list("pk", flat=True)) == [inbox.pk]
        if change is not None:
            change()
        for thread in threads:
            thread.start()
        if connection.vendor == "postgresql":  # until every post waits for the lock
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and _waiting() < len(posts):
                time.sleep(0.05)
            assert _waiting() == len(posts)
        else:
            time.sleep(0.2)
    for thread in threads:
        thread.join(60)
    return outcomes


def _waiting() -> int:
    """How many other sessions of the test database wait for a lock now (the statistics read afresh: inside a
    transaction they are a snapshot taken at the first read)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                       "AND datname = current_database() AND pid <> pg_backend_pid()")
        return cursor.fetchone()[0]


@pytest.mark.postgres
def test_the_same_form_sent_twice_at_once_stores_one_vote_and_answers_both_with_it_L_INBOX_21(transactional_db):
    inbox, voters = _big_city_voting(3)
    voter = get_user_model().objects.get(pk=voters[0].user_id)

    def send():
        user = get_user_model().objects.get(pk=voter.pk)
        return do_post_message_by_id(inbox.public_id, "казнить", acting_user=user, idempotency_key="r" * 22).pk

    with time_machine.travel(OPENS + timedelta(minutes=1), tick=True):
        outcomes = _queue_behind_lock(inbox, [send, send])
    stored = list(Message.objects.filter(inbox=inbox, author_user=voter).values_list("pk", flat=True))
    assert len(stored) == 1
    assert outcomes == {0: stored[0], 1: stored[0]}
    assert LepraVote.objects.filter(inbox=inbox, voter=voters[0], state=VoteState.STANDING).count() == 1


@pytest.mark.postgres
def test_a_post_waiting_for_its_inbox_is_refused_by_a_ban_committed_before_the_lock_is_granted_L_INBOX_18(
        transactional_db):
    inbox, voters = _big_city_voting(3)
    users = [get_user_model().objects.get(pk=v.user_id) for v in voters[:2]]
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=True):
        until = OPENS + timedelta(days=1)

        def ban():  # under the inbox's lock, as the moderation service takes it
            Membership.objects.filter(inbox=inbox, resident=voters[0]).update(
                state=MembershipState.BANNED, banned_until=until)

        outcomes = _queue_behind_lock(inbox, [
            lambda: do_post_message(inbox, "казнить", acting_user=users[0]).pk,
            lambda: do_post_message_by_id(inbox.public_id, "казнить", acting_user=users[1]).pk,
        ], change=ban)
    assert isinstance(outcomes[0], str) and isinstance(outcomes[1], int), outcomes
    assert list(Message.objects.filter(inbox=inbox).values_list("author_user", flat=True)) == [users[1].pk]
    assert list(LepraVote.objects.filter(inbox=inbox, state=VoteState.STANDING).values_list("voter", flat=True)) == [
        voters[1].pk]
