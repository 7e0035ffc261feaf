"""The Lepra judge election tally (L-JUDGE-4..6): ballots «Он - Ганди!» / «Он - Гитлер!» with dash and spacing
variants (L-JUDGE-4), one ballot per voter per precinct never changed (L-JUDGE-4), scores and the earlier latest
pro tie-break (L-JUDGE-5), failed elections (L-JUDGE-5), proxies at the opening (L-JUDGE-6), the window (as
L-VOTE-8); ``manage.py tally lepra-election`` on the documented example; hypothesis properties against a slow
reference written independently below."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from rulesets.lepra.day.tally import LepraAccepted, LepraVoteMessage, tally_lepra_election
from tests.rulesets.lepra.day.lepra_helpers import CLOSE, MICROSECOND, OPEN, Log, minute
from rulesets.lepra.day.keywords import LepraBallot, parse_lepra_election

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = ROOT / "rulesets" / "lepra" / "examples" / "lepra_election_example.jsonl"
VOTERS = ("ann", "ben", "cat", "dan", "eve", "fay", "gus", "hal")
PRO, CON = "Он - Ганди!", "Он - Гитлер!"


def elect(log: Log, candidates=("ann", "dan"), voters=VOTERS):
    return tally_lepra_election(OPEN, CLOSE, voters, candidates, log.messages)


def scores(result) -> dict[str, tuple[int, int, int]]:
    return {t.candidate: (len(t.pros), len(t.cons), t.score) for t in result.candidates}


def reasons(result) -> dict[int, str]:
    return {receipt.seq: receipt.refusal.value for receipt in result.refused}


# -- ballots (L-JUDGE-4) -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["Он - Ганди!", "он - ганди", "ОН - ГАНДИ!!!", "Он-Ганди!", "Он -Ганди",
                                  "Он – Ганди!", "Он — Ганди!", "Он − Ганди!", "Он ‐ Ганди", "Он‑Ганди",
                                  "  Он  —  Ганди .  ", "Он\u00a0-\u00a0Ганди!", "Он - Ганди?!", "Он - Ганди…"])
def test_pro_ballot_variants_L_JUDGE_4(text):
    assert parse_lepra_election(text) is LepraBallot.PRO


@pytest.mark.parametrize("text", ["Он - Гитлер!", "он–гитлер", "ОН — ГИТЛЕР.", "Он − Гитлер", "Он - Гитлёр!"])
def test_con_ballot_variants_with_yo_as_ye_L_JUDGE_4(text):
    assert parse_lepra_election(text) is LepraBallot.CON


def test_ballot_weights_L_JUDGE_5():
    assert (LepraBallot.PRO.weight, LepraBallot.CON.weight) == (1, -1)


@pytest.mark.parametrize("text", ["Он Ганди!", "Он - Ганди! Голосуйте!", "Она - Ганди!", "Он -- Ганди",
                                  "Он - Ганди и Гитлер", "Ганди!", "Он - Гандии", "Он: Ганди", "! Он - Ганди",
                                  "Он - Ганди! Он - Ганди!", "казнить", "", "Он — Ганди, а не Гитлер"])
def test_anything_else_is_not_a_ballot_L_JUDGE_4(text):
    assert parse_lepra_election(text) is None


# -- scores and the winner (L-JUDGE-4, L-JUDGE-5) -----------------------------------------------------------------


def test_score_is_pros_minus_cons_four_pros_three_cons_is_one_L_JUDGE_5():
    log = Log()
    for n, voter in enumerate(("ann", "ben", "cat", "dan")):
        log.post(n, voter, "ann", PRO)
    for n, voter in enumerate(("eve", "fay", "gus")):
        log.post(10 + n, voter, "ann", "он — гитлер")
    result = elect(log, candidates=("ann",))
    assert scores(result) == {"ann": (4, 3, 1)}
    assert result.tally("ann").pros == ("ann", "ben", "cat", "dan")
    assert result.tally("ann").latest_pro_at == minute(3)
    assert result.winner == "ann" and not result.failed


def test_a_second_ballot_in_the_same_precinct_is_refused_and_the_first_stands_L_JUDGE_4():
    log = Log()
    log.post(1, "ben", "ann", PRO)
    log.post(2, "ben", "ann", CON)  # no change of mind
    log.post(3, "ben", "ann", PRO)  # no repeat either
    log.post(4, "ben", "dan", CON)  # another precinct: a ballot of its own
    result = elect(log)
    assert reasons(result) == {2: "already_voted", 3: "already_voted"}
    assert result.refused[0].message == ("You have already voted in this precinct: a ballot cannot be changed or "
                                         "withdrawn.")
    assert scores(result) == {"ann": (1, 0, 1), "dan": (0, 1, -1)}
    assert result.tally("ann").latest_pro_at == minute(1)


def test_the_higher_score_wins_whatever_the_times_L_JUDGE_5():
    log = Log()
    log.post(1, "ann", "ann", PRO)
    log.post(2, "ben", "dan", PRO)
    log.post(3, "cat", "dan", PRO)  # dan's latest pro: minute 3
    log.post(4, "dan", "ann", PRO)  # ann's latest pro: minute 4
    log.post(50, "eve", "dan", CON)
    log.post(51, "fay", "ann", CON)
    log.post(90, "gus", "dan", CON)  # later than everything, but a con
    log.post(91, "hal", "dan", PRO)  # dan 3 pros 2 cons: +1 ...
    log.post(92, "gus", "ann", PRO)  # ... ann 3 pros 1 con: +2
    result = elect(log)
    assert scores(result) == {"ann": (3, 1, 2), "dan": (3, 2, 1)}
    assert result.winner == "ann"


def test_a_tie_goes_to_the_earlier_latest_pro_and_a_later_con_is_no_pro_L_JUDGE_5():
    log2 = Log()
    log2.post(1, "ann", "ann", PRO)
    log2.post(2, "ben", "dan", PRO)
    log2.post(3, "cat", "ann", PRO)  # ann's latest pro: minute 3
    log2.post(4, "dan", "dan", PRO)  # dan's latest pro: minute 4
    log2.post(100, "eve", "ann", CON)  # ann's latest vote is now the latest of all, but it is a con
    log2.post(101, "fay", "dan", CON)
    tied = elect(log2)
    assert scores(tied) == {"ann": (2, 1, 1), "dan": (2, 1, 1)}
    assert tied.tally("ann").latest_pro_at == minute(3) and tied.tally("dan").latest_pro_at == minute(4)
    assert tied.ranking == ("ann", "dan") and tied.winner == "ann" and not tied.tie_unresolved


def test_a_tie_of_three_goes_to_the_earliest_latest_pro_L_JUDGE_5():
    log = Log()
    log.post(1, "ann", "cat", PRO)
    log.post(2, "ben", "dan", PRO)
    log.post(3, "cat", "ann", PRO)
    result = elect(log, candidates=("ann", "cat", "dan"))
    assert result.ranking == ("cat", "dan", "ann") and result.winner == "cat"


def test_all_candidates_negative_fail_the_election_L_JUDGE_5():
    log = Log()
    log.post(1, "ann", "ann", PRO)
    log.post(2, "ben", "ann", CON)
    log.post(3, "cat", "ann", CON)
    log.post(4, "dan", "dan", CON)
    result = elect(log)
    assert scores(result) == {"ann": (1, 2, -1), "dan": (0, 1, -1)}
    assert result.ranking == ("ann", "dan")  # ann has a pro, dan none
    assert result.winner is None and result.failed


def test_pros_equal_to_cons_may_win_L_JUDGE_5():
    log = Log()
    log.post(1, "ann", "ann", PRO)
    log.post(2, "ben", "ann", CON)
    log.post(3, "cat", "dan", CON)
    result = elect(log)
    assert scores(result)["ann"] == (1, 1, 0) and result.winner == "ann"


def test_a_candidate_without_a_single_pro_cannot_win_L_JUDGE_5_interp():
    log = Log()
    log.post(1, "ben", "dan", CON)
    result = elect(log)
    assert scores(result) == {"ann": (0, 0, 0), "dan": (0, 1, -1)}
    assert result.ranking == ("ann", "dan") and result.winner is None and result.failed
    assert elect(Log()).failed


def test_a_full_tie_is_broken_by_name_only_for_determinism_and_flagged_L_JUDGE_5():
    log = Log()
    log.post(-5, "ann", "dan", PRO, proxy=True)
    log.post(-6, "ben", "ann", PRO, proxy=True)
    result = elect(log)
    assert result.tally("ann").latest_pro_at == result.tally("dan").latest_pro_at == OPEN
    assert result.winner == "ann" and result.tie_unresolved


def test_proxy_ballots_are_cast_at_opening_and_win_a_tie_L_JUDGE_6():
    log = Log()
    log.post(1, "ann", "ann", PRO)
    log.post(-60, "ben", "dan", PRO, proxy=True)
    log.post(300, "cat", "dan", CON, proxy=True)  # a proxy may be a con: it is still timed at the opening
    log.post(2, "dan", "dan", PRO)
    log.post(3, "eve", "ann", CON)
    result = elect(log)
    assert scores(result) == {"ann": (1, 1, 0), "dan": (2, 1, 1)}
    assert result.receipts[0].at == OPEN and result.receipts[1].at == OPEN
    assert result.winner == "dan"
    log2 = Log()
    log2.post(1, "ann", "ann", PRO)
    log2.post(200, "ben", "dan", PRO, proxy=True)
    tie = elect(log2)
    assert tie.tally("dan").latest_pro_at == OPEN and tie.winner == "dan"


def test_a_proxy_must_be_a_ballot_L_JUDGE_6():
    log = Log()
    log.post(0, "ann", "dan", "за Дэна", proxy=True)
    assert reasons(elect(log)) == {1: "proxy_not_a_vote"}


def test_campaigning_non_members_unknown_precincts_and_the_window_are_refused_L_JUDGE_4():
    log = Log()
    log.post(1, "ann", "dan", "Голосуйте за Дэна: он - Ганди!")
    log.post(2, "zed", "dan", PRO)
    log.post(3, "ann", "bob", PRO)  # another city's precinct is no precinct of this tally
    log.post(OPEN - MICROSECOND, "ben", "dan", PRO)
    log.post(CLOSE - MICROSECOND, "cat", "dan", PRO)
    log.post(CLOSE, "dan", "dan", PRO)
    log.post(4, "dan", "dan", "Я буду честным судьёй")  # no last word in a precinct
    result = elect(log)
    assert reasons(result) == {4: "not_open_yet", 1: "not_a_ballot", 2: "not_a_member", 3: "unknown_inbox",
                               7: "not_a_ballot", 6: "closed"}
    assert [r.seq for r in result.refused] == [4, 1, 2, 3, 7, 6]  # counting order
    assert scores(result)["dan"] == (1, 0, 1) and result.tally("dan").latest_pro_at == CLOSE - MICROSECOND
    assert result.refused[1].message == "Only «Он - Ганди!» or «Он - Гитлер!» can be posted in a precinct."
    assert [r.accepted for r in result.receipts if r.refusal is None] == [LepraAccepted.PRO]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"opens_at": CLOSE, "closes_at": OPEN}, "opens_at must come before closes_at"),
    ({"candidates": ["ann", "ann"]}, "candidate listed twice: ann"),
    ({"messages": [LepraVoteMessage(1, OPEN, "ann", "ann", PRO), LepraVoteMessage(1, OPEN, "ben", "ann", PRO)]},
     "message id 1 appears twice"),
])
def test_inconsistent_input_raises(kwargs, message):
    arguments = {"opens_at": OPEN, "closes_at": CLOSE, "voters": VOTERS, "candidates": ["ann"], "messages": [],
                 **kwargs}
    with pytest.raises(ValueError, match=message):
        tally_lepra_election(**arguments)


# -- manage.py tally lepra-election --------------------------------------------------------------------------------


def command(path: Path | str) -> dict:
    out = StringIO()
    call_command("tally", "lepra-election", str(path), stdout=out)
    return json.loads(out.getvalue())


def refused(seq, at, author, inbox, reason, message, proxy=False) -> dict:
    return {"seq": seq, "at": f"2026-03-01T{at}+00:00", "author": author, "inbox": inbox, "proxy": proxy,
            "reason": reason, "message": message}


NOT_A_BALLOT = "Only «Он - Ганди!» or «Он - Гитлер!» can be posted in a precinct."
EXAMPLE_OUTPUT = {
    "opens_at": "2026-03-01T16:00:00+00:00",
    "closes_at": "2026-03-01T20:00:00+00:00",
    "candidates": [
        {"candidate": "ann", "pros": 3, "cons": 1, "score": 2, "pro_voters": ["gus", "ben", "eve"],
         "con_voters": ["dan"], "latest_pro_at": "2026-03-01T16:45:00+00:00"},
        {"candidate": "dan", "pros": 3, "cons": 1, "score": 2, "pro_voters": ["eve", "fay", "ann"],
         "con_voters": ["ben"], "latest_pro_at": "2026-03-01T16:20:00+00:00"},
        {"candidate": "fay", "pros": 0, "cons": 1, "score": -1, "pro_voters": [], "con_voters": ["cat"],
         "latest_pro_at": None},
    ],
    "ranking": ["dan", "ann", "fay"],
    "winner": "dan",
    "failed": False,
    "tie_unresolved": False,
    "refused": [
        refused(2, "15:59:59.999999", "fay", "fay", "not_open_yet",
                "Voting opens at 2026-03-01T16:00:00+00:00: this message came too early."),
        refused(6, "16:05:00", "ben", "ann", "already_voted",
                "You have already voted in this precinct: a ballot cannot be changed or withdrawn."),
        refused(9, "16:12:00", "ann", "dan", "not_a_ballot", NOT_A_BALLOT),
        refused(11, "16:41:00", "zed", "fay", "not_a_member", "zed has no vote here."),
        refused(13, "17:00:00", "ann", "gus", "unknown_inbox", "There is no precinct for gus here."),
        refused(15, "20:00:00", "eve", "fay", "closed",
                "Voting closed at 2026-03-01T20:00:00+00:00: this message came too late."),
    ],
}


def test_the_example_export_gives_exactly_the_documented_result_L_JUDGE_5():
    """rulesets/lepra/examples/README.md walks through this file line by line."""
    assert command(EXAMPLE) == EXAMPLE_OUTPUT


HEADER = {"opens_at": "2026-03-01T16:00:00+00:00", "closes_at": "2026-03-01T20:00:00+00:00",
          "voters": ["ann", "ben"], "candidates": ["ann"]}


def export(tmp_path: Path, *lines: dict) -> Path:
    path = tmp_path / "election.jsonl"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), encoding="utf-8")
    return path


def test_a_failed_election_prints_a_null_winner_L_JUDGE_5(tmp_path):
    result = command(export(tmp_path, HEADER, {"seq": 1, "at": "2026-03-01T16:01:00+00:00", "author": "ben",
                                               "inbox": "ann", "text": "Он - Гитлер!", "proxy": False}))
    assert result["winner"] is None and result["failed"] is True
    assert result["candidates"] == [{"candidate": "ann", "pros": 0, "cons": 1, "score": -1, "pro_voters": [],
                                     "con_voters": ["ben"], "latest_pro_at": None}]


@pytest.mark.parametrize(("header", "message"), [
    ({**HEADER, "nominees": ["ann"]}, "line 1: unknown header field\\(s\\): nominees"),
    ({**HEADER, "void_inboxes": ["ann"]}, "line 1: unknown header field\\(s\\): void_inboxes"),
    ({k: v for k, v in HEADER.items() if k != "candidates"}, "line 1: missing header field\\(s\\): candidates"),
])
def test_an_election_header_names_candidates(tmp_path, header, message):
    with pytest.raises(CommandError, match=message):
        call_command("tally", "lepra-election", str(export(tmp_path, header)), stdout=StringIO())


# -- properties (hypothesis) --------------------------------------------------------------------------------------

P_VOTERS = ("a", "b", "c", "d")
P_CANDIDATES = ("a", "b", "c")
P_TEXTS = (PRO, CON, "он—ганди", "ОН - ГИТЛЕР.", "агитация")
P_TIMES = (OPEN - MICROSECOND, OPEN, minute(1), minute(2), minute(3), CLOSE - MICROSECOND, CLOSE)


@st.composite
def elections(draw):
    rows = draw(st.lists(st.tuples(st.sampled_from(P_TIMES), st.sampled_from((*P_VOTERS, "z")),
                                   st.sampled_from((*P_CANDIDATES, "q")), st.sampled_from(P_TEXTS),
                                   st.integers(0, 4).map(lambda n: n == 0)), max_size=30))
    seqs = draw(st.permutations(range(1, len(rows) + 1)))
    return [LepraVoteMessage(seq=seq, at=at, author=author, inbox=inbox, text=text, proxy=proxy)
            for seq, (at, author, inbox, text, proxy) in zip(seqs, rows, strict=True)]


def reference_election(messages):
    """An independent, slow reading of L-JUDGE-4/5: a voter's ballot in a precinct is their FIRST valid ballot
    there in (time, seq) order; the winner is found by comparing candidates pairwise."""
    def when(m):
        return OPEN if m.proxy else m.at

    def valid(m):
        return (m.inbox in P_CANDIDATES and m.author in P_VOTERS and OPEN <= when(m) < CLOSE
                and parse_lepra_election(m.text) is not None)

    firsts = {}
    for m in messages:
        if valid(m):
            key = (m.author, m.inbox)
            if key not in firsts or (when(m), m.seq) < (when(firsts[key]), firsts[key].seq):
                firsts[key] = m
    table = {}
    for candidate in P_CANDIDATES:
        ballots = [m for (_, inbox), m in firsts.items() if inbox == candidate]
        pros = [m for m in ballots if parse_lepra_election(m.text) is LepraBallot.PRO]
        cons = [m for m in ballots if parse_lepra_election(m.text) is LepraBallot.CON]
        table[candidate] = ({m.author for m in pros}, {m.author for m in cons},
                            max((when(m) for m in pros), default=None))

    def beats(x, y):
        sx, sy = len(table[x][0]) - len(table[x][1]), len(table[y][0]) - len(table[y][1])
        if sx != sy:
            return sx > sy
        tx, ty = table[x][2], table[y][2]
        if tx != ty:
            return ty is None or (tx is not None and tx < ty)
        return x < y

    best = next(x for x in P_CANDIDATES if all(beats(x, y) for y in P_CANDIDATES if y != x))
    pros, cons, _ = table[best]
    winner = best if pros and len(pros) >= len(cons) else None
    already = {m.seq for m in messages if valid(m) and firsts[(m.author, m.inbox)] is not m}
    return table, winner, already


@settings(max_examples=100, deadline=None)
@given(elections())
def test_the_election_tally_equals_a_slow_reference_L_JUDGE_4_L_JUDGE_5(messages):
    result = tally_lepra_election(OPEN, CLOSE, P_VOTERS, P_CANDIDATES, messages)
    table, winner, already = reference_election(messages)
    assert {t.candidate: (set(t.pros), set(t.cons), t.latest_pro_at) for t in result.candidates} == table
    assert result.winner == winner
    assert {r.seq for r in result.refused if r.refusal.value == "already_voted"} == already
    counted = sum(len(t.pros) + len(t.cons) for t in result.candidates)
    assert counted == sum(1 for r in result.receipts if r.refusal is None)


@settings(max_examples=50, deadline=None)
@given(elections(), st.randoms(use_true_random=False))
def test_the_input_order_of_ballots_does_not_matter_L_JUDGE_4(messages, random):
    shuffled = list(messages)
    random.shuffle(shuffled)
    assert (tally_lepra_election(OPEN, CLOSE, P_VOTERS, P_CANDIDATES, messages)
            == tally_lepra_election(OPEN, CLOSE, P_VOTERS, P_CANDIDATES, shuffled))


@st.composite
def independent_precinct_streams(draw):
    """Ballots grouped by (voter, precinct), each group in its own order, and two interleavings of the groups."""
    pairs = draw(st.lists(st.tuples(st.sampled_from((*P_VOTERS, "z")), st.sampled_from((*P_CANDIDATES, "q"))),
                          unique=True, min_size=1, max_size=8))
    streams = {pair: draw(st.lists(st.sampled_from(P_TEXTS), min_size=1, max_size=4)) for pair in pairs}
    order_a = draw(st.permutations([pair for pair, texts in streams.items() for _ in texts]))
    return streams, order_a, draw(st.permutations(order_a))


def laid_out(streams, order):
    taken: dict = {}
    messages, identity = [], {}
    for slot, pair in enumerate(order):
        j = taken.get(pair, 0)
        taken[pair] = j + 1
        messages.append(LepraVoteMessage(seq=slot + 1, at=minute(1 + slot), author=pair[0], inbox=pair[1],
                                         text=streams[pair][j]))
        identity[slot + 1] = (*pair, j)
    return messages, identity


@settings(max_examples=100, deadline=None)
@given(independent_precinct_streams())
def test_permuting_ballots_that_share_nothing_does_not_change_the_counts_L_JUDGE_4(plan):
    streams, order_a, order_b = plan
    views = []
    for order in (order_a, order_b):
        messages, identity = laid_out(streams, order)
        result = tally_lepra_election(OPEN, CLOSE, P_VOTERS, P_CANDIDATES, messages)
        views.append(({t.candidate: (frozenset(t.pros), frozenset(t.cons)) for t in result.candidates},
                      {identity[r.seq]: r.refusal for r in result.refused}))
    assert views[0] == views[1]
