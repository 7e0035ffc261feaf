"""The Supreme Court's decision (RULES.md L-COURT-2..4) as a pure function: no ORM, no clock."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence


def court_threshold(sitting_judges: int) -> int:
    """L-COURT-3: a sentence is confirmed by at least half of the sitting judges: ceil(n / 2) (at least 1)."""
    if sitting_judges < 1:
        raise ValueError("the court needs at least one sitting judge")
    return (sitting_judges + 1) // 2


def court_decision(candidates: Sequence[str], votes: Mapping[str, str], sitting_judges: int, *,
                   final: bool) -> str | None:
    """The candidate the court sentences, or None while (or when) it has not decided (L-COURT-2, L-COURT-3).

    ``candidates``: the L-VOTE-5 leader alone, or the tied leaders (L-COURT-2); ``votes``: judge → the candidate
    they confirm (each in ``candidates``); ``sitting_judges``: the court's size. A candidate is sentenced when
    their votes reach ``court_threshold`` and no other candidate can equal them: before the deadline
    (``final`` False) counting the judges who have not voted yet as possibly voting for another candidate;
    at the deadline (``final`` True) with the votes as they are. A split such as 2-2 among 4 judges decides
    nothing; at the deadline the caller falls back to the L-VOTE-5 leader (L-COURT-4).
    """
    unknown = set(votes.values()) - set(candidates)
    if unknown:
        raise ValueError(f"votes for non-candidates: {sorted(unknown)}")
    if len(votes) > sitting_judges:
        raise ValueError("more votes than sitting judges")
    counts = Counter(votes.values())
    remaining = 0 if final else sitting_judges - len(votes)
    threshold = court_threshold(sitting_judges)
    for candidate in candidates:
        mine = counts[candidate]
        if mine >= threshold and all(counts[other] + remaining < mine for other in candidates if other != candidate):
            return candidate
    return None
