"""Wiring of the M21 night into the shared engine (RULES.md M-NIGHT-1, M-MAFIA-1): the mafia thread's post hook
(``kill name`` lines get a reply with the live tally) and the night's resolution at its planned end
(``rulesets.m21.night_frame.NIGHT_RESOLVERS``). Imported by the app's ``ready``."""
from __future__ import annotations

from inboxes.hooks import PostHook, post_hook
from rulesets.m21.kinds import M21InboxKind

from .night_frame import NIGHT_RESOLVERS
from .night_services import record_mafia_thread_post, resolve_m21_night_of


@post_hook(M21InboxKind.MAFIA_THREAD, ruleset="m21")
class MafiaThreadHook(PostHook):
    """M-MAFIA-1: a post is never refused for its kill lines; the record step answers with what each line did and
    the tally, in the post's transaction."""

    def record(self, inbox, seat, message, accepted, now) -> None:
        record_mafia_thread_post(inbox, seat, message, now)


if resolve_m21_night_of not in NIGHT_RESOLVERS:
    NIGHT_RESOLVERS.append(resolve_m21_night_of)
