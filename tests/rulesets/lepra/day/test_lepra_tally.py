"""The Lepra execution tally (L-VOTE): keywords (L-VOTE-2, L-VOTE-3), the window (L-VOTE-8), retractions and
repeated votes (L-VOTE-2), the nominee's last word (L-VOTE-3), proxies (L-NOM-6), spirits (L-SPIRIT-2), a nominee's
death (L-VOTE-9), the ranking and its tie-break (L-VOTE-5), no votes (L-VOTE-7), tied leaders for the court
(L-COURT-2); ``manage.py tally lepra-execution`` on the documented example; hypothesis properties against a slow
reference written independently below."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from functools import cmp_to_key
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from rulesets.lepra.day.export import LepraExportError, lepra_execution_export
from rulesets.lepra.day.tally import LepraAccepted, LepraRefusal, LepraVoteMessage, tally_lepra_execution
from tests.rulesets.lepra.day.lepra_helpers import CLOSE, MICROSECOND, OPEN, Log, minute
from rulesets.lepra.day.keywords import LepraKeyword, parse_lepra_execution

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = ROOT / "rulesets" / "lepra" / "examples" / "lepra_execution_example.jsonl"
VOTERS = ("ann", "ben", "cat", "dan", "eve", "fay", "gus", "hal")
PROPERTY_SETTINGS = settings(max_examples=100, deadline=None)


def tally(log: Log, nominees=("cat", "dan", "eve"), voters=VOTERS, **kwargs):
    return tally_lepra_execution(OPEN, CLOSE, voters, nominees, log.messages, **kwargs)


def counts(result) -> dict[str, tuple[str, ...]]:
    return {t.nominee: t.voters for t in result.nominees}


def reasons(result) -> dict[int, str]:
    return {receipt.seq: receipt.refusal.value for receipt in result.refused}


# -- keywords (L-VOTE-2, L-VOTE-3) --------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["казнить", "Казнить", "КАЗНИТЬ", "казнить!", "Казнить.", "  казнить  ",
                                  "казнить!!!", "казнить ?!", "казнить…", "\tКаЗнИтЬ\n", "казнить\u00a0!"])
def test_execute_keyword_variants_L_VOTE_2(text):
    assert parse_lepra_execution(text) is LepraKeyword.EXECUTE


@pytest.mark.parametrize("text", ["не казнить", "Не казнить!", "НЕ  КАЗНИТЬ.", " не\nказнить ", "нё казнить",
                                  "не казнить!.. "])
def test_retract_keyword_variants_with_yo_as_ye_L_VOTE_2(text):
    assert parse_lepra_execution(text) is LepraKeyword.RETRACT


def test_yo_is_read_as_ye_and_a_combining_diaeresis_too_L_VOTE_2():
    assert parse_lepra_execution("НЁ КАЗНИТЬ") is LepraKeyword.RETRACT
    assert parse_lepra_execution("не\u0308 казнить") is LepraKeyword.RETRACT  # е + combining diaeresis = ё


@pytest.mark.parametrize("text", ["казнить его", "казнить!!! он мафия", "!казнить", "казнит", "казнитъ",
                                  "казнить казнить", "не-казнить", "нет казнить", "kaznit", "", "   ", "!!!",
                                  "**казнить**", "«казнить»", "не казнить его", "казнить, не казнить",
                                  "Он - Ганди!"])
def test_near_misses_are_flood_L_VOTE_3(text):
    assert parse_lepra_execution(text) is None


# -- counting, retractions, repeated votes (L-VOTE-2, L-VOTE-4) ----------------------------------------------------


def test_a_vote_counts_and_case_and_punctuation_do_not_matter_L_VOTE_4():
    log = Log()
    log.post(1, "ann", "cat", "Казнить!")
    log.post(2, "ben", "cat", "  КАЗНИТЬ. ")
    log.post(3, "fay", "dan", "казнить")
    result = tally(log)
    assert counts(result) == {"cat": ("ann", "ben"), "dan": ("fay",), "eve": ()}
    assert result.tally("cat").latest_vote_at == minute(2)
    assert result.ranking == ("cat", "dan", "eve") and result.leader == "cat"
    assert result.refused == ()


def test_retraction_then_revote_counts_once_at_the_revote_time_L_VOTE_2_L_VOTE_4():
    log = Log()
    log.post(1, "ann", "cat", "казнить")
    log.post(2, "ann", "cat", "не казнить")
    log.post(3, "ann", "cat", "казнить")
    cat = tally(log).tally("cat")
    assert (cat.voters, cat.changed_mind, cat.revoted) == (("ann",), (), ("ann",))
    assert cat.count == 1 and cat.latest_vote_at == minute(3) and cat.vote_times == {"ann": minute(3)}


def test_who_changed_their_mind_is_who_voted_then_retracted_and_does_not_stand_L_VOTE_4():
    log = Log()
    log.post(1, "ann", "cat", "казнить")
    log.post(2, "ben", "cat", "казнить")
    log.post(3, "ann", "cat", "не казнить")
    log.post(4, "dan", "cat", "казнить")
    log.post(5, "dan", "cat", "не казнить")
    log.post(6, "dan", "cat", "казнить")
    log.post(7, "eve", "cat", "казнить")
    log.post(8, "eve", "cat", "не казнить")
    cat = tally(log).tally("cat")
    assert cat.voters == ("ben", "dan")
    assert cat.changed_mind == ("ann", "eve")  # in the order of their last retraction
    assert cat.revoted == ("dan",)
    assert cat.latest_vote_at == minute(6)


def test_a_retraction_without_a_vote_is_refused_L_VOTE_2():
    log = Log()
    log.post(1, "ann", "cat", "не казнить")
    log.post(2, "ann", "dan", "казнить")  # a vote in another inbox is no vote here
    log.post(3, "ann", "cat", "не казнить")
    log.post(4, "ann", "dan", "не казнить")
    log.post(5, "ann", "dan", "не казнить")  # twice: the second has nothing left to retract
    result = tally(log)
    assert reasons(result) == {1: "retraction_without_vote", 3: "retraction_without_vote",
                               5: "retraction_without_vote"}
    assert result.refused[0].message == "You have no vote here to retract."
    assert counts(result) == {"cat": (), "dan": (), "eve": ()}
    assert result.tally("cat").changed_mind == () and result.tally("dan").changed_mind == ("ann",)


def test_a_repeated_vote_is_refused_and_does_not_move_the_tie_break_L_VOTE_2_L_VOTE_5():
    log = Log()
    log.post(1, "ann", "cat", "казнить")
    log.post(2, "ben", "dan", "казнить")
    log.post(3, "ann", "cat", "Казнить!")  # ann already votes for cat: nothing changes
    result = tally(log)
    assert reasons(result) == {3: "already_voting"}
    assert result.refused[0].message == "You already vote here: this vote does not count again."
    assert counts(result)["cat"] == ("ann",) and result.tally("cat").latest_vote_at == minute(1)
    assert result.ranking == ("cat", "dan", "eve") and result.leader == "cat"
    assert result.tied_leaders == ("cat", "dan")


# -- the window (L-VOTE-8) -----------------------------------------------------------------------------------------


def test_a_vote_one_microsecond_before_closing_counts_and_at_closing_is_refused_L_VOTE_8():
    log = Log()
    log.post(CLOSE - MICROSECOND, "ann", "cat", "казнить")
    log.post(CLOSE, "ben", "cat", "казнить")
    log.post(CLOSE + timedelta(hours=1), "dan", "cat", "казнить")
    result = tally(log)
    assert counts(result)["cat"] == ("ann",)
    assert result.tally("cat").latest_vote_at == CLOSE - MICROSECOND
    assert reasons(result) == {2: "closed", 3: "closed"}
    assert result.refused[0].message == ("Voting closed at 2026-03-02T20:00:00+00:00: this message came too "
                                         "late.")


def test_a_vote_at_opening_counts_and_one_microsecond_earlier_is_refused_L_VOTE_8():
    log = Log()
    log.post(OPEN - MICROSECOND, "ann", "cat", "казнить")
    log.post(OPEN, "ben", "cat", "казнить")
    result = tally(log)
    assert counts(result)["cat"] == ("ben",)
    assert reasons(result) == {1: "not_open_yet"}


def test_times_in_another_offset_are_compared_as_instants_L_VOTE_8():
    msk = timezone(timedelta(hours=3))
    log = Log()
    log.post(datetime(2026, 3, 2, 22, 59, 59, 999999, tzinfo=msk), "ann", "cat", "казнить")
    log.post(datetime(2026, 3, 2, 23, 0, tzinfo=msk), "ben", "cat", "казнить")
    result = tally(log)
    assert counts(result)["cat"] == ("ann",) and reasons(result) == {2: "closed"}
    assert result.tally("cat").latest_vote_at.isoformat() == "2026-03-02T22:59:59.999999+03:00"


def test_order_is_receive_time_then_message_id_whatever_the_input_order_L_VOTE_8():
    same = minute(5)
    messages = [LepraVoteMessage(seq=7, at=same, author="ann", inbox="cat", text="не казнить"),
                LepraVoteMessage(seq=3, at=same, author="ann", inbox="cat", text="казнить")]
    result = tally_lepra_execution(OPEN, CLOSE, VOTERS, ["cat"], messages)
    assert [r.seq for r in result.receipts] == [3, 7]
    assert result.tally("cat").changed_mind == ("ann",) and result.refused == ()


# -- members, inboxes, flood and the last word (L-VOTE-1, L-VOTE-3, L-SPIRIT-2) -----------------------------------


def test_a_spirit_votes_like_a_resident_L_SPIRIT_2():
    log = Log()
    log.post(1, "spirit", "cat", "казнить")
    log.post(2, "spirit", "dan", "казнить")
    result = tally(log, voters=(*VOTERS, "spirit"))
    assert counts(result) == {"cat": ("spirit",), "dan": ("spirit",), "eve": ()}


def test_a_non_member_and_an_unknown_inbox_are_refused_L_VOTE_1():
    log = Log()
    log.post(1, "zed", "cat", "казнить")
    log.post(2, "ann", "bob", "казнить")
    result = tally(log)
    assert reasons(result) == {1: "not_a_member", 2: "unknown_inbox"}
    assert [r.message for r in result.refused] == ["zed has no vote here.", "There is no voting inbox for bob here."]
    assert result.leader is None


def test_flood_is_refused_with_a_clear_error_L_VOTE_3():
    log = Log()
    log.post(1, "ann", "cat", "казнить его")
    log.post(2, "ann", "cat", "он мафия, казнить")
    result = tally(log)
    assert reasons(result) == {1: "flood", 2: "flood"}
    assert result.refused[0].message == "Only «казнить» or «не казнить» can be posted here."
    assert counts(result)["cat"] == ()


def test_the_nominees_last_word_is_accepted_once_and_a_second_is_flood_L_VOTE_3():
    log = Log()
    first = log.post(1, "cat", "cat", "Я мирный! Проверьте Дэна.")
    log.post(2, "cat", "cat", "Ну пожалуйста")
    log.post(3, "cat", "cat", "казнить")  # the nominee may still vote, even for himself
    log.post(4, "dan", "cat", "Последнее слово?")  # only the nominee's own inbox
    log.post(5, "cat", "dan", "А вот Дэн мафия")
    result = tally(log)
    assert result.tally("cat").last_word_seq == first
    assert result.receipts[0].accepted is LepraAccepted.LAST_WORD
    assert reasons(result) == {2: "flood", 4: "flood", 5: "flood"}
    assert result.refused[0].message.startswith("You have already said your last word")
    assert counts(result)["cat"] == ("cat",)


def test_a_last_word_posted_outside_the_window_is_refused_and_does_not_use_it_up_L_VOTE_3_L_VOTE_8():
    log = Log()
    log.post(-1, "cat", "cat", "Я мирный!")
    log.post(1, "cat", "cat", "Я мирный!")
    result = tally(log)
    assert reasons(result) == {1: "not_open_yet"} and result.tally("cat").last_word_seq == 2


def test_a_nominee_who_is_not_a_voter_has_a_last_word_but_no_vote_L_VOTE_3():
    log = Log()
    log.post(1, "cat", "cat", "прощайте")
    log.post(2, "cat", "cat", "казнить")
    log.post(3, "cat", "dan", "казнить")
    result = tally(log, voters=("ann", "ben"))
    assert result.tally("cat").last_word_seq == 1
    assert reasons(result) == {2: "not_a_member", 3: "not_a_member"}


# -- proxies (L-NOM-6, L-VOTE-5) ------------------------------------------------------------------------------------


def test_proxy_votes_are_timed_at_opening_and_win_a_tie_L_NOM_6_L_VOTE_5():
    log = Log()
    log.post(1, "ann", "cat", "казнить")
    log.post(2, "ben", "cat", "казнить")
    log.post(30, "dan", "dan", "казнить")
    log.post(-120, "eve", "dan", "казнить", proxy=True)  # asked for before voting; cast at the opening
    log.post(200, "fay", "dan", "казнить", proxy=True)  # whatever its recorded time
    result = tally(log)
    dan = result.tally("dan")
    assert dan.voters == ("eve", "fay", "dan")
    assert dan.vote_times == {"eve": OPEN, "fay": OPEN, "dan": minute(30)}
    assert result.tally("cat").latest_vote_at == minute(2)
    assert result.ranking == ("dan", "cat", "eve") and result.leader == "dan"
    assert [r.at for r in result.receipts][:2] == [OPEN, OPEN]


def test_only_proxies_decide_a_tie_against_later_votes_L_VOTE_5():
    log = Log()
    log.post(-10, "ann", "cat", "казнить", proxy=True)
    log.post(0, "ben", "dan", "казнить")  # exactly at the opening: the same time as the proxy
    result = tally(log)
    assert result.tally("cat").latest_vote_at == result.tally("dan").latest_vote_at == OPEN
    # Equal times: the earlier message reached the count first (L-VOTE-5, message order).
    assert result.ranking[:2] == ("cat", "dan") and result.leader == "cat" and not result.tie_unresolved


def test_equal_latest_times_follow_message_order_not_the_nominee_key_L_VOTE_5():
    """Proxy-only votes are all counted at the opening: the nominee whose latest vote's message came first leads,
    whatever the keys' order (the old ranking gave the lead to the smaller key, "cat")."""
    log = Log()
    log.post(-20, "ann", "dan", "казнить", proxy=True)  # the first message
    log.post(-10, "ben", "cat", "казнить", proxy=True)
    result = tally(log)
    assert result.tally("cat").latest_vote_at == result.tally("dan").latest_vote_at == OPEN
    assert result.ranking[:2] == ("dan", "cat") and result.leader == "dan"
    assert result.tied_leaders == ("dan", "cat") and not result.tie_unresolved


