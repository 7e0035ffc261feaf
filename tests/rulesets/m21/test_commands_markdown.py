"""A command inside a quote or a code block is not a command (RULES.md M-VOTE-1): the game thread reads a post as
it is rendered, so a pasted ``##VOTE`` in a fenced or indented block, inline code or a quote neither votes nor
gets a receipt, while the author's own command beside it counts."""
from __future__ import annotations

import pytest

from rulesets.m21.day_services import day_outcome
from rulesets.m21.night_pages import parse_kill_lines
from tests.rulesets.m21.day_helpers import build_game


@pytest.mark.django_db
@pytest.mark.parametrize("text", [
    "Look what Bob wrote:\n\n```\n##VOTE Grace\n##END\n```",
    "~~~\n##VOTE Grace\n~~~",
    "Quoting: `##VOTE Grace`",
    "> ##VOTE Grace\n> ##END",
    "Pasted:\n\n    ##VOTE Grace\n    ##END",
    # Characters that str.splitlines() takes for line ends (markdown-it does not) before the code block: its
    # lines must not be read as prose.
    "p\u2028\u2028\u2028\n\n```\n##VOTE Grace\n```\n\nhello",
    "p\x0c\x0c\n\n```\n##VOTE Grace\n```\n\nhello",
    "p\u2029\x85\x1c\n\n> ##VOTE Grace\n\nhello",
])
def test_a_vote_in_a_quote_or_code_block_of_the_game_thread_counts_nothing_M_VOTE_1(text):
    table = build_game()
    message = table.post("Alice", text)
    assert table.receipt(message) == []
    assert dict(day_outcome(table.day(1), now=table.now).report.count.votes) == {}


@pytest.mark.django_db
def test_the_authors_own_vote_beside_a_code_block_counts_M_VOTE_1():
    table = build_game()
    message = table.post("Alice", "```\n##VOTE Grace\n```\nMine: ##VOTE Bob")
    assert [line["command"] for line in table.receipt(message)] == ["##VOTE Bob"]
    assert dict(day_outcome(table.day(1), now=table.now).report.count.votes) == {"Bob": ("Alice",)}


def test_a_kill_line_in_a_code_block_or_a_quote_of_the_mafia_thread_is_no_kill_vote_M_MAFIA_1():
    assert parse_kill_lines("```\nkill Archibald\n```") == []
    assert parse_kill_lines("    kill Archibald") == []
    assert parse_kill_lines("> kill Archibald") == []
    assert parse_kill_lines("p\u2028\u2028\n\n```\nkill Archibald\n```") == []
    assert parse_kill_lines("**kill Bob**\nthen\nkill Carol") == ["Bob", "Carol"]
