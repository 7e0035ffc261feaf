"""Which shared pages a game has (DESIGN.md "Rulesets and layers"): a page of a section the game's ruleset does not
have (``RulesetSpec.page_sections``: a city's day page of a game of one city, say) is a missing page."""
from __future__ import annotations

from django.http import Http404

from kernel.rulesets import ruleset_of


def check_page_section(game, key: str) -> None:
    """Raise ``Http404`` unless the ruleset of ``game`` has the page section ``key`` (``RulesetSpec.page_sections``)."""
    if not ruleset_of(game).has_page_section(key):
        raise Http404("This game has no such page.")
