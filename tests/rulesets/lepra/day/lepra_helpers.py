"""Builders for the Lepra tally tests: a voting window and messages numbered in the order they are written."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rulesets.lepra.day.tally import LepraVoteMessage

OPEN = datetime(2026, 3, 2, 16, 0, tzinfo=UTC)  # 19:00 in Moscow
CLOSE = datetime(2026, 3, 2, 20, 0, tzinfo=UTC)  # 23:00 in Moscow
MICROSECOND = timedelta(microseconds=1)


def minute(n: float) -> datetime:
    """``n`` minutes after the opening (negative: before it)."""
    return OPEN + timedelta(minutes=n)


class Log:
    """Messages of one tally, each given the next ``seq``: ``log.post(5, "ann", "cat", "казнить")`` is ann's
    «казнить» in cat's inbox five minutes after the opening (a datetime ``at`` is taken as is)."""

    def __init__(self):
        self.messages: list[LepraVoteMessage] = []

    def post(self, at: float | datetime, author: str, inbox: str, text: str, *, proxy: bool = False) -> int:
        seq = len(self.messages) + 1
        moment = at if isinstance(at, datetime) else minute(at)
        self.messages.append(LepraVoteMessage(seq=seq, at=moment, author=author, inbox=inbox, text=text,
                                              proxy=proxy))
        return seq
