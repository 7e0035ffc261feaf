"""A post reads only its own ruleset's post-hook data (DESIGN.md "Rulesets and layers"): the statement that locks
the poster's membership reads the ``locked_reads`` of the hooks of the rulesets of the poster's games, never those
of another ruleset (an M21 game-thread post reads none of a Lepra voting inbox's session, votes or suicide
declarations), and that costs no statement more."""
from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from inboxes import policies, viewer_reads
from inboxes.hooks import POST_HOOKS
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message, do_post_message_by_id
from tests.conftest import fresh
from tests.rulesets.m21.day_helpers import build_game

pytestmark = pytest.mark.django_db


def _reads_of(ruleset: str) -> set[str]:
    """The names the hooks registered for ``ruleset`` read under a post's lock."""
    return {name for (key, _kind), hook in POST_HOOKS.items() if key == ruleset for name in hook.locked_reads()}


def _locked_statement_and_reads(user, inbox: Inbox) -> tuple[str, set[str]]:
    """The SQL of the statement that locked ``user``'s membership of ``inbox`` for a post (as compiled, whatever
    the database runs) and the hook reads it gave the seat."""
    with transaction.atomic():
        policies.seat_in(user, inbox.game_id)  # the request's read of the viewer, as a post's page has done
        hooks = viewer_reads._post_hooks_of(user, None)
        assert viewer_reads.lock_for_post(user, inbox.public_id) is not None
        _inbox_id, reads = getattr(policies.seat_in(user, inbox.game_id), "locked_reads", (None, {}))
    query, _names = viewer_reads._LOCKED_MEMBERSHIP[hooks]
    return query.compiled(connection.alias).sql, set(reads)


def test_an_m21_post_reads_no_other_rulesets_hook_data_and_costs_no_more_statements_M_VOTE_1():
    table = build_game(seed=2, slug="m21-hook-reads")
    foreign = set().union(*(_reads_of(key) for key, _kind in POST_HOOKS if key not in (None, "m21")))
    assert foreign, "another ruleset's hook reads something under the lock: what this test looks for"
    thread = table.thread
    sql, reads = _locked_statement_and_reads(fresh(table.users["Alice"]), thread)
    assert not {name for name in foreign if f'"{name}"' in sql} and not reads & foreign, sql
    for by_id in (False, True):
        user = fresh(table.users["Alice"])
        with CaptureQueriesContext(connection) as queries:
            if by_id:
                message = do_post_message_by_id(thread.public_id, "Good morning.", acting_user=user, now=table.tick())
            else:
                message = do_post_message(Inbox.objects.select_related("game").get(pk=thread.pk), "Morning, all.",
                                          acting_user=user, now=table.tick())
        assert message.inbox_id == thread.pk
        assert len(queries.captured_queries) <= 12


def test_a_lepra_post_reads_its_own_rulesets_hook_data_under_the_lock_L_VOTE_8(demo):
    own = _reads_of(demo.game.ruleset)
    assert own
    city = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1)
    sql, reads = _locked_statement_and_reads(fresh(demo.honest), city)
    assert {name for name in own if not name.startswith("_voting_session")} <= reads
    assert all(f'"{name}"' in sql for name in reads), sql