def test_a_proxy_can_only_execute_L_NOM_6():
    log = Log()
    log.post(0, "ann", "cat", "не казнить", proxy=True)
    log.post(0, "ben", "cat", "hello", proxy=True)
    log.post(0, "cat", "cat", "last word by proxy", proxy=True)
    log.post(0, "zed", "cat", "казнить", proxy=True)
    result = tally(log)
    assert reasons(result) == {1: "proxy_not_a_vote", 2: "proxy_not_a_vote", 3: "proxy_not_a_vote",
                               4: "not_a_member"}
    assert result.tally("cat").last_word_seq is None


# -- the ranking, ties and the leader (L-VOTE-5, L-VOTE-7, L-COURT-2) -----------------------------------------------


def test_a_tie_of_two_goes_to_the_earlier_latest_vote_L_VOTE_5_L_COURT_2():
    log = Log()
    log.post(1, "ann", "dan", "казнить")
    log.post(2, "ben", "cat", "казнить")
    log.post(3, "fay", "cat", "казнить")  # cat reaches 2 at minute 3
    log.post(4, "gus", "dan", "казнить")  # dan reaches 2 at minute 4
    log.post(5, "hal", "eve", "казнить")
    result = tally(log)
    assert {t.nominee: (t.count, t.latest_vote_at) for t in result.nominees} == {
        "cat": (2, minute(3)), "dan": (2, minute(4)), "eve": (1, minute(5))}
    assert result.ranking == ("cat", "dan", "eve")
    assert result.leader == "cat" and result.tied_leaders == ("cat", "dan") and not result.tie_unresolved


