"""Reading ``##`` commands from posts and resolving names (RULES.md M-VOTE-1, M-VOTE-2, M-VOTE-7):
``voting.parsing``. Pure tests: no database.

The real vote lines come from the three games of tests/data/real_games: every ``vote_line`` there, with its
bold keywords turned into ``##`` commands, must parse to the action the file records.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from voting.parsing import (
    ForumCommand,
    ForumCommandKind,
    ForumMatchKind,
    ForumNameResolution,
    clean_forum_argument,
    forum_edit_distance,
    forum_name_key,
    is_forum_no_lynch,
    parse_forum_post,
    resolve_forum_name,
)

REAL_GAMES = Path(__file__).resolve().parent.parent / "data" / "real_games"
VOTE, UNVOTE, END = ForumCommandKind.VOTE, ForumCommandKind.UNVOTE, ForumCommandKind.END


def kinds_and_arguments(text: str) -> list[tuple[str, str]]:
    return [(command.kind.value, command.argument) for command in parse_forum_post(text)]


# ----------------------------------------------------------------------------------------------------------------
# Commands
# ----------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "##VOTE Bob", "##vote Bob", "##Vote Bob", "##VoTe   Bob", "## VOTE Bob", "##  vote:Bob", "##VOTE: Bob",
    "   ##vote Bob   ", "**##VOTE Bob**", "[b]##VOTE Bob[/b]", "##VOTE [b]Bob[/b].", "##VOTE Bob!", "##VOTE\tBob", "  - ##VOTE Bob",
])
def test_vote_commands_are_case_and_spacing_tolerant_M_VOTE_1(text):
    assert kinds_and_arguments(text) == [("vote", "Bob")]


def test_a_command_remembers_how_it_was_written_and_its_line():
    assert parse_forum_post("Hi!\n  ##  vote:  Bob  ") == [
        ForumCommand(kind=VOTE, argument="Bob", written="##  vote:  Bob", line=2)]


def test_the_argument_keeps_inner_spaces_collapsed():
    assert kinds_and_arguments("##VOTE   Mary   Ann  ") == [("vote", "Mary Ann")]


def test_all_four_commands_are_recognised_M_VOTE_1_M_VOTE_2():
    assert kinds_and_arguments("##VOTE Ann\n##UNVOTE\n##END\n##UNEND\n##vote no lynch") == [
        ("vote", "Ann"), ("unvote", ""), ("end", ""), ("unend", ""), ("vote", "no lynch")]


def test_several_commands_in_one_post_come_in_the_order_written_M_VOTE_7():
    text = "I think Ann is scum.\n##VOTE Ann\nbut wait\n##UNVOTE ##VOTE Ben ##END\n"
    commands = parse_forum_post(text)
    assert [(c.kind, c.argument, c.line, c.written) for c in commands] == [
        (VOTE, "Ann", 2, "##VOTE Ann"), (UNVOTE, "", 4, "##UNVOTE"), (VOTE, "Ben", 4, "##VOTE Ben"),
        (END, "", 4, "##END")]


@pytest.mark.parametrize("text", [
    "no commands here", "#VOTE Ann", "VOTE: Ann", "##VOTES are in", "##ending soon", "##unvoted", "## Summary",
    "> ##VOTE Ann", "   >> ##VOTE Ann", "",
])
def test_text_that_is_not_a_command_carries_no_vote(text):
    assert parse_forum_post(text) == []


@pytest.mark.parametrize("text", [
    "```\n##VOTE Ann\n```", "~~~\n##VOTE Ann\n~~~", "```text\nfirst\n##VOTE Ann\n##END\n```",
    "    ##VOTE Ann", "\t##VOTE\tAnn", "Paste:\n\n    ##VOTE Ann\n    ##END",
    "as in `##VOTE Ann`", "``##VOTE Ann ##END``", "> ```\n> ##VOTE Ann\n> ```", "- > ##VOTE Ann",
    "> > ##VOTE Ann", "> quoting:\n>\n> ##VOTE Ann",
])
def test_a_command_in_a_quote_or_a_code_block_is_not_a_command_M_VOTE_1(text):
    assert parse_forum_post(text) == []


def test_the_commands_around_code_and_quotes_still_count_M_VOTE_1():
    text = "> ##VOTE Ann\n\n```\n##VOTE Cal\n```\nI agree with `##VOTE Dee` but: ##VOTE Ben `aside` ##END\n~~~\n##UNEND\n~~~"
    assert [(c.kind.value, c.argument, c.line) for c in parse_forum_post(text)] == [
        ("vote", "Ben", 6), ("end", "", 6)]


@pytest.mark.parametrize(("text", "expected"), [
    ('see [the rules](https://example.org/rules "##VOTE Ann")', []),
    ("[rules](https://example.org/##VOTE-Ann)", []),
    ('![##VOTE Ann](https://example.org/a.png "##END")', []),
    ("[rules](https://example.org/##VOTE) ##VOTE Ben", [("vote", "Ben")]),
    ("[##VOTE Cal](https://example.org/)", [("vote", "Cal")]),
    ('two lines [x](https://e.org "##VOTE Ann")\n##VOTE Dee', [("vote", "Dee")]),
])
def test_a_link_counts_by_its_shown_text_not_its_address_or_title_M_VOTE_1(text, expected):
    assert kinds_and_arguments(text) == expected


def test_quoted_lines_are_skipped_but_the_rest_of_the_post_counts():
    assert kinds_and_arguments("> ##VOTE Ann\nMy own vote:\n##VOTE Ben") == [("vote", "Ben")]


@pytest.mark.parametrize(("raw", "clean"), [
    (" [b]Alice[/b]. ", "Alice"), ("NO LYNCH [\\V]", "NO LYNCH"), ("*Mary  Ann*", "Mary Ann"),
    ("@Bob,", "Bob"), ("[color=red]Eve[/color]", "Eve"), ("", ""),
])
def test_forum_markup_is_cleaned_from_arguments(raw, clean):
    assert clean_forum_argument(raw) == clean


@pytest.mark.parametrize(("text", "expected"), [
    ("No Lynch", True), ("no lynch", True), ("NOLYNCH", True), ("No-Lynch", True), ("no_lynch", True),
    ("No Lynch!", True), ("No", False), ("Lynch", False), ("No Lynch Bob", False), ("Nolan", False),
])
def test_no_lynch_in_any_case_or_spacing_M_VOTE_1(text, expected):
    assert is_forum_no_lynch(text) is expected


# ----------------------------------------------------------------------------------------------------------------
# Name resolution (M-VOTE-1)
# ----------------------------------------------------------------------------------------------------------------

PLAYERS = {"Alice": ["Alice", "alice_w"], "Albert": ["Albert"], "Bartholomew": ["Bartholomew"],
           "Al": ["Al"], "Mary Ann": ["Mary Ann"], "Ёлка": ["Ёлка"]}


@pytest.mark.parametrize(("written", "seat", "how"), [
    ("Alice", "Alice", ForumMatchKind.EXACT),
    ("ALICE", "Alice", ForumMatchKind.EXACT),
    ("alice_w", "Alice", ForumMatchKind.EXACT),          # a former account's name names the seat
    ("Al", "Al", ForumMatchKind.EXACT),                  # exact beats the prefix of Alice and Albert
    ("maryann", "Mary Ann", ForumMatchKind.EXACT),       # white space does not matter
    ("елка", "Ёлка", ForumMatchKind.EXACT),              # ё is read as е
    ("Bart", "Bartholomew", ForumMatchKind.PREFIX),
    ("Alb", "Albert", ForumMatchKind.PREFIX),
    ("Bartholomwe", "Bartholomew", ForumMatchKind.CLOSE),  # one swap
    ("Bartolomeo", "Bartholomew", ForumMatchKind.CLOSE),   # two edits in a long name
    ("Alcie", "Alice", ForumMatchKind.CLOSE),
])
def test_a_name_resolves_by_exact_then_prefix_then_close_match_M_VOTE_1(written, seat, how):
    assert resolve_forum_name(written, PLAYERS) == ForumNameResolution(seat=seat, how=how, candidates=(seat,))


@pytest.mark.parametrize(("written", "candidates"), [
    ("Ali", ("Alice",)),                 # unique prefix: resolved
    ("A", ("Al", "Albert", "Alice")),    # ambiguous prefix
    ("Alie", ("Alice",)),                # prefix of nobody, one edit from Alice
])
def test_ambiguous_names_list_every_candidate_M_VOTE_1(written, candidates):
    resolution = resolve_forum_name(written, PLAYERS)
    assert resolution.candidates == candidates
    assert resolution.resolved is (len(candidates) == 1)
    assert resolution.ambiguous is (len(candidates) > 1)


def test_an_ambiguous_close_match_is_refused_M_VOTE_1():
    resolution = resolve_forum_name("Jonn", {"John": ["John"], "Joan": ["Joan"], "Bob": ["Bob"]})
    assert resolution == ForumNameResolution(seat=None, how=None, candidates=("Joan", "John"))


@pytest.mark.parametrize("written", ["Zed", "", "   ", "Bo", "Alicexyz"])
def test_unknown_names_resolve_to_nobody_M_VOTE_1(written):
    resolution = resolve_forum_name(written, {"Alice": ["Alice"], "Bartholomew": ["Bartholomew"]})
    assert resolution == ForumNameResolution(seat=None, how=None, candidates=())


def test_short_names_are_never_close_to_everything():
    """Two letters allow no edit at all: "Bo" is not a misspelling of "Al" nor of "Ed"."""
    assert resolve_forum_name("Bo", {"Al": ["Al"], "Ed": ["Ed"]}).candidates == ()
    assert resolve_forum_name("Eb", {"Al": ["Al"], "Ed": ["Ed"]}).candidates == ()


@pytest.mark.parametrize(("a", "b", "distance"), [
    ("alice", "alice", 0), ("alcie", "alice", 1), ("alic", "alice", 1), ("alixe", "alice", 1),
    ("bartolomeo", "bartholomew", 2), ("", "abc", 3), ("abc", "", 3), ("ca", "abc", 3),
])
def test_edit_distance_counts_inserts_deletes_substitutions_and_swaps(a, b, distance):
    assert forum_edit_distance(a, b) == distance


def test_name_keys_fold_case_spacing_markup_and_yo():
    assert forum_name_key("  [b]Ёжик  В тумане[/b]. ") == "ежиквтумане"


# ----------------------------------------------------------------------------------------------------------------
# Real vote lines (tests/data/real_games)
# ----------------------------------------------------------------------------------------------------------------

def real_actions() -> list[tuple[str, dict, list[str]]]:
    """(file, action, seats alive that day) for every VOTE, UNVOTE and NO_LYNCH action of the three games."""
    found = []
    for path in sorted(REAL_GAMES.glob("*.json")):
        game = json.loads(path.read_text(encoding="utf-8"))
        for day in game["days"]:
            for action in day["actions"]:
                if action["action"] in ("VOTE", "UNVOTE", "NO_LYNCH"):
                    found.append((path.name, action, day["alive_at_start"]))
    return found


def as_hash_commands(vote_line: str) -> str:
    """A forum vote line in our syntax: each bold keyword becomes a ``##`` command, ``{P05}`` the seat's name."""
    line = re.sub(r"\{(P\d\d)\}", r"\1", vote_line)
    return re.sub(r"(?i)\b(?:un)?vote\b", lambda match: "##" + match[0], line)


