"""The forum day vote (RULES.md M-VOTE): every rule by ID, with exact counts, on ``voting.forum_tally.ForumDay``.

Pure tests: no database. Seats are named Ann, Ben, Cat, ... (tests/voting/forum_helpers.py), played by the
accounts ann, ben, cat, ...
"""
from __future__ import annotations

import pytest

from tests.voting.forum_helpers import NAMES, Thread
from voting.forum_vote import (
    CLASSIC_FORUM_RULES,
    FORUM_NO_LYNCH,
    FORUM_RULE_PRESETS,
    END_HAMMER_RULES,
    ForumDayEndHow,
    ForumDayResult,
    ForumDeadlineOutcome,
    ForumNoLynchThreshold,
    ForumOffence,
    ForumOffender,
    ForumRefusal,
    ForumRemovalCause,
    ForumVoidedVote,
    ForumVoteRules,
    forum_majority,
    forum_threshold,
)

NO_SELF_VOTES = ForumVoteRules(self_votes_allowed=False)


def refusals(receipts) -> list[ForumRefusal | None]:
    return [receipt.refusal for receipt in receipts]


# ----------------------------------------------------------------------------------------------------------------
# M-VOTE-8: majority
# ----------------------------------------------------------------------------------------------------------------

MAJORITY = {1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 6: 4, 7: 4, 8: 5, 9: 5, 10: 6,
            11: 6, 12: 7, 13: 7, 14: 8, 15: 8, 16: 9, 17: 9, 18: 10, 19: 10, 20: 11}


@pytest.mark.parametrize("living", range(1, 21))
def test_majority_is_more_than_half_of_the_living_M_VOTE_8(living):
    assert forum_majority(living) == MAJORITY[living]
    assert 2 * forum_majority(living) > living >= 2 * (forum_majority(living) - 1)


@pytest.mark.parametrize("living", range(1, 21))
def test_the_count_shows_the_majority_that_ends_the_day_M_VOTE_8(living):
    """The number a count shows is the number of votes that ends the day: one short keeps it open, that many
    (the last vote included) ends it."""
    thread = Thread(living, CLASSIC_FORUM_RULES)
    needed = MAJORITY[living]
    assert thread.day.count().majority == needed
    assert thread.day.count().threshold(NAMES[0]) == needed
    for voter in NAMES[:needed - 1]:
        thread.say(voter, f"##VOTE {NAMES[0]}")
    assert thread.day.end is None
    assert len(thread.votes().get(NAMES[0], ())) == needed - 1
    thread.say(NAMES[needed - 1], f"##VOTE {NAMES[0]}")
    assert thread.day.end.how is ForumDayEndHow.MAJORITY
    assert thread.day.end.eliminated == NAMES[0]
    assert len(thread.day.end.count.votes[NAMES[0]]) == needed


def test_four_of_eight_is_not_a_majority_five_is_M_VOTE_8():
    thread = Thread(8, CLASSIC_FORUM_RULES)
    for voter in ("Ben", "Cat", "Dan", "Eve"):
        thread.say(voter, "##VOTE Ann")
    assert thread.day.end is None
    assert thread.votes() == {"Ann": ("Ben", "Cat", "Dan", "Eve")}
    assert thread.day.count().majority == 5
    thread.say("Fay", "##VOTE Ann")
    assert thread.day.end.result is ForumDayResult.LYNCH
    assert thread.day.end.eliminated == "Ann"
    assert thread.day.end.count.votes == {"Ann": ("Ben", "Cat", "Dan", "Eve", "Fay")}


def test_the_hammer_is_evaluated_after_the_triggering_vote_is_stored_M_VOTE_8():
    """Dan moves his vote from Ben to Ann: the count that decides is the one with Dan's vote on Ann and no
    longer on Ben, and it is the count the day ends with."""
    thread = Thread(5, CLASSIC_FORUM_RULES)
    thread.say("Ben", "##VOTE Ann")
    thread.say("Cat", "##VOTE Ann")
    thread.say("Dan", "##VOTE Ben")
    thread.say("Eve", "##VOTE Ben")
    assert thread.votes() == {"Ann": ("Ben", "Cat"), "Ben": ("Dan", "Eve")}
    assert thread.day.end is None
    thread.say("Dan", "##VOTE Ann")
    end = thread.day.end
    assert (end.how, end.result, end.eliminated, end.seq, end.trigger) == (
        ForumDayEndHow.MAJORITY, ForumDayResult.LYNCH, "Ann", 5, "Dan")
    assert end.count.votes == {"Ann": ("Ben", "Cat", "Dan"), "Ben": ("Eve",)}
    assert end.count.majority == 3