def test_a_tie_of_three_goes_to_the_earliest_latest_vote_L_VOTE_5_L_COURT_2():
    log = Log()
    log.post(1, "ann", "eve", "казнить")
    log.post(2, "ben", "cat", "казнить")
    log.post(3, "fay", "dan", "казнить")
    log.post(4, "gus", "eve", "казнить")  # eve: 2 at minute 4
    log.post(5, "hal", "dan", "казнить")  # dan: 2 at minute 5
    log.post(6, "ann", "cat", "казнить")  # cat: 2 at minute 6
    log.post(7, "dan", "ann", "казнить")  # ann: 1
    result = tally(log, nominees=("ann", "cat", "dan", "eve"))
    assert {t.nominee: t.count for t in result.nominees} == {"ann": 1, "cat": 2, "dan": 2, "eve": 2}
    assert result.ranking == ("eve", "dan", "cat", "ann")
    assert result.leader == "eve" and result.tied_leaders == ("eve", "dan", "cat")


def test_a_retraction_can_hand_the_lead_back_L_VOTE_4_L_VOTE_5():
    log = Log()
    log.post(1, "ann", "cat", "казнить")
    log.post(2, "ben", "dan", "казнить")
    log.post(3, "ann", "cat", "не казнить")
    log.post(4, "ann", "cat", "казнить")  # cat's latest counted vote is now minute 4: dan leads
    result = tally(log)
    assert result.ranking == ("dan", "cat", "eve") and result.leader == "dan"


