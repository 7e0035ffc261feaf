"""Lepra's typed kinds (``kernel.events``), declared on its spec: the ``GameEvent`` kinds only Lepra's services record
(``LepraRuleset.event_kinds``, with the families of ``EVENT_FAMILIES``) and the ``ScheduledEvent`` kinds only they
plan (``LepraRuleset.scheduled_event_kinds``), each with its audience in the audit log (L-STAFF-6)."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from kernel.events import Audience, DeclaredEventKind, DeclaredScheduledKind


class LepraEventKind(DeclaredEventKind):
    """The ``GameEvent`` kinds Lepra's services record, with their ``audience`` and ``timeline`` line (L-ARCH-3)."""

    # The game, the demo and the draw
    GAME_FINISHED = "game.finished", Audience.STAFF
    DEMO_LOADED = "demo.loaded", Audience.STAFF
    INBOXES_OPENED = "inboxes.opened", Audience.STAFF
    ASSIGN_CONFIRMED = "assign.confirmed", Audience.STAFF
    # The clock (L-DAY-1..3)
    CLOCK_STARTED = "clock.started", Audience.STAFF
    CLOCK_DAY_STARTED = "clock.day_started", Audience.STAFF
    CLOCK_NIGHT_STARTED = "clock.night_started", Audience.STAFF
    CLOCK_REPLANNED = "clock.replanned", Audience.STAFF  # the plan's times moved
    # The Procurator's changes of the plan are public (L-DAY-1, L-DAY-2)
    CLOCK_DAY_START_SET = "clock.day_start_set", Audience.STAFF
    CLOCK_LONG_DAY = "clock.long_day", Audience.STAFF
    CLOCK_DAY_SHORTENED = "clock.day_shortened", Audience.STAFF
    # The daily post (L-POST-2): the Procurator's until published
    DAILY_POST_DRAFTED = "daily_post.drafted", Audience.PROCURATOR
    DAILY_POST_EDITED = "daily_post.edited", Audience.PROCURATOR
    DAILY_POST_TEXT_SET = "daily_post.text_set", Audience.PROCURATOR
    DAILY_POST_APPENDED = "daily_post.appended", Audience.STAFF
    DAILY_POST_HELD = "daily_post.held", Audience.PROCURATOR
    DAILY_POST_EDIT_WINDOW_SET = "daily_post.edit_window_set", Audience.STAFF
    # The draws and the commissar
    DRAW_COMMITTED = "draw.committed", Audience.STAFF
    DRAW_NUMBERS = "draw.numbers", Audience.STAFF
    COMMISSAR_OFFERED = "commissar.offered", Audience.PROCURATOR
    COMMISSAR_ANSWERED = "commissar.answered", Audience.PROCURATOR
    COMMISSAR_TRIBUNE_TOLD = "commissar.tribune_told", Audience.CITY_STAFF_HOST
    COMMISSAR_CHECKED = "commissar.checked", Audience.NOBODY  # L-NIGHT-5: not even the Consigliere learns the asker
    # The dead
    RESIDENT_LAID_TO_REST = "resident.laid_to_rest", Audience.STAFF
    # The day: voting, proxies, suicides, speeches
    VOTING_SCHEDULED = "voting.scheduled", Audience.STAFF
    VOTING_EXTENDED = "voting.extended", Audience.STAFF
    VOTING_RESCHEDULED = "voting.rescheduled", Audience.STAFF
    VOTING_WINDOW_MISSED = "voting.window_missed", Audience.STAFF  # reported in the office to all the hosts
    VOTING_OPENED = "voting.opened", Audience.STAFF, "vote"
    VOTING_CLOSED = "voting.closed", Audience.STAFF, "vote"
    VOTING_EXECUTION_DECIDED = "voting.execution_decided", Audience.STAFF, "court"
    VOTING_SPIRITS = "voting.spirits", Audience.STAFF
    VOTING_NOMINATED = "voting.nominated", Audience.CITY_HOSTS
    VOTING_PROXY_REQUESTED = "voting.proxy_requested", Audience.CITY_STAFF
    VOTING_PROXY_ACCEPTED = "voting.proxy_accepted", Audience.CITY_STAFF
    VOTING_SUICIDE_DECLARED = "voting.suicide_declared", Audience.CITY_STAFF
    VOTING_SUICIDE_CONFIRMED = "voting.suicide_confirmed", Audience.CITY_STAFF
    VOTING_SUICIDE_REFUSED = "voting.suicide_refused", Audience.CITY_STAFF
    VOTING_SPEECH_REQUESTED = "voting.speech_requested", Audience.CITY_STAFF_HOST
    # The Supreme Court
    COURT_RENEWED = "court.renewed", Audience.STAFF
    COURT_CASE_OPENED = "court.case_opened", Audience.STAFF, "court"
    COURT_SENTENCED = "court.sentenced", Audience.STAFF, "court"
    COURT_VOTED = "court.voted", Audience.HOST_COURT
    COURT_PROCEDURE_SET = "court.procedure_set", Audience.STAFF
    # Judges
    ELECTION_SCHEDULED = "election.scheduled", Audience.STAFF
    ELECTION_OPENED = "election.opened", Audience.STAFF
    ELECTION_CLOSED = "election.closed", Audience.STAFF, "election"
    ELECTION_CANDIDATES_PASSED = "election.candidates_passed", Audience.STAFF
    ELECTION_PROPOSED = "election.proposed", Audience.CITY_HOSTS
    ELECTION_PROXY_RECORDED = "election.proxy_recorded", Audience.HOST_COURT
    JUDGE_RECUSED = "judge.recused", Audience.STAFF
    REMOVAL_OPENED = "removal.opened", Audience.CITY_STAFF_HOST
    REMOVAL_CONFIRMED = "removal.confirmed", Audience.CITY_STAFF_HOST
    REMOVAL_VALID = "removal.valid", Audience.STAFF
    REMOVAL_APPLIED = "removal.applied", Audience.STAFF
    # The night: the mafia's side is the Consigliere's
    NIGHT_DECISION = "night.decision", Audience.NIGHT_STAFF
    NIGHT_GIFT = "night.gift", Audience.NIGHT_STAFF
    NIGHT_RESOLVED = "night.resolved", Audience.NIGHT_STAFF, "night"
    GODFATHER_APPOINTED = "godfather.appointed", Audience.NIGHT_STAFF
    GODFATHER_ELECTION_OPENED = "godfather.election_opened", Audience.NIGHT_STAFF
    GODFATHER_ELECTION_CLOSED = "godfather.election_closed", Audience.NIGHT_STAFF
    GODFATHER_VOTED = "godfather.voted", Audience.NIGHT_STAFF
    # Staff matters: the Tribune replaced, impeachments (L-IMPEACH)
    STAFF_TRIBUNE_REPLACED = "staff.tribune_replaced", Audience.STAFF
    IMPEACHMENT_DEMANDED = "impeachment.demanded", Audience.PROCURATOR
    IMPEACHMENT_SIGNED = "impeachment.signed", Audience.PROCURATOR
    IMPEACHMENT_REACHED = "impeachment.reached", Audience.PROCURATOR
    IMPEACHMENT_OPENED = "impeachment.opened", Audience.STAFF
    IMPEACHMENT_RULED = "impeachment.ruled", Audience.STAFF
    # No confidence in the Arbiter or the Consigliere: the Procurator's. A mafia complaint's rows
    # have no actor and name no mafioso; which mafioso wrote is nobody's while the game runs.
    NO_CONFIDENCE_FILED = "no_confidence.filed", Audience.PROCURATOR
    NO_CONFIDENCE_POSTED = "no_confidence.posted", Audience.PROCURATOR
    NO_CONFIDENCE_RULED = "no_confidence.ruled", Audience.PROCURATOR
    NO_CONFIDENCE_MAFIA_AUTHOR = "no_confidence.mafia_author", Audience.NOBODY


