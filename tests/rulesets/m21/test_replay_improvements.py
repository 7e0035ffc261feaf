"""The replay tool (``voting.forum_replay``, ``manage.py replay_forum_game``) reads what real games showed: a
refused redundant ``##UNVOTE`` is no difference from the host; actions marked ``expected_valid: false`` are
skipped and reported; a day without a host final count (``host_final_vote_count: null``); a day that reaches its
deadline (``deadline_post``) resolved by the file's ``ruleset.deadline_rule`` (M-VOTE-4); the host's documented
mistakes live in the data files (``host_error``), not in code. Format: tests/data/real_games/README.md."""
from __future__ import annotations

import contextlib
import copy
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from voting.forum_replay import CountCheckStatus, ReplayFormatError, replay_forum_game, replay_rules
from voting.forum_vote import ForumDeadlineOutcome

ROOT = Path(__file__).resolve().parents[3]
REAL_GAMES = ROOT / "tests" / "data" / "real_games"


def load(name: str) -> dict:
    return json.loads((REAL_GAMES / name).read_text(encoding="utf-8"))


def vote(post: int, voter: str, target: str | None, action: str = "VOTE", **extra) -> dict:
    return {"post": post, "time": "2020-01-01T00:00", "voter": voter, "voter_account": f"{voter}.1",
            "action": action, "target": target, **extra}


def small_game(actions: list[dict], *, deadline_post: int | None, official: dict, deadline_rule: str | None = None,
               final_count: dict | None = None) -> dict:
    """Five seats (P05 mafia), one day from post 0 to post 100, and the given actions."""
    ruleset = {"no_lynch_threshold": "same as a lynch (majority)"}
    if deadline_rule is not None:
        ruleset["deadline_rule"] = deadline_rule
    seats = [f"P0{n}" for n in range(1, 6)]
    day = {
        "day": 1, "start_post": 0, "end_post": 100, "alive_at_start": seats,
        "actions": [*actions, {"post": 100, "time": "", "voter": None, "action": "END", "target": official.get(
            "eliminated"), "result": official["result"], "by": "host"}],
        "official": {"announced_in_post": 100, "host_final_vote_count": final_count, **official},
        "host_vote_counts": [final_count] if final_count else [], "events": [],
    }
    if deadline_post is not None:
        day["deadline_post"] = deadline_post
    return {
        "schema": "real-game-replay/v1", "game_key": "small", "ruleset": ruleset, "moderators": ["MOD1"],
        "players": [{"id": seat, "accounts": [{"id": f"{seat}.1", "from_post": 0, "until_post": None}],
                     "alignment": "mafia" if seat == "P05" else "town"} for seat in seats],
        "days": [day], "nights": [], "winner": "town" if official.get("eliminated") == "P05" else "unknown",
    }


def run_command(game: dict, tmp_path: Path) -> list[str]:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(game), encoding="utf-8")
    out = StringIO()
    with contextlib.suppress(CommandError):  # a DIFF exits 1; the lines are what is checked
        call_command("replay_forum_game", str(path), stdout=out)
    return out.getvalue().splitlines()


def test_a_refused_redundant_unvote_is_no_difference_from_the_host_M_VOTE_1():
    """An ``##UNVOTE`` by a seat with no vote is refused (nothing to withdraw) and the host counted nothing
    either: the day still matches, and the receipt says why."""
    game = load("game_1_9p.json")
    day1 = game["days"][0]
    first = day1["actions"][0]
    day1["actions"].insert(0, {**first, "action": "UNVOTE", "target": None, "target_text_match": "unvote"})
    replay = replay_forum_game(game)
    assert replay.days[0].matches
    assert replay.days[0].ended_at == 114
    assert replay.matches


def test_actions_marked_not_valid_are_skipped_and_reported(tmp_path):
    """Three votes on P05 would hammer at post 12; the host did not count the third (posted after the deadline,
    says the file), so the day goes on until P04's vote at post 20 hammers P05."""
    actions = [vote(10, "P01", "P05"), vote(11, "P02", "P05"),
               vote(12, "P03", "P05", expected_valid=False, reason="posted after the deadline"),
               vote(20, "P04", "P05")]
    final = {"post": 30, "time": "", "count": {"P05": ["P01", "P02", "P04"]}, "declared_numbers": {}}
    game = small_game(actions, deadline_post=None, official={"result": "lynch", "eliminated": "P05"},
                      final_count=final)
    day = replay_forum_game(game).days[0]
    assert (day.matches, day.ended_at, day.eliminated) == (True, 20, "P05")
    assert [(s.post, s.voter, s.action, s.target, s.reason) for s in day.skipped] == [
        (12, "P03", "VOTE", "P05", "posted after the deadline")]
    assert day.as_dict()["skipped_actions"] == [
        {"post": 12, "voter": "P03", "action": "VOTE", "target": "P05", "reason": "posted after the deadline"}]
    lines = run_command(game, tmp_path)
    assert "    skipped (expected_valid: false): post 12: P03 VOTE P05 (posted after the deadline)" in lines
    assert lines[0].startswith("Replay of small: 5 seats, 1 days")


