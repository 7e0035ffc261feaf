"""Statement budgets of the hot paths (DESIGN.md "Tests": query-count aware; the benchmark's figures, README
"Benchmark"): the vote post, the thread page and the voting inbox page each run a pinned number of SQL
statements, the same with few or many messages, so that a regression (a repeated read, an N+1, a lost fold) fails
the suite. Counted as the bench server counts them (every statement run through Django's cursors), less the
savepoints of the test's own transaction, which a request in production does not have."""
from __future__ import annotations

from contextlib import contextmanager
from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test import Client
from django.urls import reverse

from inboxes import viewer_reads
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from tests.rulesets.lepra.day.day_helpers import OPENS, city1_day, nominate_and_open

#: The pinned budgets. Lower them when a cut lands; never raise them without saying why in the commit.
#: The vote's writes (the message under the id reserved under the inbox's lock, the read mark, the audit row and the
#: standing vote) go as one round trip on PostgreSQL (``kernel.prepared.execute_together``) and one by one on
#: SQLite, an in-process library with no round trip (and no sequence to reserve an id from).
#: A player's seats and staff roles are one statement (``inboxes.viewer_reads``); a vote reads its session with
#: its locked membership (``PostHook.locked_reads``), in the round trip that locks the inbox (``lock_for_post``).
VOTE_POST = 4 if connection.vendor == "postgresql" else 7
THREAD_PAGE = 7
VOTING_INBOX_PAGE = 9


class Counter:
    def __init__(self):
        self.statements: list[str] = []

    def __call__(self, execute, sql, params, many, context):
        if not sql.lstrip().upper().startswith(("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT")):
            self.statements.append(sql)
        return execute(sql, params, many, context)


@contextmanager
def counting():
    counter = Counter()
    with connection.execute_wrapper(counter):
        yield counter


@pytest.fixture
def voting(demo):
    day = city1_day(demo)
    nominee, other = day.plain[0], day.plain[1]
    nominate_and_open(demo, day, [nominee, other])
    inbox = day.inbox_of(nominee)
    city_inbox = Inbox.objects.get(kind=LepraInboxKind.CITY, city=day.city, rolled_over_at__isnull=True)
    voters = [r for r in day.plain if r not in (nominee, other)]
    return inbox, city_inbox, voters


def _fill(inbox, city_inbox, voters, rounds: int, start):
    """``rounds`` «казнить»/«не казнить» pairs by every voter in ``inbox`` and as many discussion messages."""
    at = start
    for _ in range(rounds):
        for voter in voters:
            for text in ("казнить", "не казнить"):
                at += timedelta(seconds=1)
                do_post_message(inbox, text, acting_user=voter.user, now=at)
                do_post_message(city_inbox, f"{text}?", acting_user=voter.user, now=at)
    return at


def _budgets(inbox, city_inbox, voter, at) -> tuple[int, int, int]:
    client = Client()
    client.force_login(voter.user)
    client.get(reverse("inbox_thread", args=[inbox.public_id]))  # warm: the read mark exists, the session is cached
    with time_machine.travel(at, tick=False):
        with counting() as vote:
            response = client.post(reverse("inbox_thread", args=[inbox.public_id]), {"text": "казнить"})
        assert response.status_code == 302, response.content[:500]
        with counting() as voting_page:
            assert client.get(reverse("inbox_thread", args=[inbox.public_id])).status_code == 200
        with counting() as thread:
            assert client.get(reverse("inbox_thread", args=[city_inbox.public_id])).status_code == 200
    return len(vote.statements), len(thread.statements), len(voting_page.statements)


def test_vote_post_and_the_two_pages_run_their_pinned_statements_with_few_and_many_messages_L_VOTE_2(voting):
    inbox, city_inbox, voters = voting
    voter, others = voters[0], voters[1:]
    at = OPENS + timedelta(minutes=1)
    few = _budgets(inbox, city_inbox, voter, at)
    do_post_message(inbox, "не казнить", acting_user=voter.user, now=at + timedelta(seconds=1))
    at = _fill(inbox, city_inbox, others, 6, at + timedelta(seconds=2))
    many = _budgets(inbox, city_inbox, voter, at + timedelta(seconds=1))
    assert few == many
    assert many == (VOTE_POST, THREAD_PAGE, VOTING_INBOX_PAGE)


def test_a_vote_decides_on_the_session_read_with_its_locked_membership_as_on_its_own_read_L_VOTE_2(voting):
    from django.db import transaction
    from django.utils import translation

    from inboxes import policies
    from kernel.errors import InvalidInput
    from rulesets.lepra.day.tally import LepraAccepted
    from rulesets.lepra.day.vote_posts import check_voting_post
    from tests.conftest import fresh

    inbox, _city_inbox, voters = voting
    voter = voters[0]
    at = OPENS + timedelta(minutes=1)
    do_post_message(inbox, "казнить", acting_user=voter.user, now=at)

    def decide(text, *, locked):
        user = fresh(voter.user)
        with transaction.atomic():
            policies.seat_in(user, inbox.game_id)  # the request's read of the viewer, as a post's page has done
            if locked:
                viewer_reads.lock_for_post(user, inbox.public_id)
            seat = policies.seat_in(user, inbox.game_id)
            assert hasattr(seat, "locked_reads") == locked
            try:
                with translation.override("ru"):
                    return check_voting_post(inbox, seat, text, at + timedelta(seconds=1))
            except InvalidInput as refusal:
                return str(refusal)

    for locked in (True, False):
        assert decide("не казнить", locked=locked) == LepraAccepted.RETRACTION
        assert decide("казнить", locked=locked) == "Вы уже голосуете здесь: повторно этот голос не засчитывается."


def test_a_re_submitted_form_writes_nothing_in_three_statements_L_INBOX_21(voting):
    from inboxes import posting
    from tests.conftest import fresh

    inbox, _city_inbox, voters = voting
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=False):
        first = posting.do_post_message_by_id(inbox.public_id, "казнить", acting_user=fresh(voters[0].user),
                                              idempotency_key="e" * 22)
        user = fresh(voters[0].user)
        with counting() as again:
            second = posting.do_post_message_by_id(inbox.public_id, "казнить", acting_user=user,
                                                   idempotency_key="e" * 22)
    assert second.pk == first.pk
    # The viewer's seats and roles, the lock with the inbox's read under it (which finds the key's message) and
    # that message: no write.
    assert len(again.statements) == 3
    assert not any(sql.lstrip().upper().startswith(("INSERT", "UPDATE", "EXECUTE")) or "; EXECUTE" in sql
                   for sql in again.statements[2:])
    assert Message.objects.filter(inbox=inbox).count() == 1