def test_the_majority_is_recomputed_when_a_player_dies_M_VOTE_8_M_VOTE_9():
    """3 of 6 is no majority (4 needed); after a death, 3 of 5 is."""
    thread = Thread(6, CLASSIC_FORUM_RULES)
    for voter in ("Ben", "Cat", "Dan"):
        thread.say(voter, "##VOTE Ann")
    assert thread.day.end is None
    thread.kill("Fay")
    assert thread.day.end.eliminated == "Ann"
    assert thread.day.end.count.majority == 3
    assert thread.day.end.trigger is None
    assert thread.day.end.seq == 4


def test_forum_threshold_for_no_lynch_is_the_majority_or_one_fewer():
    one_fewer = ForumVoteRules(no_lynch_threshold=ForumNoLynchThreshold.ONE_FEWER)
    assert [forum_threshold(FORUM_NO_LYNCH, n, END_HAMMER_RULES) for n in (1, 2, 4, 7, 8)] == [1, 2, 3, 4, 5]
    assert [forum_threshold(FORUM_NO_LYNCH, n, one_fewer) for n in (1, 2, 4, 7, 8)] == [1, 1, 2, 3, 4]
    assert [forum_threshold("Ann", n, one_fewer) for n in (1, 2, 4, 7, 8)] == [1, 2, 3, 4, 5]


def test_no_lynch_with_one_fewer_ends_the_day_at_half_of_an_even_number():
    thread = Thread(4, ForumVoteRules(majority_ends_day=True, no_lynch_threshold=ForumNoLynchThreshold.ONE_FEWER))
    thread.say("Ann", "##VOTE No Lynch")
    assert thread.day.end is None
    thread.say("Ben", "##vote no lynch")
    assert (thread.day.end.result, thread.day.end.eliminated) == (ForumDayResult.NO_LYNCH, None)
    assert thread.day.end.count.votes == {FORUM_NO_LYNCH: ("Ann", "Ben")}
    assert thread.day.end.count.no_lynch_threshold == 2


def test_majority_of_a_negative_number_is_an_error():
    with pytest.raises(ValueError, match="cannot be negative"):
        forum_majority(-1)


# ----------------------------------------------------------------------------------------------------------------
# M-VOTE-1: votes and names
# ----------------------------------------------------------------------------------------------------------------

def test_a_vote_names_one_living_player_by_name_prefix_or_misspelling_M_VOTE_1():
    thread = Thread(5, names=("Alexandra", "Bartholomew", "Cat", "Dan", "Eve"))
    thread.say("Cat", "##VOTE alexandra")
    thread.say("Dan", "##VOTE Barth")
    thread.say("Eve", "##VOTE Bartholomwe")
    assert thread.votes() == {"Bartholomew": ("Dan", "Eve"), "Alexandra": ("Cat",)}


def test_an_ambiguous_prefix_is_refused_with_the_candidates_M_VOTE_1():
    thread = Thread(4, names=("Alice", "Albert", "Bob", "Carol"))
    (receipt,) = thread.say("Bob", "##VOTE Al")
    assert receipt.refusal is ForumRefusal.AMBIGUOUS_NAME
    assert receipt.candidates == ("Albert", "Alice")
    assert receipt.message == "'Al' could be Albert, Alice: write more of the name."
    assert thread.votes() == {}
    (receipt,) = thread.say("Bob", "##VOTE Ali")
    assert receipt.accepted and receipt.target == "Alice"


def test_an_unknown_name_is_refused_and_the_old_vote_stays_M_VOTE_1():
    thread = Thread(3)
    thread.say("Ann", "##VOTE Ben")
    (receipt,) = thread.say("Ann", "##VOTE Zelda")
    assert (receipt.refusal, receipt.candidates) == (ForumRefusal.UNKNOWN_NAME, ())
    assert receipt.message == "No living player matches 'Zelda'."
    assert thread.votes() == {"Ben": ("Ann",)}


