"""Builders for forum day tests: a day with named seats, and posting in order."""
from __future__ import annotations

from voting.forum_tally import ForumDay
from voting.forum_vote import (
    END_HAMMER_RULES,
    ForumPost,
    ForumReceipt,
    ForumRemoval,
    ForumRemovalCause,
    ForumReplacement,
    ForumSeat,
    ForumVoidedVote,
    ForumVoteRules,
)

# Twenty names with distinct first letters, so that a one-letter prefix names exactly one seat.
NAMES = ("Ann", "Ben", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon",
         "Kim", "Lou", "Max", "Ned", "Oz", "Pam", "Quin", "Rex", "Sue", "Tom")


class Thread:
    """A forum day under test: seats named ``NAMES[:n]`` played by their lowercase accounts, and a counter of
    post numbers so that every post, removal and replacement gets the next ``seq``."""

    def __init__(self, n: int, rules: ForumVoteRules = END_HAMMER_RULES, names: tuple[str, ...] = NAMES):
        self.day = ForumDay(rules, [ForumSeat(seat=name, account=name.lower()) for name in names[:n]])
        self.seq = 0

    def say(self, seat: str, text: str) -> tuple[ForumReceipt, ...]:
        """Post ``text`` from the account of ``seat`` (its lowercase name) and return the receipts."""
        return self.post_as(seat.lower(), text)

    def post_as(self, account: str, text: str) -> tuple[ForumReceipt, ...]:
        self.seq += 1
        return self.day.post(ForumPost(seq=self.seq, author=account, text=text))

    def kill(self, seat: str, cause: ForumRemovalCause = ForumRemovalCause.KILLED) -> tuple[ForumVoidedVote, ...]:
        self.seq += 1
        return self.day.remove(ForumRemoval(seq=self.seq, seat=seat, cause=cause))

    def replace(self, seat: str, account: str) -> None:
        self.seq += 1
        self.day.replace(ForumReplacement(seq=self.seq, seat=seat, account=account))

    def votes(self) -> dict[str, tuple[str, ...]]:
        """The standing count as {target: voters in the order they voted}."""
        return dict(self.day.count().votes)
