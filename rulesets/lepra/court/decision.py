"""The Supreme Court's decision (RULES.md L-COURT-2..4) as a pure function: no ORM, no clock."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

#: L-COURT-3's procedures (the codes of ``rulesets.lepra.models.CourtProcedure``): at least half of the votes cast (the
#: seed's simple majority, the default), or at least half of the sitting judges.
VOTES_CAST = "votes_cast"
SITTING_JUDGES = "sitting_judges"
PROCEDURES = (VOTES_CAST, SITTING_JUDGES)


def court_threshold(sitting_judges: int) -> int:
    """L-COURT-3, procedure "half of the sitting judges": the votes a sentence needs, ceil(n / 2) (at least 1)."""
    if sitting_judges < 1:
        raise ValueError("the court needs at least one sitting judge")
    return (sitting_judges + 1) // 2


def court_decision(candidates: Sequence[str], votes: Mapping[str, str], sitting_judges: int, *,
                   final: bool, procedure: str = VOTES_CAST) -> str | None:
    """The candidate the court sentences, or None while (or when) it has not decided (L-COURT-2, L-COURT-3).

    ``candidates``: the L-VOTE-5 leader alone, or the tied leaders (L-COURT-2); ``votes``: judge → the candidate
    they confirm (each in ``candidates``); ``sitting_judges``: the court's size; ``procedure``: one of
    ``PROCEDURES``. With ``VOTES_CAST`` (the default) a candidate is sentenced by at least half of the votes cast;
    with ``SITTING_JUDGES`` by at least ``court_threshold(sitting_judges)`` votes. Either way no other candidate may
    equal them: two nominees each at half is no decision. At the deadline (``final`` True) the votes as they are
    decide; before it (``final`` False) only a result that no judge who has not voted yet can change: each of them
    counts as a vote cast for the strongest other candidate (so a lone leader too needs half of the court). Without a decision at the deadline the caller falls back
    to the L-VOTE-5 leader (L-COURT-4). Raises ``ValueError`` (a vote for a non-candidate, more votes than
    judges, an unknown procedure).
    """
    if procedure not in PROCEDURES:
        raise ValueError(f"unknown court procedure: {procedure!r}")
    unknown = set(votes.values()) - set(candidates)
    if unknown:
        raise ValueError(f"votes for non-candidates: {sorted(unknown)}")
    if len(votes) > sitting_judges:
        raise ValueError("more votes than sitting judges")
    counts = Counter(votes.values())
    remaining = 0 if final else sitting_judges - len(votes)
    for candidate in candidates:
        mine = counts[candidate]
        others = [counts[other] for other in candidates if other != candidate]
        if mine == 0 or any(theirs + remaining >= mine for theirs in others):
            continue
        if procedure == SITTING_JUDGES:
            enough = mine >= court_threshold(sitting_judges)
        else:  # before the deadline, at least half of every vote that could still be cast
            enough = 2 * mine >= len(votes) + remaining
        if enough:
            return candidate
    return None
