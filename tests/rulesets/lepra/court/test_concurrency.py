"""Simultaneous ballots in one precinct (L-JUDGE-4, DESIGN.md "Messages are the record"): every resident of the
city posts «Он - Ганди!» at the same moment from threads, some twice at once (two tabs); exactly one ballot per
voter, each refusal is the player's message, no other exception escapes."""
from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model

from inboxes.models import Message
from inboxes.posting import do_post_message
from kernel.errors import RuleViolation
from tests.rulesets.lepra.court.conftest import OPENS, PRO
from tests.rulesets.lepra.court.judge_helpers import precinct, start
from rulesets.lepra.models import ElectionBallot


@pytest.mark.postgres
def test_simultaneous_and_double_submitted_ballots_leave_one_ballot_per_voter_L_JUDGE_4(jg_tx):
    candidate = jg_tx.residents(1)[0]
    start(jg_tx, 1, [candidate])
    inbox = precinct(candidate)
    voters = jg_tx.residents(1)
    jobs = list(voters) + voters[:3]
    barrier = threading.Barrier(len(jobs))
    errors, refusals = [], []
    lock = threading.Lock()
    moment = OPENS + timedelta(minutes=30)

    def run(voter):
        from django.db import connection
        try:
            barrier.wait(timeout=60)
            do_post_message(inbox, PRO, acting_user=get_user_model().objects.get(pk=voter.user_id), now=moment)
        except RuleViolation as exc:
            with lock:
                refusals.append(str(exc))
        except Exception as exc:  # noqa: BLE001 - anything else is a bug (a 500), reported below
            with lock:
                errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(v,)) for v in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    from django.utils import translation
    with translation.override(inbox.game.language):  # the refusal is in the game's language
        refusal = translation.gettext("You have already voted in this precinct: a ballot cannot be changed or withdrawn.")
    assert refusals == [refusal] * 3
    assert sorted(ElectionBallot.objects.filter(inbox=inbox).values_list("voter_id", flat=True)) == sorted(
        v.pk for v in voters)
    assert Message.objects.filter(inbox=inbox, author_resident__isnull=False).count() == len(voters)