#: The families of kinds Lepra records without typing each one: the mafia's night is the Consigliere's (the night
#: staff's, L-STAFF-4); a commissar's check is nobody's while the game runs (L-NIGHT-5).
EVENT_FAMILIES: tuple[tuple[str, Audience], ...] = (
    ("night.", Audience.NIGHT_STAFF), ("mafia.", Audience.NIGHT_STAFF), ("godfather.", Audience.NIGHT_STAFF),
    ("touring.", Audience.NIGHT_STAFF), ("gift.", Audience.NIGHT_STAFF), ("check.", Audience.NOBODY),
)


class LepraScheduledKind(DeclaredScheduledKind):
    """The ``ScheduledEvent`` kinds Lepra's services plan, with the ``audience`` of their ``scheduler.<kind>`` row,
    their ``label``, ``clock`` (part of the day/night plan the clock keeps in step: ``clock.services``) and
    ``day_deadline`` (a deadline of the day: the night waits for it, L-DAY-4)."""

    clock: bool
    day_deadline: bool

    def __new__(cls, value: str, audience: Audience, label: Any, clock: bool = False, day_deadline: bool = False):
        member = str.__new__(cls, value)
        member._value_ = value
        member.audience = audience
        member.label = label
        member.clock = clock
        member.day_deadline = day_deadline
        return member

    DAY_START = "day_start", Audience.STAFF, _("the start of the day"), True
    NIGHT_START = "night_start", Audience.STAFF, _("the start of the night"), True
    NIGHT_END = "night_end", Audience.PROCURATOR, _("the end of the night"), True  # its summary counts the checks
    DAILY_POST_DRAFT = "daily_post_draft", Audience.STAFF, _("the draft of the daily post"), True
    # The day start's publication of a draft held for the Procurator's edit window (L-POST-2): no part of the plan
    DAILY_POST_PUBLISH = "daily_post_publish", Audience.STAFF, _("the publication of the daily post")
    VOTING_OPEN = "voting_open", Audience.STAFF, _("the opening of the voting"), False, True
    VOTING_CLOSE = "voting_close", Audience.STAFF, _("the close of the voting"), False, True
    COURT_DEADLINE = "court_deadline", Audience.STAFF, _("the court's deadline"), False, True
    ELECTION_OPEN = "election_open", Audience.STAFF, _("the opening of a judge election"), False, True
    ELECTION_CLOSE = "election_close", Audience.STAFF, _("the close of a judge election"), False, True
