"""The M21 game thread's post hook (M-VOTE): every post by a player is parsed for ``##VOTE``, ``##UNVOTE``,
``##END`` and ``##UNEND``; the post keeps its text and gets a receipt, and a hammer ends the day at once."""
from __future__ import annotations

from inboxes.hooks import PostHook, post_hook
from inboxes.models import InboxKind

from .services import record_game_thread_post


@post_hook(InboxKind.GAME_THREAD, ruleset="m21")
class GameThreadHook(PostHook):
    """Posts are never refused for their commands (M-VOTE-1: a refused command is explained in the receipt); the
    record step re-derives the day with the stored post (M-VOTE-8) in the post's transaction, with the open day's
    row locked, so that two hammers posted at once end the day once."""

    def record(self, inbox, seat, message, accepted, now) -> None:
        record_game_thread_post(inbox, seat, message, now)