def test_a_vote_without_a_name_is_refused_M_VOTE_1():
    thread = Thread(3)
    (receipt,) = thread.say("Ann", "##VOTE")
    assert receipt.refusal is ForumRefusal.MISSING_NAME


def test_a_vote_on_a_dead_player_is_refused_even_if_a_living_name_is_close_M_VOTE_1():
    thread = Thread(4, names=("Alice", "Alicia", "Bob", "Carol"))
    thread.kill("Alice")
    (receipt,) = thread.say("Bob", "##VOTE Alice")
    assert (receipt.refusal, receipt.message) == (ForumRefusal.TARGET_NOT_LIVING, "Alice is no longer alive.")
    assert thread.votes() == {}


def test_no_lynch_is_a_vote_and_a_new_vote_replaces_the_old_M_VOTE_1():
    thread = Thread(5)
    thread.say("Ann", "##VOTE No Lynch")
    assert thread.votes() == {FORUM_NO_LYNCH: ("Ann",)}
    thread.say("Ann", "##VOTE Ben")
    assert thread.votes() == {"Ben": ("Ann",)}
    thread.say("Ann", "##UNVOTE")
    assert thread.votes() == {}
    assert thread.day.count().not_voting == ("Ann", "Ben", "Cat", "Dan", "Eve")


def test_no_lynch_is_refused_when_the_rules_disallow_it():
    thread = Thread(3, ForumVoteRules(no_lynch_allowed=False))
    (receipt,) = thread.say("Ann", "##VOTE No Lynch")
    assert receipt.refusal is ForumRefusal.NO_LYNCH_DISABLED
    assert thread.votes() == {}


def test_unvote_without_a_vote_is_refused_M_VOTE_1():
    thread = Thread(3)
    (receipt,) = thread.say("Ann", "##UNVOTE")
    assert receipt.refusal is ForumRefusal.NOT_VOTING


def test_unvote_naming_another_player_leaves_the_vote_in_place():
    thread = Thread(4)
    thread.say("Ann", "##VOTE Ben")
    (receipt,) = thread.say("Ann", "##UNVOTE Cat")
    assert (receipt.refusal, receipt.message) == (ForumRefusal.UNVOTE_OTHER, "Ann votes Ben, not Cat: the vote stays.")
    assert thread.votes() == {"Ben": ("Ann",)}
    (receipt,) = thread.say("Ann", "##UNVOTE Ben")
    assert receipt.accepted and receipt.target == "Ben"
    assert thread.votes() == {}


def test_voting_the_same_target_again_changes_nothing():
    thread = Thread(5, END_HAMMER_RULES)
    thread.say("Ann", "##VOTE Cat")
    thread.say("Ben", "##VOTE Dan")
    thread.say("Ann", "##VOTE Cat")
    assert thread.votes() == {"Cat": ("Ann",), "Dan": ("Ben",)}
    thread.day.close_at_deadline()
    # Cat's vote was not re-cast: Cat reached 1 vote first, so Cat leads the tie.
    assert thread.day.end.tied == ("Cat", "Dan")


# ----------------------------------------------------------------------------------------------------------------
# M-VOTE-2 and M-VOTE-3: END marks and the END-hammer
# ----------------------------------------------------------------------------------------------------------------

def test_the_end_hammer_needs_a_majority_marked_end_on_one_target_M_VOTE_3():
    thread = Thread(5)  # majority 3
    thread.say("Ann", "##VOTE Eve\n##END")
    thread.say("Ben", "##VOTE Eve ##END")
    thread.say("Cat", "##VOTE Eve")
    assert thread.day.end is None  # 3 votes, 2 of them marked END
    thread.say("Dan", "##VOTE Ann ##END")
    assert thread.day.end is None  # 3 END marks, split over two targets
    thread.say("Cat", "##END")
    end = thread.day.end
    assert (end.how, end.result, end.eliminated, end.trigger, end.seq) == (
        ForumDayEndHow.END_HAMMER, ForumDayResult.LYNCH, "Eve", "Cat", 5)
    assert end.count.votes == {"Eve": ("Ann", "Ben", "Cat"), "Ann": ("Dan",)}
    assert end.count.end_marked == ("Ann", "Ben", "Cat", "Dan")