def test_a_day_without_a_host_final_count_is_replayed():
    """``host_final_vote_count: null`` is allowed (README): the result and the end post are still compared,
    the end against the host's closing post."""
    game = load("game_1_9p.json")
    game["days"][0]["official"]["host_final_vote_count"] = None
    day = replay_forum_game(game).days[0]
    assert (day.matches, day.ended_at, day.result, day.eliminated) == (True, 114, "lynch", "P07")
    assert (day.host_count_post, day.host_count) == (None, {})
    assert day.as_dict()["host_final_count_post"] is None


def test_a_day_without_a_final_count_still_fails_on_the_wrong_elimination():
    game = load("game_1_9p.json")
    game["days"][0]["official"]["host_final_vote_count"] = None
    game["days"][0]["official"]["eliminated"] = "P03"
    day = replay_forum_game(game).days[0]
    assert day.problems == ("ours: lynch P07, host: lynch P03",)


# Two votes on P01 (posts 10, 11), then two on P02 (posts 12, 13): a tie at 2; P03 votes P01 at post 40, after the
# deadline (which passed after post 30); P04 and P05 vote P01 at 41 and 42, which would be a majority.
TIED = [vote(10, "P03", "P01"), vote(11, "P04", "P01"), vote(12, "P01", "P02"), vote(13, "P05", "P02"),
        vote(40, "P02", "P01"), vote(41, "P04", "P01")]


@pytest.mark.parametrize(("rule", "outcome", "result", "eliminated"), [
    ("plurality", ForumDeadlineOutcome.PLURALITY, "nobody", None),
    ("earliest_leader", ForumDeadlineOutcome.EARLIEST_LEADER, "lynch", "P01"),
    ("no_lynch_without_majority", ForumDeadlineOutcome.NOBODY, "nobody", None),
])
def test_a_day_reaching_its_deadline_follows_the_files_deadline_rule_M_VOTE_4(rule, outcome, result, eliminated,
                                                                               tmp_path):
    """The deadline passed after post 30: the votes at posts 40 and 41 count nothing. A 2-2 tie: plurality
    eliminates nobody (M-VOTE-4), the earliest leader is P01 (it reached 2 first), no lynch without a majority."""
    assert replay_rules({"deadline_rule": rule}).deadline_outcome is outcome
    game = small_game(TIED, deadline_post=30, deadline_rule=rule,
                      official={"result": result, "eliminated": eliminated})
    day = replay_forum_game(game).days[0]
    assert day.problems == ()
    assert (day.how, day.ended_at, day.result, day.eliminated) == ("deadline", 30, result, eliminated)
    assert day.our_count == {"P01": ("P03", "P04"), "P02": ("P01", "P05")}
    verdict = "nobody eliminated" if result == "nobody" else "lynch P01"
    assert f"D1  MATCH  deadline after post 30: {verdict}  (host: {verdict}; no final count, day closed in post " \
           f"100)" in run_command(game, tmp_path)


def test_plurality_at_the_deadline_eliminates_the_leader_M_VOTE_4():
    """2 votes on P01, 1 on P02, no majority (3 of 5) by the deadline: P01 is eliminated."""
    game = small_game(TIED[:3], deadline_post=30, deadline_rule="plurality",
                      official={"result": "lynch", "eliminated": "P01"})
    day = replay_forum_game(game).days[0]
    assert (day.matches, day.how, day.eliminated, day.our_count) == (
        True, "deadline", "P01", {"P01": ("P03", "P04"), "P02": ("P01",)})


def test_a_hammer_before_the_deadline_keeps_its_post():
    game = small_game([vote(10, "P01", "P05"), vote(11, "P02", "P05"), vote(12, "P03", "P05")], deadline_post=30,
                      deadline_rule="plurality", official={"result": "lynch", "eliminated": "P05"})
    day = replay_forum_game(game).days[0]
    assert (day.matches, day.how, day.ended_at) == (True, "majority", 12)


def test_a_deadline_day_that_differs_from_the_host_is_a_DIFF():
    game = small_game(TIED, deadline_post=30, deadline_rule="plurality",
                      official={"result": "lynch", "eliminated": "P01"})
    assert replay_forum_game(game).days[0].problems == ("ours: nobody, host: lynch P01",)


def test_an_unknown_deadline_rule_is_refused():
    with pytest.raises(ReplayFormatError, match="unknown deadline_rule 'coin'; known: plurality, earliest_leader"):
        replay_rules({"deadline_rule": "coin"})


def test_the_host_mistakes_are_data_not_code():
    """README §6's three mistaken counts of game 2 carry ``host_error`` in the file; without it they are DIFFs."""
    game = load("game_2_11p.json")
    noted = [(count["post"], count["host_error"][:32]) for day in game["days"] for count in day["host_vote_counts"]
             if "host_error" in count]
    assert noted == [(462, "the host still lists P03 on P04 "), (480, "the host still lists P03 on P04 "),
                     (584, "the host lists P02 on P06 (its o")]
    stripped = copy.deepcopy(game)
    for day in stripped["days"]:
        for count in day["host_vote_counts"]:
            count.pop("host_error", None)
    statuses = [check.status for check in replay_forum_game(stripped).days[0].checks]
    assert statuses.count(CountCheckStatus.DIFF) == 3
    assert replay_forum_game(game).days[0].checks[0].status is CountCheckStatus.AGREE
    import voting.forum_replay as module
    assert "game_2_11p" not in Path(module.__file__).read_text(encoding="utf-8")
