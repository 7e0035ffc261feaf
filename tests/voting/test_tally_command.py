"""``manage.py tally forum-day FILE``: a host's forum day export counted (M-VOTE), the exact JSON on the
documented example (voting/examples), the deadline, and malformed exports refused with the line at fault.

The command touches no database.
"""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from voting.forum_export import ForumExportError, forum_day_export

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = ROOT / "voting" / "examples" / "forum_day_example.jsonl"


def tally(path: Path | str) -> dict:
    out = StringIO()
    call_command("tally", "forum-day", str(path), stdout=out)
    return json.loads(out.getvalue())


def export(tmp_path: Path, *lines: dict) -> Path:
    path = tmp_path / "day.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def refused(seq, author, seat, command, reason, message, candidates=(), line=1) -> dict:
    return {"seq": seq, "author": author, "seat": seat, "command": command, "line": line, "reason": reason,
            "message": message, "candidates": list(candidates)}


EXAMPLE_OUTPUT = {
    "rules": {"majority_ends_day": False, "end_hammer": True, "deadline_outcome": "plurality",
              "no_lynch_allowed": True, "no_lynch_threshold": "same_as_lynch", "self_votes_allowed": False},
    "deadline": "2026-03-03T22:00:00+00:00",
    "count": {
        "living": ["Alice", "Albert", "Bob", "Carol", "Dave", "Erin", "Gina"], "majority": 4, "no_lynch_threshold": 4,
        "votes": [{"target": "Bob", "count": 4, "needed": 4, "voters": ["Alice", "Erin", "Carol", "Dave"]},
                  {"target": "Alice", "count": 1, "needed": 4, "voters": ["Bob"]}],
        "not_voting": ["Albert"],
        "voided": ["Gina"],
        "end_marked": ["Alice", "Bob", "Carol", "Dave", "Erin"],
    },
    "ended": {"how": "end_hammer", "result": "lynch", "eliminated": "Bob", "seq": 17, "trigger": "Dave", "tied": [],
              "at": "2026-03-02T16:45:00+00:00"},
    "refused": [
        refused(3, "bob", "Bob", "##END", "end_without_vote", "##END needs a vote in place: vote first.", line=2),
        refused(4, "bob", "Bob", "##vote al", "ambiguous_name", "'al' could be Albert, Alice: write more of the name.",
                candidates=["Albert", "Alice"]),
        refused(9, "frank", "Frank", "##VOTE frank", "self_vote", "Self-votes are not allowed here."),
        refused(12, "erin", "Erin", "##VOTE Bob", "replaced",
                "This account has been replaced: its seat votes through the new account."),
        refused(15, "dave", "Dave", "##vote Zed", "unknown_name", "No living player matches 'Zed'."),
        refused(18, "albert", "Albert", "##VOTE Alice", "day_over", "The day is over: this carries no vote."),
        refused(19, "frank", "Frank", "##VOTE Alice", "not_living", "Dead, imprisoned or removed players cannot vote."),
    ],
    "voided": [{"seq": 10, "voter": "Carol", "target": "Frank", "removed": "Frank", "cause": "killed"},
               {"seq": 10, "voter": "Dave", "target": "Frank", "removed": "Frank", "cause": "killed"},
               {"seq": 10, "voter": "Gina", "target": "Frank", "removed": "Frank", "cause": "killed"}],
    "offenders": [{"seat": "Albert", "offences": ["no_vote_at_end", "never_voted", "fewer_than_two_posts"]},
                  {"seat": "Erin", "offences": ["fewer_than_two_posts"]},
                  {"seat": "Gina", "offences": ["fewer_than_two_posts"]}],
}


def test_the_example_export_gives_exactly_the_documented_result_M_VOTE():
    """voting/examples/README.md walks through this file line by line."""
    assert tally(EXAMPLE) == EXAMPLE_OUTPUT


def test_the_output_is_indented_json_with_unicode_kept(tmp_path):
    path = export(tmp_path, {"seats": ["Ёжик", "Bob"], "deadline": None},
                  {"seq": 1, "at": "2026-03-01T10:00:00+03:00", "author": "Bob", "text": "##VOTE ёжик"})
    out = StringIO()
    call_command("tally", "forum-day", str(path), stdout=out)
    assert '"voters": [\n          "Bob"\n        ]' in out.getvalue()
    assert '"target": "Ёжик"' in out.getvalue()


HEADER = {"rules": {"preset": "classic"}, "seats": ["ann", "ben", "cat", "dan"], "hosts": ["mod"],
          "deadline": "2026-03-03T22:00:00+00:00"}


def post(seq: int, author: str, text: str, at: str = "2026-03-02T12:00:00+00:00") -> dict:
    return {"seq": seq, "at": at, "author": author, "text": text}


def test_a_day_without_a_hammer_closes_at_the_deadline_M_VOTE_4(tmp_path):
    result = tally(export(tmp_path, {**HEADER, "rules": {"preset": "end_hammer"}},
                          post(1, "ann", "##VOTE cat"), post(2, "ben", "##VOTE dan"),
                          post(3, "cat", "##VOTE dan", at="2026-03-03T22:00:00+00:00")))
    assert result["ended"] == {"how": "deadline", "result": "nobody", "eliminated": None, "seq": None,
                               "trigger": None, "tied": ["cat", "dan"], "at": "2026-03-03T22:00:00+00:00"}
    assert result["refused"] == [refused(3, "cat", "cat", "##VOTE dan", "day_over",
                                         "The day is over: this carries no vote.")]