def test_a_plain_majority_does_not_end_an_m21_day_M_VOTE_3():
    thread = Thread(5)
    for voter in ("Ann", "Ben", "Cat", "Dan"):
        thread.say(voter, "##VOTE Eve")
    assert thread.day.end is None
    assert thread.votes() == {"Eve": ("Ann", "Ben", "Cat", "Dan")}


def test_a_vote_change_keeps_the_end_mark_and_unend_clears_it_M_VOTE_2():
    thread = Thread(5)
    thread.say("Ann", "##VOTE Eve ##END")
    thread.say("Ann", "##VOTE Dan")
    assert thread.day.count().end_marked == ("Ann",)
    (receipt,) = thread.say("Ann", "##UNEND")
    assert receipt.accepted
    assert thread.day.count().end_marked == ()
    (receipt,) = thread.say("Ann", "##UNEND")
    assert receipt.refusal is ForumRefusal.NO_END_MARK


def test_end_marks_end_nothing_without_the_end_hammer_M_VOTE_3():
    thread = Thread(5, ForumVoteRules(end_hammer=False))
    for voter in ("Ann", "Ben", "Cat"):
        thread.say(voter, "##VOTE Eve ##END")
    assert thread.day.end is None
    assert thread.day.count().end_marked == ("Ann", "Ben", "Cat")


# ----------------------------------------------------------------------------------------------------------------
# M-VOTE-4: the deadline
# ----------------------------------------------------------------------------------------------------------------

def plurality_day(rules: ForumVoteRules) -> Thread:
    """Eve 2 (Ann, Ben), Dan 2 (Cat, Fay): a tie, Eve reached 2 first; Gus votes No Lynch."""
    thread = Thread(7, rules)
    thread.say("Ann", "##VOTE Eve")
    thread.say("Ben", "##VOTE Eve")
    thread.say("Cat", "##VOTE Dan")
    thread.say("Fay", "##VOTE Dan")
    thread.say("Gus", "##VOTE No Lynch")
    return thread


def test_at_the_deadline_the_most_votes_are_eliminated_M_VOTE_4():
    thread = plurality_day(END_HAMMER_RULES)
    thread.say("Gus", "##VOTE Dan")
    end = thread.day.close_at_deadline()
    assert (end.how, end.result, end.eliminated, end.seq, end.tied) == (
        ForumDayEndHow.DEADLINE, ForumDayResult.LYNCH, "Dan", None, ())
    assert end.count.votes == {"Dan": ("Cat", "Fay", "Gus"), "Eve": ("Ann", "Ben")}


def test_a_tie_at_the_deadline_eliminates_nobody_M_VOTE_4():
    end = plurality_day(END_HAMMER_RULES).day.close_at_deadline()
    assert (end.result, end.eliminated, end.tied) == (ForumDayResult.NOBODY, None, ("Eve", "Dan"))


def test_no_lynch_can_win_at_the_deadline_M_VOTE_4():
    thread = Thread(5)
    thread.say("Ann", "##VOTE No Lynch")
    thread.say("Ben", "##VOTE no-lynch")
    thread.say("Cat", "##VOTE Dan")
    end = thread.day.close_at_deadline()
    assert (end.result, end.eliminated, end.tied) == (ForumDayResult.NO_LYNCH, None, ())


def test_a_deadline_without_votes_eliminates_nobody_M_VOTE_4():
    end = Thread(5).day.close_at_deadline()
    assert (end.result, end.eliminated, end.tied) == (ForumDayResult.NOBODY, None, ())


def test_the_earliest_leader_outcome_breaks_a_tie_by_who_reached_the_count_first():
    end = plurality_day(ForumVoteRules(deadline_outcome=ForumDeadlineOutcome.EARLIEST_LEADER)).day.close_at_deadline()
    assert (end.result, end.eliminated, end.tied) == (ForumDayResult.LYNCH, "Eve", ("Eve", "Dan"))


def test_the_nobody_outcome_eliminates_nobody_at_the_deadline():
    thread = Thread(5, ForumVoteRules(deadline_outcome=ForumDeadlineOutcome.NOBODY))
    thread.say("Ann", "##VOTE Ben")
    end = thread.day.close_at_deadline()
    assert (end.result, end.eliminated) == (ForumDayResult.NOBODY, None)