def test_a_tie_at_the_same_microsecond_follows_message_order_L_VOTE_5():
    log = Log()
    log.post(5, "ann", "dan", "казнить")
    log.post(5, "ben", "cat", "казнить")  # the same microsecond, a later message
    result = tally(log)
    assert result.ranking == ("dan", "cat", "eve") and result.leader == "dan"
    assert not result.tie_unresolved and result.tied_leaders == ("dan", "cat")


def test_no_votes_at_all_awaits_a_decision_L_VOTE_7():
    log = Log()
    log.post(1, "ann", "cat", "казнить")
    log.post(2, "ann", "cat", "не казнить")
    log.post(3, "ben", "cat", "флуд")
    result = tally(log)
    assert result.leader is None and result.awaiting_decision
    assert result.tied_leaders == () and not result.tie_unresolved
    assert result.ranking == ("cat", "dan", "eve")  # by name when nobody has a vote


def test_no_nominees_awaits_a_decision_L_VOTE_7():
    log = Log()
    log.post(1, "ann", "cat", "казнить")
    result = tally(log, nominees=())
    assert result.awaiting_decision and result.ranking == () and reasons(result) == {1: "unknown_inbox"}


def test_a_nominee_who_dies_during_voting_is_void_L_VOTE_9():
    log = Log()
    log.post(1, "ann", "cat", "казнить")
    log.post(2, "ben", "cat", "казнить")
    log.post(3, "fay", "dan", "казнить")
    result = tally(log, void_inboxes={"cat"})
    cat = result.tally("cat")
    assert cat.void and cat.voters == ("ann", "ben")  # the voters whose votes are void: they are told
    assert "cat" not in result.ranking and result.ranking == ("dan", "eve")
    assert result.leader == "dan" and result.tied_leaders == ()


