"""Posts that wait for their inbox's lock decide on what was committed before it was granted (``lock_for_post``):
the same form sent twice at once stores one vote and is answered with it both times (L-INBOX-21); a ban, a kill,
a death, the game's end or a role handed over, committed while a post waits, refuses it; a seat replaced posts as its
new holder; queued posts commit in the order of their receive times (L-VOTE-8). The lock is held by a transaction of the test while the posts
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
from django.http import Http404

from cities.models import Game, GameStatus, LifeStatus, Resident, StaffRole
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.staff_kinds import StaffKind
from inboxes.posting import do_post_message, do_post_message_by_id
from kernel.errors import RuleViolation
from tests.rulesets.lepra.day.day_helpers import OPENS, _big_city_voting
from rulesets.lepra.models import LepraVote, VoteState


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


def _city_of_honest(demo):
    city = (Inbox.objects.filter(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, killed_at__isnull=True,
                                 rolled_over_at__isnull=True).order_by("-id").first())
    return city, Resident.objects.get(game=demo.game, user=demo.honest)


def _send(user_pk, inbox, text="Я здесь.", by_id=True):
    """A post by the user ``user_pk`` in ``inbox``, through the page's path or the service's; its message id, or
    "404" for the page's not-found."""
    def post():
        user = get_user_model().objects.get(pk=user_pk)
        try:
            if by_id:
                return do_post_message_by_id(inbox.public_id, text, acting_user=user).pk
            return do_post_message(inbox, text, acting_user=user).pk
        except Http404:
            return "404"
    return post


#: Changes to rows a post does not lock (the inbox's own columns aside), committed while it waits for its inbox.
CHANGES = {
    "inbox killed": lambda city, seat, tribune: Inbox.objects.filter(pk=city.pk).update(killed_at=OPENS),
    "seat died": lambda city, seat, tribune: Resident.objects.filter(pk=seat.pk).update(
        status=LifeStatus.DEAD, died_at=OPENS),
    "game finished": lambda city, seat, tribune: Game.objects.filter(pk=city.game_id).update(
        status=GameStatus.FINISHED),
    "Tribune's role handed over": lambda city, seat, tribune: StaffRole.objects.filter(pk=tribune.pk).update(
        user=get_user_model().objects.create_user("other-trib", "other-trib@example.com", "x-secret-123")),
}


@pytest.mark.postgres
@pytest.mark.parametrize("by_id", [True, False], ids=["page", "service"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_committed_while_a_post_waits_for_its_inbox_refuses_it_L_INBOX_17(transactional_db, demo, change,
                                                                                    by_id):
    city, seat = _city_of_honest(demo)
    tribune = StaffRole.objects.get(game=city.game_id, kind=StaffKind.TRIBUNE, city=city.city_id)
    poster = tribune.user_id if change == "Tribune's role handed over" else seat.user_id
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=True):
        outcomes = _queue_behind_lock(city, [_send(poster, city, by_id=by_id)],
                                      change=lambda: CHANGES[change](city, seat, tribune))
    assert isinstance(outcomes[0], str), outcomes
    assert not Message.objects.filter(inbox=city, body="Я здесь.").exists()


@pytest.mark.postgres
@pytest.mark.parametrize("by_id", [True, False], ids=["page", "service"])
def test_a_seat_replaced_while_its_posts_wait_posts_as_its_new_holder_alone_L_INBOX_17(transactional_db, demo,
                                                                                       by_id):
    city, seat = _city_of_honest(demo)
    newcomer = get_user_model().objects.create_user("newcomer", "newcomer@example.com", "x-secret-123",
                                                    display_name="Newcomer")
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=True):
        outcomes = _queue_behind_lock(city, [_send(seat.user_id, city, by_id=by_id),
                                             _send(newcomer.pk, city, text="Я новенький.", by_id=by_id)],
                                      change=lambda: Resident.objects.filter(pk=seat.pk).update(user=newcomer))
    assert isinstance(outcomes[0], str) and isinstance(outcomes[1], int), outcomes
    message = Message.objects.get(pk=outcomes[1])
    assert (message.author_resident_id, message.author_user_id) == (seat.pk, newcomer.pk)
    assert not Message.objects.filter(inbox=city, body="Я здесь.").exists()


@pytest.mark.postgres
def test_posts_queued_behind_an_inbox_commit_in_the_order_of_their_receive_times_L_VOTE_8(transactional_db, demo):
    city, _seat = _city_of_honest(demo)
    members = list(Resident.objects.filter(game=demo.game, city=city.city_id, status=LifeStatus.ALIVE)
                   .order_by("id")[:6])
    posts = [_send(m.user_id, city, text=f"Сообщение {k}.", by_id=k % 2 == 0) for k, m in enumerate(members)]
    posts.append(_send(demo.tribune1.pk, city, text="От Трибуна."))
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=True):
        outcomes = _queue_behind_lock(city, posts)
    assert all(isinstance(v, int) for v in outcomes.values()), outcomes
    times = list(Message.objects.filter(pk__in=outcomes.values()).order_by("id").values_list("received_at", flat=True))
    assert len(times) == len(posts) and times == sorted(times) and len(set(times)) == len(times)
