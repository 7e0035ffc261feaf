"""The votes a death voids are told in the order they were cast (RULES.md M-VOTE-9), whether the day ran in one
process or was stored and restored between posts: PostgreSQL's jsonb keeps no key order, so a stored day's votes
come back in another order than they were cast."""
from __future__ import annotations

from voting.forum_tally import ForumDay
from voting.forum_vote import END_HAMMER_RULES

from tests.voting.forum_helpers import Thread


def _jsonb_order(data: dict) -> dict:
    """``data`` with its "votes" object in the key order jsonb gives back (shorter keys first, then bytewise)."""
    return {**data, "votes": dict(sorted(data["votes"].items(), key=lambda item: (len(item[0]), item[0].encode())))}


def test_a_death_tells_the_voided_votes_in_the_order_they_were_cast_after_a_restore_M_VOTE_9():
    live = Thread(7)
    live.say("Gus", "##VOTE Ann")
    live.say("Ann", "##VOTE Ann")
    live.say("Cat", "##VOTE Ann")
    stored = Thread(7)
    stored.day, stored.seq = ForumDay.restore(END_HAMMER_RULES, _jsonb_order(live.day.snapshot())), live.seq
    assert list(_jsonb_order(live.day.snapshot())["votes"]) == ["Ann", "Cat", "Gus"]
    for thread in (live, stored):
        notices = thread.kill("Ann")
        assert [(n.voter, n.target, n.removed) for n in notices] == [("Gus", "Ann", "Ann"), ("Ann", "Ann", "Ann"),
                                                                     ("Cat", "Ann", "Ann")]
    assert live.day.snapshot() == stored.day.snapshot()
