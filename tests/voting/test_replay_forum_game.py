"""``manage.py replay_forum_game``: the forum day tally reproduces the hosts' official outcomes on every day of
the three real games of tests/data/real_games (README there), and says so; a replay that differs exits 1.

The command touches no database.
"""
from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management import CommandError, call_command

from voting.forum_replay import CountCheckStatus, ReplayFormatError, forum_winner, replay_forum_game, replay_rules
from voting.forum_vote import CLASSIC_FORUM_RULES, ForumDeadlineOutcome, ForumNoLynchThreshold, ForumVoteRules

ROOT = Path(__file__).resolve().parent.parent.parent
REAL_GAMES = ROOT / "tests" / "data" / "real_games"
GAME_FILES = sorted(REAL_GAMES.glob("*.json"))

# (file, days, winner): README's table.
GAMES = [("game_1_9p.json", 5, "town"), ("game_2_11p.json", 5, "mafia"), ("game_3_13p.json", 3, "mafia")]


def replay(path: Path, *args: str) -> str:
    out = StringIO()
    call_command("replay_forum_game", str(path), *args, stdout=out)
    return out.getvalue()


def load(name: str) -> dict:
    return json.loads((REAL_GAMES / name).read_text(encoding="utf-8"))


def test_the_three_real_games_are_in_the_repository():
    assert [path.name for path in GAME_FILES] == [name for name, _, _ in GAMES]
    assert (REAL_GAMES / "README.md").is_file()


@pytest.mark.parametrize(("name", "days", "winner"), GAMES)
def test_every_day_of_every_real_game_matches_the_host(name, days, winner):
    lines = replay(REAL_GAMES / name).splitlines()
    day_lines = [line for line in lines if line[:1] == "D" and line[1:2].isdigit()]
    assert [line.split()[:2] for line in day_lines] == [[f"D{n}", "MATCH"] for n in range(1, days + 1)]
    assert f"Winner: {winner}, decided after D{days} (host: {winner})  MATCH" in lines
    assert lines[-1] == f"Summary: {days} of {days} days MATCH, winner MATCH."


def test_thirteen_days_match_in_all():
    matching = 0
    for path in GAME_FILES:
        matching += sum(line.split()[1:2] == ["MATCH"] for line in replay(path).splitlines() if line[:1] == "D")
    assert matching == 13


@pytest.mark.parametrize(("name", "expected"), [
    # Each day's line: where our count ends it and with what. Game 1 D4 and game 2 D2 end by NO LYNCH reaching
    # majority; game 2 D1 ends on P02's self-vote; on game 3 D1 five later votes must not count.
    ("game_1_9p.json", ["D1  MATCH  ends at post 114: lynch P07", "D2  MATCH  ends at post 271: lynch P03",
                        "D3  MATCH  ends at post 373: lynch P08", "D4  MATCH  ends at post 434: No Lynch",
                        "D5  MATCH  ends at post 517: lynch P04"]),
    ("game_2_11p.json", ["D1  MATCH  ends at post 755: lynch P02", "D2  MATCH  ends at post 1437: No Lynch",
                         "D3  MATCH  ends at post 1595: lynch P07", "D4  MATCH  ends at post 1815: lynch P11",
                         "D5  MATCH  ends at post 1853: lynch P10"]),
    ("game_3_13p.json", ["D1  MATCH  ends at post 507: lynch P13", "D2  MATCH  ends at post 1032: lynch P05",
                         "D3  MATCH  ends at post 1071: lynch P04"]),
])
def test_the_table_says_where_each_day_ends(name, expected):
    day_lines = [line for line in replay(REAL_GAMES / name).splitlines() if line[:1] == "D" and line[1:2].isdigit()]
    assert [line.split("  (host:")[0] for line in day_lines] == expected


def test_the_table_shows_our_count_beside_the_hosts():
    lines = replay(REAL_GAMES / "game_1_9p.json").splitlines()
    start = lines.index("D4  MATCH  ends at post 434: No Lynch  (host: No Lynch; final count in post 435, "
                        "day closed in post 435)")
    assert lines[start + 1:start + 5] == [
        "    target    our count at post 434  host's final count (post 435)",
        "    No Lynch  3  P01 P05 P09         3  P01 P05 P09",
        "    P09       1  P04                 1  P04",
        "    mid-day counts: 3 of 3 agree",
    ]


def test_the_documented_host_errors_are_named_not_counted_as_differences():
    """The host's mistakes are documented in the data file (``host_error`` on the count, README §6), not in code."""
    lines = replay(REAL_GAMES / "game_2_11p.json").splitlines()
    assert "    mid-day counts: 14 of 17 agree, 3 host error(s) (documented)" in lines
    flagged = [line.split(":")[0].strip() for line in lines if "host error (documented): the host " in line]
    assert flagged == ["count at post 462", "count at post 480", "count at post 584"]
    assert ("      count at post 584: host error (documented): the host lists P02 on P06 (its old vote, post 459) "
            "and on P09 (post 580), and misses P09's vote on P10 (post 377)") in lines
    assert not any("DIFF" in line for line in lines)