def test_when_every_voted_nominee_dies_the_case_awaits_a_decision_L_VOTE_7_L_VOTE_9():
    log = Log()
    log.post(1, "ann", "cat", "казнить")
    result = tally(log, void_inboxes={"cat"})
    assert result.leader is None and result.awaiting_decision


def test_four_nominees_sharing_the_most_votes_are_all_listed_L_COURT_2():
    log = Log()
    for n, (voter, nominee) in enumerate(zip("abcd", ("cat", "dan", "eve", "fay"), strict=True)):
        log.post(n, voter, nominee, "казнить")
    result = tally(log, nominees=("cat", "dan", "eve", "fay"), voters="abcd")
    assert result.tied_leaders == ("cat", "dan", "eve", "fay")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"opens_at": CLOSE, "closes_at": OPEN}, "opens_at must come before closes_at"),
    ({"opens_at": OPEN.replace(tzinfo=None)}, "opens_at must be an aware datetime"),
    ({"nominees": ["cat", "cat"]}, "nominee listed twice: cat"),
    ({"void_inboxes": {"zed"}}, "void inboxes that are not nominees: zed"),
    ({"messages": [LepraVoteMessage(1, OPEN, "ann", "cat", "казнить"),
                   LepraVoteMessage(1, OPEN, "ben", "cat", "казнить")]}, "message id 1 appears twice"),
    ({"messages": [LepraVoteMessage(1, OPEN.replace(tzinfo=None), "ann", "cat", "x")]}, "at must be an aware"),
])
def test_inconsistent_input_raises(kwargs, message):
    arguments = {"opens_at": OPEN, "closes_at": CLOSE, "voters": VOTERS, "nominees": ["cat"], "messages": [],
                 **kwargs}
    with pytest.raises(ValueError, match=message):
        tally_lepra_execution(**arguments)


# -- manage.py tally lepra-execution ------------------------------------------------------------------------------


def command(path: Path | str) -> dict:
    out = StringIO()
    call_command("tally", "lepra-execution", str(path), stdout=out)
    return json.loads(out.getvalue())


def refused(seq, at, author, inbox, reason, message, proxy=False) -> dict:
    return {"seq": seq, "at": f"2026-03-02T{at}+00:00", "author": author, "inbox": inbox, "proxy": proxy,
            "reason": reason, "message": message}


EXAMPLE_OUTPUT = {
    "opens_at": "2026-03-02T16:00:00+00:00",
    "closes_at": "2026-03-02T20:00:00+00:00",
    "nominees": [
        {"nominee": "cat", "count": 3, "voters": ["fay", "ann", "hal"], "changed_mind": [], "revoted": ["ann"],
         "latest_vote_at": "2026-03-02T17:05:00+00:00", "last_word_seq": 4, "void": False},
        {"nominee": "dan", "count": 3, "voters": ["ben", "eve", "cat"], "changed_mind": [], "revoted": [],
         "latest_vote_at": "2026-03-02T19:59:59.999999+00:00", "last_word_seq": None, "void": False},
        {"nominee": "eve", "count": 1, "voters": ["hal"], "changed_mind": ["ben"], "revoted": [],
         "latest_vote_at": "2026-03-02T16:30:00+00:00", "last_word_seq": None, "void": False},
        {"nominee": "gus", "count": 1, "voters": ["dan"], "changed_mind": [], "revoted": [],
         "latest_vote_at": "2026-03-02T17:10:00+00:00", "last_word_seq": None, "void": True},
    ],
    "ranking": ["cat", "dan", "eve"],
    "leader": "cat",
    "tied_leaders": ["cat", "dan"],
    "tie_unresolved": False,
    "awaiting_decision": False,
    "refused": [
        refused(2, "15:59:59", "ann", "cat", "not_open_yet",
                "Voting opens at 2026-03-02T16:00:00+00:00: this message came too early."),
        refused(5, "16:07:00", "cat", "cat", "flood",
                "You have already said your last word: only «казнить» or «не казнить» can be posted here now."),
        refused(6, "16:10:00", "eve", "dan", "flood", "Only «казнить» or «не казнить» can be posted here."),
        refused(8, "16:12:00", "fay", "cat", "retraction_without_vote", "You have no vote here to retract."),
        refused(10, "16:25:00", "fay", "cat", "already_voting",
                "You already vote here: this vote does not count again."),
        refused(12, "16:40:00", "zed", "cat", "not_a_member", "zed has no vote here."),
        refused(19, "17:30:00", "ann", "bob", "unknown_inbox", "There is no voting inbox for bob here."),
        refused(21, "20:00:00", "eve", "cat", "closed",
                "Voting closed at 2026-03-02T20:00:00+00:00: this message came too late."),
    ],
}


