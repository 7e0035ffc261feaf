"""The M21 ruleset's spec (RULES.md Part 2): what the shared engine asks ``ruleset_of(game)`` for an M21 game."""
from __future__ import annotations

from datetime import time

from cities.models import StaffKind
from inboxes.models import InboxKind
from kernel.rulesets import PhasePlan, RulesetSpec


class M21Ruleset(RulesetSpec):
    """M21: one city, English pages, Europe/London, days of 48 h and nights of 24 h shifting at 22:00
    (M-SETUP-1/2); the host (the Procurator) and co-hosts run every inbox and know every role (M-SETUP-4); the
    game thread's posts are parsed for ``##VOTE`` (M-VOTE)."""

    key = "m21"
    name = "M21"
    language = "en"
    default_time_zone = "Europe/London"
    phase_plan = PhasePlan(day_start=time(22, 0), extra={"day_hours": 48, "night_hours": 24})
    staff_kinds = (StaffKind.PROCURATOR, StaffKind.COHOST)
    standing_inbox_kinds = (InboxKind.GAME_THREAD, InboxKind.MAFIA_THREAD, InboxKind.SPECTATORS, InboxKind.OFFICE,
                            InboxKind.ROLE_PM)
    post_hook_kinds = (InboxKind.GAME_THREAD,)
    scheduler_kinds = ("m21_day_start", "m21_day_deadline", "m21_casting_window_end", "m21_night_start",
                       "m21_night_end")
    policy_grants = {"hosts_know_alignments": True}
    first_action_night = 1

    def check_victory(self, game) -> str | None:
        """M-WIN-1 over the living: "town", "mafia" or None."""
        from .game_end import m21_winner  # it imports the models, which the spec must not need at import

        return m21_winner(game)