def test_a_hammered_day_keeps_its_end_at_the_deadline_M_VOTE_4():
    thread = Thread(3, CLASSIC_FORUM_RULES)
    thread.say("Ann", "##VOTE Cat")
    thread.say("Ben", "##VOTE Cat")
    hammer = thread.day.end
    assert thread.day.close_at_deadline() is hammer
    assert hammer.how is ForumDayEndHow.MAJORITY


# ----------------------------------------------------------------------------------------------------------------
# M-VOTE-5: the host's list of offenders
# ----------------------------------------------------------------------------------------------------------------

def test_offenders_are_listed_for_the_host_M_VOTE_5():
    thread = Thread(4)
    thread.say("Ann", "Morning.")
    thread.say("Ann", "##VOTE Ben")
    thread.say("Ben", "##VOTE Ann")
    thread.say("Ben", "Changed my mind. ##UNVOTE")  # ends the day on an unvote: allowed, but listed (M-VOTE-7)
    thread.say("Cat", "Hello")
    thread.say("Cat", "Hello again")
    thread.day.close_at_deadline()
    assert thread.day.offenders() == (
        ForumOffender("Ben", (ForumOffence.NO_VOTE_AT_END,)),
        ForumOffender("Cat", (ForumOffence.NO_VOTE_AT_END, ForumOffence.NEVER_VOTED)),
        ForumOffender("Dan", (ForumOffence.NO_VOTE_AT_END, ForumOffence.NEVER_VOTED,
                              ForumOffence.FEWER_THAN_TWO_POSTS)),
    )


def test_posts_after_the_end_do_not_count_towards_two_posts_M_VOTE_5():
    thread = Thread(3, CLASSIC_FORUM_RULES)
    thread.say("Ann", "##VOTE Cat")
    thread.say("Ben", "##VOTE Cat")
    thread.say("Ann", "Good riddance")
    thread.say("Ben", "Indeed")
    assert thread.day.offenders() == (
        ForumOffender("Ann", (ForumOffence.FEWER_THAN_TWO_POSTS,)),
        ForumOffender("Ben", (ForumOffence.FEWER_THAN_TWO_POSTS,)),
        ForumOffender("Cat", (ForumOffence.NO_VOTE_AT_END, ForumOffence.NEVER_VOTED,
                              ForumOffence.FEWER_THAN_TWO_POSTS)),
    )


# ----------------------------------------------------------------------------------------------------------------
# M-VOTE-6: who may vote
# ----------------------------------------------------------------------------------------------------------------

def test_a_dead_player_cannot_vote_M_VOTE_6():
    thread = Thread(4)
    thread.kill("Dan")
    (receipt,) = thread.say("Dan", "##VOTE Ann")
    assert (receipt.refusal, receipt.seat) == (ForumRefusal.NOT_LIVING, "Dan")
    assert thread.votes() == {}


def test_an_account_outside_the_game_cannot_vote():
    thread = Thread(4)
    (receipt,) = thread.post_as("spectator", "##VOTE Ann")
    assert (receipt.refusal, receipt.seat) == (ForumRefusal.NOT_A_PLAYER, None)


# ----------------------------------------------------------------------------------------------------------------
# M-VOTE-7: several commands, END without a vote, self-votes, after the hammer
# ----------------------------------------------------------------------------------------------------------------

def test_vote_then_unvote_then_vote_in_one_post_leaves_the_last_vote_M_VOTE_7():
    thread = Thread(5)
    receipts = thread.say("Ann", "##VOTE Ben\nOn second thought...\n##UNVOTE\n##VOTE Cat")
    assert [(r.command.kind.value, r.refusal, r.target) for r in receipts] == [
        ("vote", None, "Ben"), ("unvote", None, "Ben"), ("vote", None, "Cat")]
    assert thread.votes() == {"Cat": ("Ann",)}


def test_end_while_not_voting_is_refused_M_VOTE_7():
    thread = Thread(5)
    (receipt,) = thread.say("Ann", "##END")
    assert (receipt.refusal, receipt.message) == (ForumRefusal.END_WITHOUT_VOTE,
                                                  "##END needs a vote in place: vote first.")
    assert thread.day.count().end_marked == ()
    # Order matters within a post: END before the vote is refused, after it is accepted.
    assert refusals(thread.say("Ann", "##END ##VOTE Ben ##END")) == [ForumRefusal.END_WITHOUT_VOTE, None, None]
    assert thread.day.count().end_marked == ("Ann",)


