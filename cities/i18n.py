"""The UI language of game pages (DESIGN.md "Pages": Russian for Lepra, English for M21)."""
from __future__ import annotations

from django.utils import translation


def activate_game_language(request, game) -> None:
    """Render the rest of this request in ``game.language`` (Django resets it when the response is done)."""
    translation.activate(game.language)
    request.LANGUAGE_CODE = game.language
