"""The state changes of an M21 game (RULES.md Part 2) under one name: every public service of the ruleset, kept
here for its callers (views, the clock's handlers, the post hooks, tests); each lives in the module of its subject:

- ``service_common``: the ruleset key and phase limits, ``M21Refusal``, who hosts, the vote rules, phase ends, the
  site's messages and the standing inboxes;
- ``setup_services``: creation, co-hosts, timing, the setup and the provable deal (M-SETUP-1/2/4);
- ``day_services``: the days of the game thread, receipts, the hammer, the deadline, the Judge's powers
  (M-VOTE-1..9, M-SETUP-3);
- ``host_services``: removals, replacements, extensions and the posted vote count (M-SETUP-4, M-VOTE-8/9);
- ``game_end``: victory (M-WIN-1); ``night_frame``: a night's start and end on the clock (its resolution is
  ``night_services``, registered in ``NIGHT_RESOLVERS``);
- ``spectator_services``: joining and leaving a game as a spectator (M-SETUP-3).

Every ``do_<verb>_<noun>(..., *, acting_user, now=None)`` runs in one transaction, checks the rules first, writes a
``GameEvent`` audit row and raises a ``RuleViolation`` subclass with a message a player can read.
"""
from __future__ import annotations

from .day_services import (
    current_day,
    day_outcome,
    do_cast_judge_vote,
    do_close_m21_casting_window,
    do_close_m21_day_at_deadline,
    do_close_proceedings,
    do_start_m21_day,
    open_day,
    record_game_thread_post,
)
from .game_end import m21_winner
from .host_services import do_extend_m21_phase, do_post_vote_count, do_remove_m21_player, do_replace_m21_player
from .night_frame import NIGHT_RESOLVERS, do_end_m21_night, do_start_m21_night
from .service_common import (
    MAX_EXTENSION_HOURS,
    MAX_PHASE_HOURS,
    MIN_PHASE_HOURS,
    RULESET,
    M21Refusal,
    is_host,
    phase_end,
    site_message,
    thread_of,
    vote_rules,
)
from .spectator_services import do_join_as_spectator, do_leave_as_spectator
from .setup_services import (
    do_add_cohost,
    do_choose_m21_setup,
    do_create_m21_game,
    do_deal_m21_roles,
    do_draw_m21_setup,
    do_set_m21_game_thread_public,
    do_set_m21_timing,
)

__all__ = [
    "MAX_EXTENSION_HOURS", "MAX_PHASE_HOURS", "MIN_PHASE_HOURS", "NIGHT_RESOLVERS", "RULESET", "M21Refusal",
    "current_day", "day_outcome", "do_add_cohost", "do_cast_judge_vote", "do_choose_m21_setup",
    "do_close_m21_casting_window", "do_close_m21_day_at_deadline", "do_close_proceedings", "do_create_m21_game",
    "do_deal_m21_roles", "do_draw_m21_setup", "do_end_m21_night", "do_extend_m21_phase", "do_join_as_spectator",
    "do_leave_as_spectator", "do_post_vote_count", "do_remove_m21_player", "do_replace_m21_player",
    "do_set_m21_game_thread_public", "do_set_m21_timing", "do_start_m21_day", "do_start_m21_night", "is_host", "m21_winner", "open_day", "phase_end",
    "record_game_thread_post", "site_message", "thread_of", "vote_rules",
]