def test_the_example_export_gives_exactly_the_documented_result_L_VOTE():
    """rulesets/lepra/examples/README.md walks through this file line by line."""
    assert command(EXAMPLE) == EXAMPLE_OUTPUT


def test_the_command_prints_indented_json_with_cyrillic_kept(tmp_path):
    path = export(tmp_path, HEADER, line(1, "2026-03-02T16:01:00+00:00", "ann", "cat", "казнить его"))
    out = StringIO()
    call_command("tally", "lepra-execution", str(path), stdout=out)
    assert "«казнить»" in out.getvalue() and '\n  "leader": null,' in out.getvalue()


HEADER = {"opens_at": "2026-03-02T16:00:00+00:00", "closes_at": "2026-03-02T20:00:00+00:00",
          "voters": ["ann", "ben"], "nominees": ["cat"]}


def line(seq, at, author, inbox, text, **extra) -> dict:
    return {"seq": seq, "at": at, "author": author, "inbox": inbox, "text": text, **extra}


def export(tmp_path: Path, *lines: dict | str) -> Path:
    path = tmp_path / "voting.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x, ensure_ascii=False) for x in lines),
                    encoding="utf-8")
    return path


def test_messages_may_come_in_any_order_and_proxy_defaults_to_false(tmp_path):
    result = command(export(tmp_path, HEADER, line(2, "2026-03-02T16:02:00+00:00", "ann", "cat", "не казнить"),
                            "", line(1, "2026-03-02T16:01:00+00:00", "ann", "cat", "казнить")))
    assert result["nominees"][0]["changed_mind"] == ["ann"] and result["refused"] == []


@pytest.mark.parametrize(("lines", "message"), [
    ([], "the export is empty"),
    (["[]"], "line 1: the line must be a JSON object"),
    ([line(1, "2026-03-02T16:01:00+00:00", "ann", "cat", "x")], "line 1: the first line must be the header"),
    ([{**HEADER, "candidates": ["cat"]}], "line 1: unknown header field\\(s\\): candidates"),
    ([{k: v for k, v in HEADER.items() if k != "nominees"}], "line 1: missing header field\\(s\\): nominees"),
    ([{**HEADER, "voters": "ann"}], "line 1: voters must be a list of non-empty strings"),
    ([{**HEADER, "opens_at": "2026-03-02 16:00"}], "line 1: opens_at needs a UTC offset"),
    ([{**HEADER, "closes_at": "tomorrow"}], "line 1: closes_at must be an ISO 8601 time"),
    ([{**HEADER, "closes_at": HEADER["opens_at"]}], "line 1: opens_at must come before closes_at"),
    ([{**HEADER, "void_inboxes": ["zed"]}], "line 1: void inboxes that are not nominees: zed"),
    ([HEADER, "{oops"], "line 2: not JSON"),
    ([HEADER, line("1", "2026-03-02T16:01:00+00:00", "ann", "cat", "x")], "line 2: seq must be an integer"),
    ([HEADER, line(1, None, "ann", "cat", "x")], "line 2: at must be an ISO 8601 time"),
    ([HEADER, line(1, "2026-03-02T16:01:00+00:00", "", "cat", "x")], "line 2: author must be a non-empty"),
    ([HEADER, line(1, "2026-03-02T16:01:00+00:00", "ann", "cat", None)], "line 2: text must be a string"),
    ([HEADER, line(1, "2026-03-02T16:01:00+00:00", "ann", "cat", "x", proxy="yes")],
     "line 2: proxy must be true or false"),
    ([HEADER, line(1, "2026-03-02T16:01:00+00:00", "ann", "cat", "x", colour="red")],
     "line 2: unknown field\\(s\\): colour"),
    ([HEADER, line(1, "2026-03-02T16:01:00+00:00", "ann", "cat", "x"),
      line(1, "2026-03-02T16:02:00+00:00", "ben", "cat", "x")], "line 3: seq 1 already used on line 2"),
])
def test_malformed_exports_are_refused_with_the_line_at_fault(tmp_path, lines, message):
    with pytest.raises(CommandError, match=message) as raised:
        call_command("tally", "lepra-execution", str(export(tmp_path, *lines)), stdout=StringIO())
    assert raised.value.returncode == 1


def test_the_export_reader_raises_a_value_error():
    with pytest.raises(LepraExportError, match="line 3: not JSON"):
        lepra_execution_export([json.dumps(HEADER), "   ", "oops"])


# -- properties (hypothesis) --------------------------------------------------------------------------------------

P_VOTERS = ("a", "b", "c", "d", "e")
P_NOMINEES = ("a", "b", "x")  # x is a nominee who is not a voter
P_INBOXES = (*P_NOMINEES, "q")  # q is no nominee
P_AUTHORS = (*P_VOTERS, "x", "z")  # z is no member
P_TEXTS = ("казнить", "Казнить!", "не казнить", "НЕ КАЗНИТЬ.", "казнить его", "флуд")
P_TIMES = (OPEN - MICROSECOND, OPEN, minute(1), minute(2), minute(3), CLOSE - MICROSECOND, CLOSE)


