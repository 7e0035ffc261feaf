"""The M21 day as a pure function (``rulesets.m21.day``): M-VOTE-1..9 on the game thread's records and the
Judge's powers (close proceedings, casting vote), with exact counts, end posts and refusal messages."""
from __future__ import annotations

import pytest

from rulesets.m21.day import (
    DayState,
    DeadlinePasses,
    JudgeCasts,
    JudgeCloses,
    JudgeRefusal,
    run_m21_day,
    vote_count_text,
)
from voting.forum_vote import (
    FORUM_NO_LYNCH,
    END_HAMMER_RULES,
    ForumDayEndHow,
    ForumPost,
    ForumRefusal,
    ForumRemoval,
    ForumRemovalCause,
    ForumReplacement,
    ForumSeat,
    ForumVoteRules,
)

NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace"]
SEATS = [ForumSeat(seat=name, account=name.lower()) for name in NAMES]


class Day:
    """Records built one by one, each with the next seq."""

    def __init__(self, seats=SEATS):
        self.seats = seats
        self.records = []

    def post(self, author: str, text: str) -> Day:
        self.records.append(ForumPost(seq=len(self.records) + 1, author=author.lower(), text=text))
        return self

    def add(self, record_type, **fields) -> Day:
        self.records.append(record_type(seq=len(self.records) + 1, **fields))
        return self

    def run(self, **kwargs):
        kwargs.setdefault("judge", "Grace")
        kwargs.setdefault("judge_power_left", True)
        return run_m21_day(kwargs.pop("rules", END_HAMMER_RULES), self.seats, self.records, **kwargs)


def test_a_vote_names_one_living_player_even_abbreviated_or_misspelt_M_VOTE_1():
    out = Day().post("alice", "I think ##VOTE car").post("bob", "##VOTE Dvae").post("carol", "##vote no lynch").run()
    assert dict(out.report.count.votes) == {"Carol": ("Alice",), "Dave": ("Bob",), FORUM_NO_LYNCH: ("Carol",)}
    assert [r.message for r in out.post_receipts[1]] == ["Alice votes Carol."]


def test_an_ambiguous_name_is_refused_with_the_candidates_M_VOTE_1():
    seats = [*SEATS[:6], ForumSeat(seat="Carla", account="carla")]
    out = Day(seats).post("alice", "##VOTE Car").run(judge=None)
    (receipt,) = out.post_receipts[1]
    assert receipt.refusal is ForumRefusal.AMBIGUOUS_NAME
    assert receipt.candidates == ("Carol", "Carla") or set(receipt.candidates) == {"Carol", "Carla"}
    assert receipt.message.endswith(": write more of the name.")
    assert out.report.count.votes == {}


def test_a_vote_for_a_player_who_is_not_alive_says_so_M_VOTE_1():
    day = Day().add(ForumRemoval, seat="Frank", cause=ForumRemovalCause.KILLED).post("alice", "##VOTE Frank")
    (receipt,) = day.run().post_receipts[2]
    assert (receipt.refusal, receipt.message) == (ForumRefusal.TARGET_NOT_LIVING, "Frank is no longer alive.")


def test_unvote_and_a_new_vote_replaces_the_old_M_VOTE_1():
    out = Day().post("alice", "##VOTE Bob").post("alice", "##VOTE Carol").post("bob", "##VOTE Carol ##UNVOTE").run()
    assert dict(out.report.count.votes) == {"Carol": ("Alice",)}
    assert out.report.count.not_voting == ("Bob", "Carol", "Dave", "Erin", "Frank", "Grace")


def test_end_marks_and_the_hammer_end_the_day_at_once_M_VOTE_2_M_VOTE_3_M_VOTE_8():
    """7 alive: majority 4. Four votes on Bob, three marked END: no hammer; the fourth END hammers at post 8; the
    later post carries no vote."""
    day = Day()
    for name in ("alice", "carol", "dave", "erin"):
        day.post(name, "##VOTE Bob ##END" if name != "erin" else "##VOTE Bob")
    day.post("frank", "##END")  # refused: no vote
    day.post("carol", "##UNEND").post("carol", "##END")
    day.post("erin", "##END").post("frank", "##VOTE Alice")
    out = day.run()
    assert out.post_receipts[5][0].message == "##END needs a vote in place: vote first."
    assert out.end.how is ForumDayEndHow.END_HAMMER and out.end.seq == 8
    assert (out.state, out.imprisoned) == (DayState.DECIDED, "Bob")
    assert out.post_receipts[9][0].refusal is ForumRefusal.DAY_OVER
    assert dict(out.end.count.votes) == {"Bob": ("Alice", "Carol", "Dave", "Erin")}