def test_a_self_vote_counts_unless_the_host_disables_it_M_VOTE_7():
    allowed = Thread(3, CLASSIC_FORUM_RULES)
    allowed.say("Ann", "##VOTE Ann")
    allowed.say("Ben", "##VOTE Ann")
    assert (allowed.day.end.eliminated, allowed.day.end.count.votes) == ("Ann", {"Ann": ("Ann", "Ben")})
    disabled = Thread(3, NO_SELF_VOTES)
    (receipt,) = disabled.say("Ann", "##VOTE Ann")
    assert (receipt.refusal, receipt.message) == (ForumRefusal.SELF_VOTE, "Self-votes are not allowed here.")
    assert disabled.votes() == {}


def test_once_the_hammer_falls_later_posts_and_commands_carry_no_votes_M_VOTE_7():
    thread = Thread(5, CLASSIC_FORUM_RULES)
    thread.say("Ann", "##VOTE Eve")
    thread.say("Ben", "##VOTE Eve")
    receipts = thread.say("Cat", "##VOTE Eve\n##UNVOTE")  # the vote hammers; the unvote comes too late
    assert refusals(receipts) == [None, ForumRefusal.DAY_OVER]
    assert refusals(thread.say("Dan", "##VOTE Ann")) == [ForumRefusal.DAY_OVER]
    assert thread.day.end.seq == 3
    assert thread.day.count().votes == {"Eve": ("Ann", "Ben", "Cat")}


# ----------------------------------------------------------------------------------------------------------------
# M-VOTE-9: deaths during the day; replacements
# ----------------------------------------------------------------------------------------------------------------

def test_votes_on_a_player_killed_mid_day_are_void_and_the_voters_told_not_listed_M_VOTE_9():
    thread = Thread(6)
    thread.say("Ann", "##VOTE Fay")
    thread.say("Ben", "##VOTE Fay")
    thread.say("Fay", "##VOTE Cat")
    thread.say("Dan", "##VOTE Cat")
    voided = thread.kill("Fay", ForumRemovalCause.KILLED)
    assert voided == (
        ForumVoidedVote(seq=5, voter="Ann", target="Fay", removed="Fay", cause=ForumRemovalCause.KILLED),
        ForumVoidedVote(seq=5, voter="Ben", target="Fay", removed="Fay", cause=ForumRemovalCause.KILLED),
        ForumVoidedVote(seq=5, voter="Fay", target="Cat", removed="Fay", cause=ForumRemovalCause.KILLED),
    )
    count = thread.day.count()
    assert count.votes == {"Cat": ("Dan",)}
    assert count.living == ("Ann", "Ben", "Cat", "Dan", "Eve")
    assert count.majority == 3
    assert count.voided == ("Ann", "Ben")
    assert count.not_voting == ("Cat", "Eve")  # Ann and Ben are not listed as non-voters
    assert thread.day.voided == voided
    thread.day.close_at_deadline()
    offenders = {offender.seat: offender.offences for offender in thread.day.offenders()}
    assert ForumOffence.NO_VOTE_AT_END not in offenders["Ann"]
    assert ForumOffence.NO_VOTE_AT_END in offenders["Eve"]


def test_a_voided_voter_who_votes_again_is_an_ordinary_voter_M_VOTE_9():
    thread = Thread(5)
    thread.say("Ann", "##VOTE Eve")
    thread.kill("Eve")
    thread.say("Ann", "##VOTE Ben")
    assert thread.day.count().voided == ()
    thread.say("Ann", "##UNVOTE")
    assert thread.day.count().not_voting == ("Ann", "Ben", "Cat", "Dan")


def test_a_host_removal_voids_votes_like_a_death_M_VOTE_9():
    thread = Thread(4)
    thread.say("Ann", "##VOTE Dan")
    assert thread.kill("Dan", ForumRemovalCause.REMOVED) == (
        ForumVoidedVote(seq=2, voter="Ann", target="Dan", removed="Dan", cause=ForumRemovalCause.REMOVED),)


