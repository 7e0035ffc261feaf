"""The Lepra ruleset's spec (RULES.md L-*): what the shared engine asks ``ruleset_of(game)`` for a Lepra game."""
from __future__ import annotations

from datetime import time
from types import MappingProxyType

from django.utils.translation import gettext_lazy as _

from cities.models import StaffKind
from inboxes.models import InboxKind
from inboxes.services import do_open_game_inboxes
from kernel.rulesets import CONSOLE_TOOLS, PAGE_SECTIONS, PhasePlan, RulesetSpec
from rulesets.lepra import victory
from rulesets.lepra.clock.daily_post import DAILY_POST_SECTIONS
from rulesets.lepra.game_end_services import scoreboard_of
from rulesets.lepra.night.services import do_after_day_death, night_state_of

from .night import FIRST_ACTION_NIGHT, NIGHT_STEPS


class LepraRuleset(RulesetSpec):
    """Lepra: cities with a day vote and a Supreme Court, judges, the draws, the night of kills, touring and
    checks (L-NIGHT), victory per city (L-WIN-1). Russian pages, Moscow time, days from 10:00 (L-DAY-1)."""

    key = "lepra"
    name = _("Lepra")
    language = "ru"
    default_time_zone = "Europe/Moscow"
    phase_plan = PhasePlan(day_start=time(10, 0))
    staff_kinds = (StaffKind.PROCURATOR, StaffKind.TRIBUNE, StaffKind.ARBITER, StaffKind.CONSIGLIERE)
    standing_inbox_kinds = (InboxKind.CITY, InboxKind.PERSONAL, InboxKind.CEMETERY, InboxKind.OFFICE, InboxKind.BAR,
                            InboxKind.POLICE, InboxKind.COURT)
    post_hook_kinds = (InboxKind.VOTING, InboxKind.PRECINCT)
    scheduler_kinds = ("voting_open", "voting_close", "court_deadline", "election_open", "election_close")
    night_steps = NIGHT_STEPS
    first_action_night = FIRST_ACTION_NIGHT
    page_sections = PAGE_SECTIONS
    texts = MappingProxyType({
        "dead_may_not_post": _("The dead have no voice among the living: they post only in the cemetery, their "
                               "personal inbox and on a stage opened for them."),
        "imprisoned_may_not_post": _("An imprisoned player posts only in their personal inbox."),
        "archive_log_in_to_open": _("Log in to open the mafia inboxes, the office and the bar."),
        "procurator_title": _("Procurator"),
    })
    #: L-POST-2, L-DEATH-2: the night's victims, yesterday's results per city, other deaths, judges, the score.
    daily_post_sections = ("night", "results", "other_deaths", "judges", "score", "game_over")
    #: Every ruleset-specific tool of the staff console is Lepra's (L-STAFF, L-DAY, L-COURT, L-JUDGE, L-SANCTION).
    console_tools = CONSOLE_TOOLS

    def create_standing_inboxes(self, game, *, now) -> list:
        """The L-INBOX table's standing inboxes (city, personal, cemetery, office, bar, police, court), skipping
        those that exist; ``WrongState`` when the staff who organize them are missing."""
        return do_open_game_inboxes(game, acting_user=None, now=now)

    def night_state(self, game, night: int):
        """The Lepra night state (residents, city order, touring city, L-NIGHT-4) of ``night``."""
        return night_state_of(game, night)

    def after_day_death(self, game, *, now) -> str | None:
        """L-NIGHT-3, L-WIN-1, L-JUDGE-2: a godfather election where the godfather died, the victory check, then
        judge elections where a judge died."""
        return do_after_day_death(game, acting_user=None, now=now)

    def check_victory(self, game) -> str | None:
        """L-WIN-1 over the living of every city: "honest", "mafia" or None."""
        board = scoreboard_of(game)
        return victory.decide_winner({int(k): victory.CityCount(v["honest"], v["mafia"]) for k, v in board.items()})

    def daily_post_section(self, game, day: int, key: str, context) -> str:
        """One section of the daily post of ``day`` (``rulesets.lepra.clock.daily_post.DAILY_POST_SECTIONS``; ``context`` a
        ``rulesets.lepra.clock.daily_post.DailyPostContext``), in the active language."""
        return DAILY_POST_SECTIONS[key](game, day, context)