@st.composite
def voting_days(draw):
    rows = draw(st.lists(st.tuples(st.sampled_from(P_TIMES), st.sampled_from(P_AUTHORS),
                                   st.sampled_from(P_INBOXES), st.sampled_from(P_TEXTS),
                                   st.integers(0, 3).map(lambda n: n == 0)),  # a proxy, now and then
                         max_size=30))
    seqs = draw(st.permutations(range(1, len(rows) + 1)))
    messages = [LepraVoteMessage(seq=seq, at=at, author=author, inbox=inbox, text=text, proxy=proxy)
                for seq, (at, author, inbox, text, proxy) in zip(seqs, rows, strict=True)]
    void = draw(st.sets(st.sampled_from(P_NOMINEES)))
    return messages, void


def reference_tally(messages, voters, nominees, void):
    """An independent, slow reading of L-VOTE: every message is judged by scanning the whole record again.

    A voter's state in an inbox after their valid keywords is simply their LAST keyword: a казнить either starts a
    vote or repeats a standing one, a не казнить either withdraws one or is refused, so after a не казнить no
    vote stands, and after a казнить one does. The standing vote dates from the first казнить after the last
    не казнить."""
    def when(m):
        return OPEN if m.proxy else m.at

    def before(m1, m2):
        return (when(m1), m1.seq) < (when(m2), m2.seq)

    def own(m):
        return m.author == m.inbox and not m.proxy

    def gate(m):
        if m.inbox not in nominees:
            return "unknown_inbox"
        if m.author not in voters and not own(m):
            return "not_a_member"
        if when(m) < OPEN:
            return "not_open_yet"
        if when(m) >= CLOSE:
            return "closed"
        return None

    def keyword(m):
        return parse_lepra_execution(m.text)

    def valid_keywords(author, inbox, until=None):
        """The keyword messages of author in inbox that pass every check but the state one, in order."""
        found = [m for m in messages if m.author == author and m.inbox == inbox and gate(m) is None
                 and keyword(m) is not None and author in voters
                 and not (m.proxy and keyword(m) is not LepraKeyword.EXECUTE)]
        found = [m for m in found if until is None or before(m, until)]
        return sorted(found, key=lambda m: (when(m), m.seq))

    reasons = {}
    for m in messages:
        reason = gate(m)
        if reason is None and m.proxy and keyword(m) is not LepraKeyword.EXECUTE:
            reason = "proxy_not_a_vote"
        elif reason is None and keyword(m) is None:
            earlier_words = [o for o in messages if own(o) and o.inbox == m.inbox and gate(o) is None
                             and keyword(o) is None and before(o, m)]
            if not (own(m) and not earlier_words):
                reason = "flood"
        elif reason is None and m.author not in voters:
            reason = "not_a_member"
        elif reason is None:
            earlier = valid_keywords(m.author, m.inbox, until=m)
            standing = bool(earlier) and keyword(earlier[-1]) is LepraKeyword.EXECUTE
            if keyword(m) is LepraKeyword.EXECUTE and standing:
                reason = "already_voting"
            if keyword(m) is LepraKeyword.RETRACT and not standing:
                reason = "retraction_without_vote"
        if reason is not None:
            reasons[m.seq] = reason

    per_nominee, latest_key = {}, {}
    for nominee in nominees:
        counted, changed, revoted = {}, set(), set()
        keys = []
        for voter in voters:
            kws = valid_keywords(voter, nominee)
            if not kws:
                continue
            kinds = [keyword(m) for m in kws]
            if kinds[-1] is LepraKeyword.EXECUTE:
                last_retract = max((i for i, k in enumerate(kinds) if k is LepraKeyword.RETRACT), default=-1)
                counted[voter] = when(kws[last_retract + 1])
                keys.append((when(kws[last_retract + 1]), kws[last_retract + 1].seq))
                if any(k is LepraKeyword.RETRACT and LepraKeyword.EXECUTE in kinds[:i] for i, k in enumerate(kinds)):
                    revoted.add(voter)
            elif LepraKeyword.EXECUTE in kinds:
                changed.add(voter)
        per_nominee[nominee] = (counted, changed, revoted)
        latest_key[nominee] = max(keys, default=None)

    def compare(n1, n2):
        c1, c2 = per_nominee[n1][0], per_nominee[n2][0]
        if len(c1) != len(c2):
            return len(c2) - len(c1)
        if c1 and latest_key[n1] != latest_key[n2]:  # the earlier latest vote; equal times: message order
            return -1 if latest_key[n1] < latest_key[n2] else 1
        return -1 if n1 < n2 else 1

    ranking = sorted((n for n in nominees if n not in void), key=cmp_to_key(compare))
    leader = ranking[0] if ranking and per_nominee[ranking[0]][0] else None
    return reasons, per_nominee, tuple(ranking), leader