def test_removing_a_seat_that_is_not_alive_is_an_error():
    thread = Thread(3)
    thread.kill("Cat")
    with pytest.raises(ValueError, match="seat Cat is not alive"):
        thread.kill("Cat")


def test_a_replacement_keeps_the_seat_its_vote_and_the_votes_on_it_L_REPLACE_1():
    thread = Thread(5, CLASSIC_FORUM_RULES)
    thread.say("Ann", "##VOTE Ben ##END")
    thread.say("Cat", "##VOTE Ann")
    thread.replace("Ann", "newcomer")
    assert thread.votes() == {"Ben": ("Ann",), "Ann": ("Cat",)}
    assert thread.day.count().end_marked == ("Ann",)
    (old,) = thread.post_as("ann", "##VOTE Cat")
    assert (old.refusal, old.seat) == (ForumRefusal.REPLACED, "Ann")
    (new,) = thread.post_as("newcomer", "##VOTE Cat")
    assert (new.refusal, new.seat, new.target) == (None, "Ann", "Cat")
    (by_old_name,) = thread.say("Dan", "##VOTE newcomer")
    assert by_old_name.target == "Ann"


def test_a_replacement_cannot_take_an_account_that_plays_another_seat():
    thread = Thread(3)
    with pytest.raises(ValueError, match="account ben already plays seat Ben"):
        thread.replace("Ann", "ben")


# ----------------------------------------------------------------------------------------------------------------
# The rules as data
# ----------------------------------------------------------------------------------------------------------------

def test_the_default_rules_are_m21s():
    assert END_HAMMER_RULES.as_dict() == {
        "majority_ends_day": False, "end_hammer": True, "deadline_outcome": "plurality", "no_lynch_allowed": True,
        "no_lynch_threshold": "same_as_lynch", "self_votes_allowed": True,
    }
    assert CLASSIC_FORUM_RULES.as_dict() == {
        "majority_ends_day": True, "end_hammer": False, "deadline_outcome": "earliest_leader",
        "no_lynch_allowed": True, "no_lynch_threshold": "same_as_lynch", "self_votes_allowed": True,
    }


def test_rules_from_data_start_from_a_preset():
    assert ForumVoteRules.from_dict({}) == END_HAMMER_RULES
    assert ForumVoteRules.from_dict({"preset": "classic"}) == CLASSIC_FORUM_RULES
    assert ForumVoteRules.from_dict({"self_votes_allowed": False, "no_lynch_threshold": "one_fewer"}) == \
        ForumVoteRules(self_votes_allowed=False, no_lynch_threshold=ForumNoLynchThreshold.ONE_FEWER)
    assert set(FORUM_RULE_PRESETS) == {"end_hammer", "classic"}


@pytest.mark.parametrize(("data", "message"), [
    ({"preset": "lepra"}, "unknown rules preset 'lepra'; known: classic, end_hammer"),
    ({"hammer": True}, "unknown rules field\\(s\\): hammer"),
    ({"end_hammer": "yes"}, "end_hammer must be true or false"),
    ({"deadline_outcome": "coin_toss"}, "'coin_toss' is not a valid ForumDeadlineOutcome"),
])
def test_bad_rules_data_is_refused(data, message):
    with pytest.raises(ValueError, match=message):
        ForumVoteRules.from_dict(data)


def test_receipts_name_no_lynch_as_players_write_it_M_VOTE_1():
    """A receipt is read by players: a vote on No Lynch says "No Lynch", never the engine's ``NO_LYNCH`` key."""
    thread = Thread(4)
    (receipt,) = thread.say("Ann", "##VOTE No Lynch")
    assert (receipt.target, receipt.message) == (FORUM_NO_LYNCH, "Ann votes No Lynch.")
    (receipt,) = thread.say("Ann", "##VOTE no lynch")
    assert receipt.message == "Ann already votes No Lynch."
    (receipt,) = thread.say("Ann", "##UNVOTE Ben")
    assert receipt.message == "Ann votes No Lynch, not Ben: the vote stays."
    thread.say("Ben", "##VOTE Cat")
    (receipt,) = thread.say("Ben", "##UNVOTE No Lynch")
    assert receipt.message == "Ben votes Cat, not No Lynch: the vote stays."
    (receipt,) = thread.say("Ann", "##UNVOTE")
    assert receipt.message == "Ann withdraws the vote on No Lynch."