def test_94_of_the_97_host_counts_agree_and_the_other_3_are_documented():
    """README section 5: the stricter check, at every host count of every day."""
    statuses = [check.status for path in GAME_FILES for day in replay_forum_game(load(path.name)).days
                for check in day.checks]
    assert len(statuses) == 97
    assert statuses.count(CountCheckStatus.AGREE) == 94
    assert statuses.count(CountCheckStatus.HOST_ERROR) == 3


def test_json_output_carries_the_same_verdicts():
    data = json.loads(replay(REAL_GAMES / "game_2_11p.json", "--json"))
    assert data["verdict"] == "MATCH"
    assert (data["winner"], data["host_winner"], data["decided_after"]) == ("mafia", "mafia", "D5")
    assert [(d["day"], d["verdict"], d["ended_at_post"], d["result"], d["eliminated"]) for d in data["days"]] == [
        (1, "MATCH", 755, "lynch", "P02"), (2, "MATCH", 1437, "no_lynch", None), (3, "MATCH", 1595, "lynch", "P07"),
        (4, "MATCH", 1815, "lynch", "P11"), (5, "MATCH", 1853, "lynch", "P10")]
    day1 = data["days"][0]
    assert day1["our_count"] == day1["host_final_count"] == {
        "P02": ["P02", "P03", "P06", "P07", "P09", "P11"], "P09": ["P04", "P08"], "P06": ["P10"]}
    assert data["rules"] == {"majority_ends_day": True, "end_hammer": False, "deadline_outcome": "earliest_leader",
                             "no_lynch_allowed": True, "no_lynch_threshold": "same_as_lynch",
                             "self_votes_allowed": True}


def test_ignoring_an_unvote_changes_who_is_eliminated_and_the_command_exits_1(tmp_path):
    """README: on game 3 D2 an UNVOTE decides who is eliminated. Without the unvotes our count reaches a majority
    on P04 earlier, and the replay must say DIFF and fail."""
    game = load("game_3_13p.json")
    for day in game["days"]:
        day["actions"] = [action for action in day["actions"] if action["action"] != "UNVOTE"]
    path = tmp_path / "no_unvotes.json"
    path.write_text(json.dumps(game), encoding="utf-8")
    out = StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("replay_forum_game", str(path), stdout=out)
    assert raised.value.returncode == 1
    lines = out.getvalue().splitlines()
    assert [line.split("  (host:")[0] for line in lines if line.startswith("D2 ")] == [
        "D2  DIFF  ends at post 979: lynch P04"]
    assert "    - ours: lynch P04, host: lynch P05" in lines


def test_the_exit_status_is_0_when_every_day_matches_and_1_otherwise(tmp_path):
    game = load("game_1_9p.json")
    game["winner"] = "mafia"
    wrong = tmp_path / "wrong_winner.json"
    wrong.write_text(json.dumps(game), encoding="utf-8")

    def run(path: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "manage.py", "replay_forum_game", str(path)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)

    assert run(REAL_GAMES / "game_1_9p.json").returncode == 0
    failed = run(wrong)
    assert failed.returncode == 1
    assert "Winner: town, decided after D5 (host: mafia)  DIFF" in failed.stdout
    assert "game_1_9p: 0 of 5 days and the winner: DIFF; see above" in failed.stderr


def test_a_file_of_another_format_is_refused(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"schema": "something-else"}', encoding="utf-8")
    with pytest.raises(CommandError, match="not a real-game-replay/v1 file"):
        call_command("replay_forum_game", str(path), stdout=StringIO())
    with pytest.raises(ReplayFormatError, match="malformed replay file"):
        replay_forum_game({"schema": "real-game-replay/v1"})


@pytest.mark.parametrize(("alive", "winner"), [
    (["town", "town", "mafia"], None), (["town", "mafia"], "mafia"), (["town", "town"], "town"),
    (["mafia", "mafia", "town", "town"], "mafia"), ([], "town"),
])
def test_the_winner_check_M_WIN_1(alive, winner):
    assert forum_winner(alive) == winner


def test_the_real_games_are_never_served():
    """The files are read by tests and the command only: no static directory holds them, the image leaves tests/
    out, and the static finders cannot find them."""
    for directory in [*settings.STATICFILES_DIRS, settings.STATIC_ROOT]:
        assert not REAL_GAMES.is_relative_to(Path(directory))
    assert "tests" in (ROOT / ".dockerignore").read_text().splitlines()
    for path in REAL_GAMES.iterdir():
        assert finders.find(path.name) is None
        assert finders.find(f"real_games/{path.name}") is None


def test_a_one_less_no_lynch_threshold_in_the_file_is_honoured():
    assert replay_rules({"no_lynch_threshold": "same as a lynch (majority)"}) == CLASSIC_FORUM_RULES
    assert replay_rules({"no_lynch_threshold": "one less than a lynch"}) == ForumVoteRules(
        majority_ends_day=True, end_hammer=False, deadline_outcome=ForumDeadlineOutcome.EARLIEST_LEADER,
        no_lynch_threshold=ForumNoLynchThreshold.ONE_FEWER)
