"""Property tests of judge elections through the services (L-JUDGE-4, L-JUDGE-5): random precinct posts (pros,
cons, campaigning, second ballots, variants of the dashes) posted with ``do_post_message`` and counted by
``do_close_election`` give the result an independent slow reference computes from the same posts. The pure
tally's own properties are in tests/rulesets/lepra/day/test_lepra_election.py."""
from __future__ import annotations

import random
from datetime import timedelta

import pytest

from inboxes.posting import do_post_message
from kernel.errors import RuleViolation
from rulesets.lepra.court.judge_services import do_close_election
from tests.rulesets.lepra.court.conftest import CLOSES, OPENS
from tests.rulesets.lepra.court.judge_helpers import precinct, start

TEXTS = ["Он - Ганди!", "он–ганди", "Он — Гитлер!", "ОН-ГИТЛЕР.", "Голосуйте!", "Он Ганди", "Он - Ганди! да"]


def reference(candidates, posts):
    """The slow reference: posts in time order; a post counts when it is exactly a ballot (after trimming, case
    and trailing punctuation, any dash with optional spaces) and its voter has no counted ballot in that precinct;
    score = pros - cons; the winner has the highest score, then the earliest latest pro, and needs pros ≥ cons and
    at least one pro; else None."""
    import re
    ballots = {c: {} for c in candidates}
    for minute, voter, candidate, text in sorted(posts, key=lambda p: p[0]):
        t = text.strip().lower().rstrip("!.?… ")
        m = re.fullmatch(r"он\s*[-‐‑‒–—―−]\s*(ганди|гитлер)", t)
        if m and voter not in ballots[candidate]:
            ballots[candidate][voter] = (m.group(1) == "ганди", minute)
    best = None
    for c in candidates:
        pros = [minute for pro, minute in ballots[c].values() if pro]
        cons = [minute for pro, minute in ballots[c].values() if not pro]
        row = (len(pros) - len(cons), -(max(pros) if pros else 10**9), c, len(pros) >= len(cons) and bool(pros))
        if best is None or row[:2] > best[:2]:
            best = row
    scores = {c: (sum(p for p, _ in ballots[c].values()), sum(not p for p, _ in ballots[c].values()))
              for c in candidates}
    return scores, (best[2] if best and best[3] else None)


@pytest.mark.parametrize("seed", range(6))
def test_the_stored_result_equals_the_slow_reference_L_JUDGE_4_L_JUDGE_5(jg, seed):
    rng = random.Random(seed)
    people = jg.residents(1)
    candidates = people[:rng.choice([1, 2, 3])]
    election, _ = start(jg, 1, candidates)
    minutes = sorted(rng.sample(range(1, 230), 25))  # posts arrive in time order, as on the server
    posts = []
    for minute in minutes:
        voter, candidate, text = rng.choice(people), rng.choice(candidates), rng.choice(TEXTS)
        try:
            do_post_message(precinct(candidate), text, acting_user=voter.user, now=OPENS + timedelta(minutes=minute))
        except RuleViolation:
            pass
        posts.append((minute, voter.pk, candidate.pk, text))
    election = do_close_election(election, acting_user=None, now=CLOSES)
    scores, winner = reference([c.pk for c in candidates], posts)
    assert {int(t["candidate"]): (t["pros"], t["cons"]) for t in election.result["candidates"]} == scores
    assert election.winner_id == winner