def test_without_a_deadline_an_unfinished_day_stays_open(tmp_path):
    result = tally(export(tmp_path, {**HEADER, "deadline": None}, post(1, "ann", "##VOTE cat")))
    assert result["ended"] is None
    assert result["count"]["votes"] == [{"target": "cat", "count": 1, "needed": 3, "voters": ["ann"]}]
    assert result["count"]["not_voting"] == ["ben", "cat", "dan"]


def test_hosts_posts_are_skipped_and_a_classic_majority_ends_the_day(tmp_path):
    result = tally(export(tmp_path, HEADER, post(1, "mod", "Vote with ##VOTE name. ##END is not used."),
                          post(2, "ann", "##VOTE dan"), post(3, "ben", "##vote DAN"), post(4, "cat", "##VOTE dan"),
                          post(5, "dan", "##VOTE ann"), post(6, "spectator", "##VOTE ann")))
    assert result["ended"] == {"how": "majority", "result": "lynch", "eliminated": "dan", "seq": 4,
                               "trigger": "cat", "tied": [], "at": "2026-03-02T12:00:00+00:00"}
    assert result["refused"] == [
        refused(5, "dan", "dan", "##VOTE ann", "day_over", "The day is over: this carries no vote."),
        refused(6, "spectator", None, "##VOTE ann", "not_a_player", "Only the players of this game vote here."),
    ]


def test_events_remove_and_replace_seats_M_VOTE_9(tmp_path):
    result = tally(export(tmp_path, {**HEADER, "deadline": None},
                          post(1, "ann", "##VOTE dan"),
                          {"seq": 2, "event": "remove", "seat": "dan"},
                          {"seq": 3, "event": "replace", "seat": "ben", "account": "bea", "names": ["Beatrix"]},
                          post(4, "cat", "##VOTE beatrix"), post(5, "bea", "##VOTE cat")))
    assert result["voided"] == [{"seq": 2, "voter": "ann", "target": "dan", "removed": "dan", "cause": "removed"}]
    assert result["count"]["living"] == ["ann", "ben", "cat"]
    assert result["count"]["votes"] == [{"target": "ben", "count": 1, "needed": 2, "voters": ["cat"]},
                                        {"target": "cat", "count": 1, "needed": 2, "voters": ["ben"]}]
    assert result["count"]["voided"] == ["ann"]


@pytest.mark.parametrize(("lines", "message"), [
    ([], "the export is empty"),
    (["not json"], "line 1: not JSON"),
    ([{"seq": 1, "at": "2026-03-01T10:00:00+00:00", "author": "a", "text": ""}], "line 1: the first line must be"),
    ([{**HEADER, "format": "forum-day/v2"}], "line 1: format 'forum-day/v2' is not forum-day/v1"),
    ([{**HEADER, "colour": "red"}], "line 1: unknown header field\\(s\\): colour"),
    ([{**HEADER, "rules": {"preset": "lepra"}}], "line 1: rules: unknown rules preset 'lepra'"),
    ([{**HEADER, "seats": []}], "line 1: seats must be a non-empty list"),
    ([{**HEADER, "seats": ["ann", "ann"]}], "seat ann is listed twice"),
    ([{**HEADER, "deadline": "2026-03-03 22:00"}], "line 1: deadline needs a UTC offset"),
    ([HEADER, post(2, "ann", "hi"), post(2, "ben", "hi")], "line 3: seq 2 does not follow seq 2"),
    ([HEADER, {"seq": 1, "author": "ann", "text": "hi"}], "line 2: a post needs its time, at"),
    ([HEADER, {"seq": "1", "at": "2026-03-01T10:00:00+00:00", "author": "ann", "text": "hi"}],
     "line 2: seq must be an integer"),
    ([HEADER, {"seq": 1, "event": "remove", "seat": "zed"}], "line 2: seat zed is not alive"),
    ([HEADER, {"seq": 1, "event": "remove", "seat": "ann", "cause": "eaten"}], "line 2: cause must be removed or"),
    ([HEADER, {"seq": 1, "event": "replace", "seat": "ann", "account": "ben"}],
     "line 2: account ben already plays seat ben"),
    ([HEADER, {"seq": 1, "event": "resurrect", "seat": "ann"}], "line 2: event must be remove or replace"),
])
def test_malformed_exports_are_refused_with_the_line_at_fault(tmp_path, lines, message):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines),
                    encoding="utf-8")
    with pytest.raises(CommandError, match=message) as raised:
        call_command("tally", "forum-day", str(path), stdout=StringIO())
    assert raised.value.returncode == 1


def test_blank_lines_are_ignored_and_line_numbers_count_them():
    with pytest.raises(ForumExportError, match="line 3: not JSON"):
        forum_day_export([json.dumps(HEADER), "", "oops"])


def test_a_missing_file_is_an_error(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        call_command("tally", "forum-day", str(tmp_path / "missing.jsonl"), stdout=StringIO())


def test_the_tally_kind_is_a_required_subcommand():
    with pytest.raises(CommandError, match="invalid choice: 'lepra-court'"):
        call_command("tally", "lepra-court", str(EXAMPLE), stdout=StringIO())
