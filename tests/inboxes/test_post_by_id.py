"""The page's post: ``do_post_message_by_id`` locks the inbox's row and reads it, once, through the access policy
(``access_inbox_for_post``, ``lock_for_post``). It answers as the page always did: one 404 for an inbox
the poster may not read, whatever the text; refusals in the game's language; the vote counted once (L-VOTE-2,
L-INBOX-17). The lock itself is shown by the race with the Tribune's close (``tests/rulesets/lepra/day/test_close_race.py``)."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import transaction
from django.http import Http404
from django.test import Client
from django.urls import reverse
from django.utils import translation

from inboxes import policies, viewer_reads
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message_by_id
from kernel.errors import InvalidInput
from tests.conftest import fresh
from tests.rulesets.lepra.day.day_helpers import OPENS, city1_day, nominate_and_open
from rulesets.lepra.models import LepraVote, VoteState

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
    mafia = Inbox.objects.filter(game=demo.game, kind=LepraInboxKind.MAFIA).order_by("id").first()
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


def test_a_posts_lock_reads_the_inbox_the_membership_and_the_form_key_once_the_lock_is_held_L_INBOX_21(voting, demo):
    """``lock_for_post``: one round trip for a member (the lock, then the read), the inbox read afresh with its game,
    the message id reserved where the database has a sequence, the form key's message found. (Outside a
    transaction it raises, as every locking read does: ``tests/kernel/test_prepared``.)"""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    inbox, voter = voting
    user = fresh(voter.user)
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=False):
        posted = do_post_message_by_id(inbox.public_id, "казнить", acting_user=fresh(voter.user),
                                       idempotency_key="k" * 22)
    with transaction.atomic():
        with CaptureQueriesContext(connection) as reads:
            locked = viewer_reads.lock_for_post(user, inbox.public_id, form_key="k" * 22)
        assert len(reads.captured_queries) == 1
        if connection.vendor == "postgresql":  # the lock, then the read: two prepared statements, one round trip
            assert reads.captured_queries[0]["sql"].count("EXECUTE ") == 2
        assert locked is not inbox and locked.pk == inbox.pk and locked.game.pk == inbox.game_id
        assert locked.form_key_message_id == posted.pk
        assert (locked.next_message_id is None) == (connection.vendor != "postgresql")
        assert policies.membership_of(user, locked).resident_id == voter.pk
        unused = viewer_reads.lock_for_post(fresh(voter.user), inbox.public_id, form_key="u" * 22)
        assert unused.form_key_message_id is None
        staff = viewer_reads.lock_for_post(fresh(demo.procurator), inbox.public_id, form_key="k" * 22)  # no membership
        assert staff.pk == inbox.pk and staff.form_key_message_id is None
        assert viewer_reads.lock_for_post(user, "x" * 22) is None  # no inbox of that id
        with pytest.raises(ValueError, match="logged-in"):
            viewer_reads.lock_for_post(demo.anonymous, inbox.public_id)


@pytest.mark.parametrize("who", ["outsider", "honest", "tribune1", "procurator"])
def test_a_post_to_a_forbidden_inbox_runs_the_statements_of_a_post_to_a_missing_one_L_INBOX_17(demo, who):
    """A post's 404 for an inbox the poster may not read is the one for an id that does not exist, down to the
    statements it runs (which would time them apart): an outsider, a player, a Tribune and the Procurator, none of
    whom reads a city's mafia inbox."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    mafia = Inbox.objects.filter(game=demo.game, kind=LepraInboxKind.MAFIA).order_by("id").first()
    counts = []
    for inbox_id in (mafia.public_id, "z" * len(mafia.public_id)):
        user = fresh(getattr(demo, who))
        with CaptureQueriesContext(connection) as queries, pytest.raises(Http404):
            do_post_message_by_id(inbox_id, "Я здесь.", acting_user=user)
        counts.append(len(queries.captured_queries))
    assert counts[0] == counts[1]
    assert not Message.objects.filter(inbox=mafia, body="Я здесь.").exists()


def test_a_hook_registered_later_has_its_reads_under_the_lock_and_a_clash_of_names_is_refused_L_INBOX_17(
        voting, monkeypatch):
    """The post's locked statement reads the ``locked_reads`` of the hooks of its game's ruleset, from the registry
    as it is (a test's registry too), and never another ruleset's; two hooks that read one name would give one of
    them the other's value: refused."""
    from django.core.exceptions import ImproperlyConfigured
    from django.db.models import BigIntegerField, Value

    from inboxes import hooks
    from inboxes.hooks import PostHook, post_hook

    inbox, voter = voting
    monkeypatch.setattr("inboxes.hooks.POST_HOOKS", dict(hooks.POST_HOOKS))

    @post_hook("bar", ruleset=inbox.game.ruleset)
    class Reading(PostHook):
        def locked_reads(self):
            return {"_reading_answer": Value(42, output_field=BigIntegerField())}

    @post_hook("bar", ruleset="another")
    class Foreign(PostHook):
        def locked_reads(self):
            return {"_foreign_answer": Value(9, output_field=BigIntegerField())}

    for rulesets in (None, (inbox.game.ruleset,)):  # the seats' rulesets, or the inbox's game's
        with transaction.atomic():
            user = fresh(voter.user)
            policies.seat_in(user, inbox.game_id)  # the request's read of the viewer, as a post's page has done
            locked = viewer_reads.lock_for_post(user, inbox.public_id, rulesets=rulesets)
            inbox_id, reads = policies.seat_in(user, locked.game_id).locked_reads
        assert inbox_id == inbox.pk and reads["_reading_answer"] == 42 and "_session_id" in reads
        assert "_foreign_answer" not in reads

    @post_hook("court", ruleset=inbox.game.ruleset)
    class Clashing(PostHook):
        def locked_reads(self):
            return {"_reading_answer": Value(7, output_field=BigIntegerField())}

    with transaction.atomic(), pytest.raises(ImproperlyConfigured, match="_reading_answer"):
        user = fresh(voter.user)
        policies.seat_in(user, inbox.game_id)
        viewer_reads.lock_for_post(user, inbox.public_id)