def test_a_vote_change_keeps_the_end_mark_M_VOTE_2():
    day = Day().post("alice", "##VOTE Bob ##END ##VOTE Carol")
    assert day.run().report.count.end_marked == ("Alice",)


def test_at_the_deadline_the_plurality_is_imprisoned_M_VOTE_4():
    out = (Day().post("alice", "##VOTE Bob").post("carol", "##VOTE Bob").post("dave", "##VOTE Carol")
           .run(deadline_reached=True))
    assert (out.end.how, out.state, out.imprisoned) == (ForumDayEndHow.DEADLINE, DayState.DECIDED, "Bob")


def test_a_tie_imprisons_nobody_and_no_lynch_can_win_M_VOTE_4():
    tie = Day().post("alice", "##VOTE Bob").post("dave", "##VOTE Carol").run(judge=None, deadline_reached=True)
    assert (tie.state, tie.imprisoned, tie.end.tied) == (DayState.DECIDED, None, ("Bob", "Carol"))
    no_lynch = (Day().post("alice", "##VOTE no lynch").post("bob", "##VOTE No Lynch").post("dave", "##VOTE Carol")
                .run(deadline_reached=True))
    assert (no_lynch.imprisoned, no_lynch.no_lynch) == (None, True)


def test_the_offenders_are_listed_for_the_host_M_VOTE_5():
    out = (Day().post("alice", "##VOTE Bob").post("alice", "hello").post("bob", "##VOTE Carol").post("bob", "##UNVOTE")
           .post("bob", "x").run(deadline_reached=True))
    offenders = {o.seat: [x.value for x in o.offences] for o in out.report.offenders}
    assert "Alice" not in offenders
    assert offenders["Bob"] == ["no_vote_at_end"]
    assert offenders["Carol"] == ["no_vote_at_end", "never_voted", "fewer_than_two_posts"]


def test_an_imprisoned_or_dead_player_cannot_vote_M_VOTE_6():
    out = Day().add(ForumRemoval, seat="Alice", cause=ForumRemovalCause.KILLED).post("alice", "##VOTE Bob").run()
    (receipt,) = out.post_receipts[2]
    assert (receipt.refusal, receipt.message) == (ForumRefusal.NOT_LIVING,
                                                 "Dead, imprisoned or removed players cannot vote.")


def test_commands_of_one_post_apply_in_order_and_self_votes_follow_the_host_M_VOTE_7():
    out = Day().post("alice", "##VOTE Bob ##UNVOTE ##VOTE Alice").run()
    assert dict(out.report.count.votes) == {"Alice": ("Alice",)}
    strict = Day().post("alice", "##VOTE Alice").run(rules=ForumVoteRules(self_votes_allowed=False))
    assert strict.post_receipts[1][0].message == "Self-votes are not allowed here."


def test_votes_on_a_player_who_dies_during_the_day_are_void_and_voters_told_M_VOTE_9():
    out = (Day().post("alice", "##VOTE Bob").post("carol", "##VOTE Bob").post("dave", "##VOTE Carol")
           .add(ForumRemoval, seat="Bob", cause=ForumRemovalCause.KILLED).run(deadline_reached=True))
    assert [(v.voter, v.target) for v in out.voided_by_seq[4]] == [("Alice", "Bob"), ("Carol", "Bob")]
    assert out.report.count.voided == ("Alice", "Carol")
    assert "Alice" not in {o.seat for o in out.report.offenders if "no_vote_at_end" in o.offences}
    assert out.imprisoned == "Carol"


def test_a_replacement_keeps_the_seats_vote_L_REPLACE_1():
    out = (Day().post("alice", "##VOTE Bob").add(ForumReplacement, seat="Alice", account="newalice")
           .post("alice", "##VOTE Carol").post("newalice", "##END").run())
    assert dict(out.report.count.votes) == {"Bob": ("Alice",)}
    assert out.post_receipts[3][0].refusal is ForumRefusal.REPLACED
    assert out.report.count.end_marked == ("Alice",)


