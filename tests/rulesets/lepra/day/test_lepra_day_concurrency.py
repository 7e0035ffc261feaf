"""Concurrent votes in one voting inbox (issue 4, DESIGN.md "Messages are the record"): many residents post
«казнить» at the same moment from threads, and some submit the same browser form twice at once; exactly one
standing vote per voter, no exception escapes (no 500).

Full form on PostgreSQL (``DATABASE_URL`` set: 60 residents, row locks for real); a reduced form on SQLite (20
residents), whose writers serialize on the file lock. Both run: a skipped test would prove nothing.
"""
from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse

from inboxes.models import Message
from inboxes.posting import do_post_message
from tests.rulesets.lepra.day.day_helpers import OPENS, _big_city_voting, ru
from rulesets.lepra.models import LepraVote, VoteState

ON_POSTGRES = connection.vendor == "postgresql"
RESIDENTS = 60 if ON_POSTGRES else 20
DOUBLE_SUBMITTERS = 8 if ON_POSTGRES else 4


@pytest.mark.postgres
def test_simultaneous_votes_and_double_submits_leave_one_standing_vote_per_voter_L_VOTE_2(transactional_db):
    inbox, voters = _big_city_voting(RESIDENTS)
    moment = OPENS + timedelta(minutes=30)
    doubles = voters[:DOUBLE_SUBMITTERS]
    url = reverse("inbox_thread", args=[inbox.public_id])
    jobs = [("service", v) for v in voters] + [("form", v) for v in doubles for _ in range(2)]
    barrier = threading.Barrier(len(jobs))
    errors, outcomes = [], []
    lock = threading.Lock()

    def run(kind, voter):
        try:
            barrier.wait(timeout=60)
            if kind == "service":
                try:
                    do_post_message(inbox, "казнить", acting_user=get_user_model().objects.get(pk=voter.user_id),
                                    now=moment)
                    result = "stored"
                except Exception as exc:  # a RuleViolation is a refusal, anything else is a bug
                    from kernel.errors import RuleViolation
                    if not isinstance(exc, RuleViolation):
                        raise
                    result = str(exc)
            else:
                client = Client()
                client.force_login(voter.user)
                response = client.post(url, {"text": "казнить"})
                result = response.status_code
            with lock:
                outcomes.append((kind, voter.pk, result))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            with lock:
                errors.append(f"{kind} {voter.name}: {type(exc).__name__}: {exc}")
        finally:
            connection.close()

    with time_machine.travel(moment, tick=False):
        threads = [threading.Thread(target=run, args=job) for job in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    assert errors == []
    assert len(outcomes) == len(jobs)
    assert not any(r == 500 for _k, _v, r in outcomes)
    standing = list(LepraVote.objects.filter(inbox=inbox, state=VoteState.STANDING).values_list("voter_id", flat=True))
    assert sorted(standing) == sorted(v.pk for v in voters)
    assert Message.objects.filter(inbox=inbox).count() == len(voters)
    # Each double-submitter posted three times at once: exactly one was stored, the others were refused.
    refused = [r for k, v, r in outcomes if v in {d.pk for d in doubles}
               and r not in ("stored", 302)]
    assert len(refused) == 2 * len(doubles)
    assert set(refused) <= {400, "You already vote here: this vote does not count again.",
                            ru("You already vote here: this vote does not count again.")}
