"""A command inside a quote or a code block is not a command (RULES.md M-VOTE-1): the game thread reads a post as
it is rendered, so a pasted ``##VOTE`` in a fenced or indented block, inline code or a quote neither votes nor
gets a receipt, while the author's own command beside it counts."""
from __future__ import annotations

import pytest

from rulesets.m21.day_services import day_outcome
from tests.rulesets.m21.day_helpers import build_game


@pytest.mark.django_db
@pytest.mark.parametrize("text", [
    "Look what Bob wrote:\n\n```\n##VOTE Grace\n##END\n```",
    "~~~\n##VOTE Grace\n~~~",
    "Quoting: `##VOTE Grace`",
    "> ##VOTE Grace\n> ##END",
    "Pasted:\n\n    ##VOTE Grace\n    ##END",
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