def test_the_judge_closes_proceedings_when_a_majority_has_voted_M_ROLE_judge():
    day = Day().post("alice", "##VOTE Bob").post("carol", "##VOTE Bob").post("dave", "##VOTE Carol")
    early = Day(); early.records = list(day.records); early.add(JudgeCloses, judge="Grace")
    refused = early.run()
    assert refused.judge_receipts[0].refusal is JudgeRefusal.NO_MAJORITY_VOTING
    assert refused.judge_receipts[0].message == ("Proceedings can be closed only when a majority (4 of 7) have a "
                                                 "vote in place; 3 do.")
    assert refused.state is DayState.OPEN
    day.post("erin", "##VOTE Carol").add(JudgeCloses, judge="Grace").post("frank", "##VOTE Bob")
    out = day.run()
    assert out.end.how is ForumDayEndHow.CLOSE_PROCEEDINGS and out.end.seq == 5
    assert (out.state, out.imprisoned, out.judge_power) == (DayState.DECIDED, None, "close_proceedings")
    assert out.end.tied == ("Bob", "Carol")
    assert out.post_receipts[6][0].refusal is ForumRefusal.DAY_OVER


def test_only_a_living_judge_with_the_power_left_closes_proceedings_M_ROLE_judge():
    day = Day().post("alice", "##VOTE Bob").post("carol", "##VOTE Bob").post("dave", "##VOTE Bob")
    day.post("erin", "##VOTE Carol").add(JudgeCloses, judge="Alice")
    assert day.run().judge_receipts[0].message == "Only the Judge has this power."
    used = Day(); used.records = [*day.records[:4], JudgeCloses(seq=5, judge="Grace")]
    assert used.run(judge_power_left=False).judge_receipts[0].message == ("The Judge's power has already been "
                                                                          "used this game.")
    dead = Day(); dead.records = [ForumRemoval(seq=0, seat="Grace", cause=ForumRemovalCause.KILLED),
                                  *day.records[:4], JudgeCloses(seq=5, judge="Grace")]
    assert dead.run().judge_receipts[0].message == "Only a living Judge can use this power."


def test_a_casting_vote_registered_in_advance_breaks_a_tie_M_ROLE_judge():
    day = (Day().add(JudgeCasts, judge="Grace", target="Carol").post("alice", "##VOTE Bob")
           .post("dave", "##VOTE Carol"))
    out = day.run(deadline_reached=True)
    assert out.judge_receipts[0].message == ("Registered: if the day ends in a tie involving Carol, your casting vote "
                                             "goes to Carol.")
    assert (out.state, out.imprisoned, out.judge_power) == (DayState.DECIDED, "Carol", "casting_vote")


def test_a_registered_vote_outside_the_tie_leaves_the_power_and_the_result_waits_M_ROLE_judge():
    day = (Day().add(JudgeCasts, judge="Grace", target="Erin").post("alice", "##VOTE Bob")
           .post("dave", "##VOTE Carol").add(DeadlinePasses))
    waiting = day.run()
    assert (waiting.state, waiting.imprisoned, waiting.judge_power) == (DayState.AWAITING_CASTING_VOTE, None, None)
    day.add(JudgeCasts, judge="Grace", target="Erin")
    refused = day.run()
    assert refused.judge_receipts[-1].message == "Choose one of the tied candidates: Bob, Carol."
    day.add(JudgeCasts, judge="Grace", target="Bob")
    decided = day.run()
    assert (decided.state, decided.imprisoned, decided.judge_power) == (DayState.DECIDED, "Bob", "casting_vote")
    late = Day(); late.records = day.records[:4]
    assert late.run(casting_window_over=True).state is DayState.DECIDED
    assert late.run(casting_window_over=True).imprisoned is None


def test_a_casting_vote_without_a_tie_is_refused_M_ROLE_judge():
    day = Day().post("alice", "##VOTE Bob").add(JudgeCasts, judge="Grace", target="Bob")
    out = day.run(deadline_reached=False)
    assert out.judge_receipts[0].accepted  # in advance: registered
    hammer = Day()
    for name in ("alice", "carol", "dave", "erin"):
        hammer.post(name, "##VOTE Bob ##END")
    hammer.add(JudgeCasts, judge="Grace", target="Bob")
    assert hammer.run().judge_receipts[0].message == "The day did not end in a tie waiting for a casting vote."


def test_the_vote_count_post_shows_l_minus_n_and_end_marks_M_VOTE_8():
    out = Day().post("alice", "##VOTE Bob ##END").post("carol", "##VOTE Bob").post("dave", "##VOTE No Lynch").run()
    assert vote_count_text(out.report) == (
        "**Vote count** (7 alive, 4 to hammer)\n\n"
        "- **Bob** (2, L-2): Alice (END), Carol\n"
        "- **No Lynch** (1, L-3): Dave\n"
        "- Not voting (4): Bob, Erin, Frank, Grace\n")


@pytest.mark.parametrize("living", [4, 5, 6, 7])
def test_the_majority_is_more_than_half_M_VOTE_8(living):
    out = run_m21_day(END_HAMMER_RULES, SEATS[:living], [])
    assert out.report.count.majority == living // 2 + 1