@PROPERTY_SETTINGS
@given(voting_days())
def test_the_tally_equals_a_slow_reference_L_VOTE(day):
    messages, void = day
    result = tally_lepra_execution(OPEN, CLOSE, P_VOTERS, P_NOMINEES, messages, void_inboxes=void)
    reasons_, per_nominee, ranking, leader = reference_tally(messages, P_VOTERS, P_NOMINEES, void)
    assert reasons(result) == reasons_
    for t in result.nominees:
        counted, changed, revoted = per_nominee[t.nominee]
        assert dict(t.vote_times) == counted
        assert set(t.voters) == set(counted) and len(t.voters) == len(counted)
        assert set(t.changed_mind) == changed and set(t.revoted) == revoted
        assert t.latest_vote_at == (max(counted.values()) if counted else None)
    assert result.ranking == ranking and result.leader == leader


@settings(max_examples=50, deadline=None)
@given(voting_days(), st.randoms(use_true_random=False))
def test_the_input_order_of_messages_does_not_matter_L_VOTE_8(day, random):
    messages, void = day
    shuffled = list(messages)
    random.shuffle(shuffled)
    assert (tally_lepra_execution(OPEN, CLOSE, P_VOTERS, P_NOMINEES, messages, void_inboxes=void)
            == tally_lepra_execution(OPEN, CLOSE, P_VOTERS, P_NOMINEES, shuffled, void_inboxes=void))


@st.composite
def independent_streams(draw):
    """Messages grouped by (author, inbox), each group in its own order, and an interleaving of the groups."""
    pairs = draw(st.lists(st.tuples(st.sampled_from(P_AUTHORS), st.sampled_from(P_INBOXES)), unique=True,
                          min_size=1, max_size=8))
    streams = {pair: draw(st.lists(st.sampled_from(P_TEXTS), min_size=1, max_size=5)) for pair in pairs}
    order_a = draw(st.permutations([pair for pair, texts in streams.items() for _ in texts]))
    order_b = draw(st.permutations(order_a))
    return streams, order_a, order_b


def laid_out(streams, order):
    """Give the i-th message of the interleaving the i-th time slot (all inside the window); the j-th occurrence
    of a pair in ``order`` is that pair's j-th message. Returns the messages and seq → (author, inbox, j)."""
    taken: dict = {}
    messages, identity = [], {}
    for slot, pair in enumerate(order):
        j = taken.get(pair, 0)
        taken[pair] = j + 1
        seq = slot + 1
        messages.append(LepraVoteMessage(seq=seq, at=minute(1 + slot), author=pair[0], inbox=pair[1],
                                         text=streams[pair][j]))
        identity[seq] = (*pair, j)
    return messages, identity


def order_free_view(result, identity):
    """Everything in a result that cannot depend on the interleaving of independent streams: who counts, who
    changed their mind, who re-voted, whose message was the last word and why each message was refused."""
    return ({t.nominee: (frozenset(t.voters), frozenset(t.changed_mind), frozenset(t.revoted),
                         identity.get(t.last_word_seq)) for t in result.nominees},
            {identity[r.seq]: r.refusal for r in result.refused})


@PROPERTY_SETTINGS
@given(independent_streams())
def test_permuting_messages_that_share_nothing_does_not_change_the_result_L_VOTE_4(plan):
    streams, order_a, order_b = plan
    a, identity_a = laid_out(streams, order_a)
    b, identity_b = laid_out(streams, order_b)
    assert (order_free_view(tally_lepra_execution(OPEN, CLOSE, P_VOTERS, P_NOMINEES, a), identity_a)
            == order_free_view(tally_lepra_execution(OPEN, CLOSE, P_VOTERS, P_NOMINEES, b), identity_b))


@PROPERTY_SETTINGS
@given(st.lists(st.tuples(st.sampled_from(("a", "b", "c")), st.sampled_from(("казнить", "не казнить"))),
                max_size=40))
def test_retract_then_revote_sequences_never_double_count_L_VOTE_2_L_VOTE_4(sequence):
    log = Log()
    for n, (voter, text) in enumerate(sequence):
        log.post(n / 10, voter, "x", text)
    result = tally_lepra_execution(OPEN, CLOSE, ("a", "b", "c"), ["x"], log.messages)
    x = result.tally("x")
    last = {voter: text for voter, text in sequence}
    assert sorted(x.voters) == sorted(voter for voter, text in last.items() if text == "казнить")
    assert len(set(x.voters)) == x.count <= 3
    accepted_votes = sum(1 for r in result.receipts if r.accepted is LepraAccepted.VOTE)
    accepted_retractions = sum(1 for r in result.receipts if r.accepted is LepraAccepted.RETRACTION)
    assert accepted_votes - accepted_retractions == x.count
    refusals = {r.refusal for r in result.refused}
    assert refusals <= {LepraRefusal.ALREADY_VOTING, LepraRefusal.RETRACTION_WITHOUT_VOTE}
