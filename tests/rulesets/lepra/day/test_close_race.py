"""A vote racing the Tribune's close (DESIGN.md "The clock"; RULES.md L-VOTE-6, L-VOTE-8).

``do_close_voting`` takes its locks (the session, every voting inbox of the day) before it reads the clock, and a
post reads its receive time only once it holds its inbox: a «не казнить» sent while the Tribune closes is either
stored before the close (an earlier time, counted) or refused as too late, and the official result always agrees
with the stored vote index. Full form on PostgreSQL (row locks); on SQLite the writers serialize on the file lock.
"""
from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.db import connections
from django.utils import timezone

from cities.models import StaffRole
from inboxes.posting import do_post_message, do_post_message_by_id
from kernel.errors import RuleViolation
from rulesets.lepra.day import services as voting_services
from rulesets.lepra.staff_kinds import StaffKind
from tests.rulesets.lepra.day.day_helpers import OPENS, _big_city_voting
from rulesets.lepra.models import LepraVote, VoteState, VotingSession


class _SlowClock:
    """``rulesets.lepra.day.services.timezone`` whose first ``now()`` says so and then takes a moment: the gap in which the old
    close let a post slip between its clock reading and its locks."""

    def __init__(self) -> None:
        self.read = threading.Event()
        self.calls = 0

    def now(self):
        self.calls += 1
        moment = timezone.now()
        if self.calls == 1:
            self.read.set()
            time.sleep(0.5)
        return moment

    def __getattr__(self, name):
        return getattr(timezone, name)


#: The two ways a post reaches its inbox: a service given the inbox, and the page's (the public id, read and locked
#: through the access policy in one statement).
POSTS = {
    "inbox": lambda inbox, text, user: do_post_message(inbox, text, acting_user=user),
    "public id": lambda inbox, text, user: do_post_message_by_id(inbox.public_id, text, acting_user=user),
}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("post", sorted(POSTS))
def test_retraction_racing_the_tribunes_close_is_counted_or_refused_consistently_with_the_vote_index_L_VOTE_8(
        monkeypatch, post):
    inbox, voters = _big_city_voting(3)
    voter = get_user_model().objects.get(pk=voters[0].user_id)
    do_post_message(inbox, "казнить", acting_user=voter, now=OPENS + timedelta(minutes=1))
    session = VotingSession.objects.get(city=inbox.city, day=inbox.day_number)
    tribune = StaffRole.objects.get(city=inbox.city, kind=StaffKind.TRIBUNE).user
    clock = _SlowClock()
    monkeypatch.setattr(voting_services, "timezone", clock)
    outcome = {}

    def close():
        try:
            voting_services.do_close_voting(session, acting_user=tribune)
        finally:
            connections.close_all()

    def retract():
        try:
            clock.read.wait(30)
            try:
                POSTS[post](inbox, "не казнить", voter)
                outcome["post"] = "stored"
            except RuleViolation as exc:
                outcome["post"] = str(exc)
        finally:
            connections.close_all()

    with time_machine.travel(OPENS + timedelta(minutes=30), tick=True):
        threads = [threading.Thread(target=close), threading.Thread(target=retract)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    session.refresh_from_db()
    standing = LepraVote.objects.filter(inbox=inbox, voter=voters[0], state=VoteState.STANDING).exists()
    counted = str(voters[0].pk) in next(t["voters"] for t in session.result["nominees"]
                                        if t["nominee"] == str(inbox.resident_id))
    assert counted == standing, (outcome, session.result)
    # The close held the inbox when it read the clock: the retraction came after it and was refused.
    assert outcome["post"] != "stored" and counted and standing