def test_every_real_vote_line_parses_to_the_recorded_action_M_VOTE_1_M_VOTE_7():
    """339 lines (68 + 139 + 132, README), in 66 spellings: "Unvote, Vote: X", "unvote. vote: X", "VOTE: UNVOTE:
    VOTE: VOTE: X", "VOTE: NO LYNCH [\\V]", "... VOTE: X". The last command of a line is the one that counts."""
    actions = real_actions()
    assert len(actions) == 339
    assert len({action["vote_line"] for _, action, _ in actions}) == 66
    for name, action, alive in actions:
        commands = parse_forum_post(as_hash_commands(action["vote_line"]))
        context = f"{name} post {action['post']}: {action['vote_line']!r}"
        assert commands, context
        *earlier, last = commands
        assert all(c.kind is UNVOTE or (c.kind is VOTE and not c.argument) for c in earlier), context
        if action["action"] == "UNVOTE":
            assert (last.kind, last.argument) == (UNVOTE, ""), context
        elif action["action"] == "NO_LYNCH":
            assert last.kind is VOTE and last.names_no_lynch, context
        else:
            resolution = resolve_forum_name(last.argument, {seat: [seat] for seat in alive})
            assert (last.kind, resolution.seat, resolution.how) == (VOTE, action["target"], ForumMatchKind.EXACT), \
                context


@pytest.mark.parametrize(("vote_line", "expected"), [
    ("Unvote, Vote: {P12}", [("unvote", ""), ("vote", "P12")]),
    ("unvote. vote: {P02}", [("unvote", ""), ("vote", "P02")]),
    ("Unvote Vote: {P11}", [("unvote", ""), ("vote", "P11")]),
    ("VOTE: UNVOTE: VOTE: VOTE: {P08}", [("vote", ""), ("unvote", ""), ("vote", ""), ("vote", "P08")]),
    ("VOTE: NO LYNCH [\\V]", [("vote", "NO LYNCH")]),
    ("... VOTE: {P02}", [("vote", "P02")]),
    ("vote: {P04}", [("vote", "P04")]),
    ("UNVOTE", [("unvote", "")]),
])
def test_real_vote_line_spellings(vote_line, expected):
    assert kinds_and_arguments(as_hash_commands(vote_line)) == expected
