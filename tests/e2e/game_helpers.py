"""Helpers of the browser tests: opening a game page in a browser context."""
from __future__ import annotations

from rulesets.lepra.inbox_services import do_open_game_inboxes


def _open_game(lepra) -> None:
    """A game set up through the services, its standing inboxes open (as the clock's start does)."""
    lepra.set_up_with_services()
    do_open_game_inboxes(lepra.game(), acting_user=None, now=lepra.stack.clock.now())
