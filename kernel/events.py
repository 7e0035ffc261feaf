"""Typed kinds (the kernel layer): every ``GameEvent`` kind the site records and every ``ScheduledEvent`` kind the
clock runs, as enums that carry their metadata, instead of free strings keyed by separate string tables.

- ``EventKind``: the audit-log kinds. Each member carries its ``audience`` (who among the game's staff browses it
  while the game runs, ``Audience``, decided in ``inboxes.policies`` which derives
  ``AUDIT_LOG_AUDIENCE`` from here) and its ``timeline`` line (how the archive's timeline shows it, or
  "" when it is not on the timeline).
- ``EVENT_FAMILIES``: audiences of kind families by prefix (``night.*``: the Consigliere's), for kinds recorded
  without listing each one; a ruleset declares its own families (``RulesetSpec.event_families``), and
  ``event_families()`` joins both.
- ``ScheduledKind``: the clock's event kinds, each with the audience of the ``scheduler.<kind>`` audit row the
  scheduler writes when it runs, and whether it belongs to the day/night plan (``clock``) or is a deadline of the
  day that holds the night back (``day_deadline``).

Enum members are ``str`` (``StrEnum``): ``record_event(game, EventKind.VOTING_OPENED, ...)`` and the literal
``"voting.opened"`` are the same kind, and the database stores the string. A kind missing here is shown to no staff
member (fail closed); ``tests/kernel/test_events.py`` checks that every kind the code records is here.
"""
from __future__ import annotations

from enum import StrEnum

from django.utils.translation import gettext_lazy as _

from .rulesets import ruleset_event_families


class Audience(StrEnum):
    """Who among a running game's staff sees an audit-log kind (the table in ``inboxes.policies``)."""

    STAFF = "staff"
    INBOX = "inbox"
    PROCURATOR = "procurator"
    PROCURATOR_ARBITER = "procurator+arbiter"
    CITY_HOSTS = "city hosts"
    CITY_TRIBUNE = "city tribune"
    CITY_TRIBUNE_PROCURATOR = "city tribune+procurator"
    APPOINTMENT = "appointment"
    CONSIGLIERE = "consigliere"
    NOBODY = "nobody"


class EventKind(StrEnum):
    """A ``GameEvent`` kind with its ``audience`` (``Audience``) and ``timeline`` line ("" = not on it)."""

    audience: Audience
    timeline: str

    def __new__(cls, value: str, audience: Audience, timeline: str = ""):
        member = str.__new__(cls, value)
        member._value_ = value
        member.audience = audience
        member.timeline = timeline
        return member

    # Setup and recruitment
    GAME_CREATED = "game.created", Audience.STAFF
    GAME_STATUS = "game.status", Audience.STAFF, "status"
    GAME_FINISHED = "game.finished", Audience.STAFF
    CITY_ADDED = "city.added", Audience.STAFF
    CITIES_FORMED = "cities.formed", Audience.STAFF
    CITIES_LISTS_PUBLISHED = "cities.lists_published", Audience.STAFF
    SIGNUP_CREATED = "signup.created", Audience.STAFF
    SIGNUP_NOT_SEATED = "signup.not_seated", Audience.STAFF
    SIGNUP_WITHDRAWN = "signup.withdrawn", Audience.STAFF
    SIGNUPS_CLOSED = "signups.closed", Audience.STAFF
    RESIDENT_SEATED = "resident.seated", Audience.STAFF
    RESIDENT_MOVED = "resident.moved", Audience.STAFF
    STAFF_APPOINTED = "staff.appointed", Audience.APPOINTMENT
    DEMO_LOADED = "demo.loaded", Audience.STAFF
    # Public posts
    POST_CREATED = "post.created", Audience.STAFF
    POST_SCHEDULED = "post.scheduled", Audience.STAFF
    POST_PUBLISHED = "post.published", Audience.STAFF
    POST_APPENDED = "post.appended", Audience.STAFF
    SCHEDULER_POST_PUBLISHED = "scheduler.post_published", Audience.STAFF
    DAILY_POST_DRAFTED = "daily_post.drafted", Audience.PROCURATOR  # the Procurator's until published
    DAILY_POST_EDITED = "daily_post.edited", Audience.PROCURATOR
    DAILY_POST_TEXT_SET = "daily_post.text_set", Audience.PROCURATOR
    DAILY_POST_APPENDED = "daily_post.appended", Audience.STAFF
    DAILY_POST_HELD = "daily_post.held", Audience.PROCURATOR  # the post is the Procurator's until published
    DAILY_POST_EDIT_WINDOW_SET = "daily_post.edit_window_set", Audience.STAFF
    # The draws and the commissar
    DRAW_COMMITTED = "draw.committed", Audience.STAFF
    DRAW_NUMBERS = "draw.numbers", Audience.STAFF
    RESIDENT_FLAGS = "resident.flags", Audience.NOBODY  # commissar and godfather flags
    COMMISSAR_OFFERED = "commissar.offered", Audience.PROCURATOR
    COMMISSAR_ANSWERED = "commissar.answered", Audience.PROCURATOR
    COMMISSAR_TRIBUNE_TOLD = "commissar.tribune_told", Audience.CITY_TRIBUNE_PROCURATOR
    COMMISSAR_CHECKED = "commissar.checked", Audience.NOBODY  # not even the Consigliere learns the asker
    # Inboxes, memberships, messages
    INBOXES_OPENED = "inboxes.opened", Audience.STAFF
    INBOX_CREATED = "inbox.created", Audience.INBOX
    INBOX_KILLED = "inbox.killed", Audience.INBOX
    INBOX_ROLLED_OVER = "inbox.rolled_over", Audience.INBOX
    MESSAGE_POSTED = "message.posted", Audience.INBOX
    MESSAGE_SITE_POSTED = "message.site_posted", Audience.INBOX
    MESSAGE_EDITED = "message.edited", Audience.INBOX
    MESSAGE_HIDDEN = "message.hidden", Audience.INBOX
    MEMBERSHIP_ADDED = "membership.added", Audience.INBOX
    MEMBERSHIP_BANNED = "membership.banned", Audience.INBOX
    MEMBERSHIP_UNBANNED = "membership.unbanned", Audience.INBOX
    MEMBERSHIP_REMOVED = "membership.removed", Audience.INBOX
    MEMBERSHIP_LEFT = "membership.left", Audience.INBOX
    MEMBERSHIP_PENALTY_BANNED = "membership.penalty_banned", Audience.PROCURATOR_ARBITER
    # Deaths and seats
    RESIDENT_DIED = "resident.died", Audience.STAFF, "death"
    RESIDENT_LAID_TO_REST = "resident.laid_to_rest", Audience.STAFF
    RESIDENT_REPLACED = "resident.replaced", Audience.STAFF
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
    VOTING_PROXY_REQUESTED = "voting.proxy_requested", Audience.CITY_TRIBUNE
    VOTING_PROXY_ACCEPTED = "voting.proxy_accepted", Audience.CITY_TRIBUNE
    VOTING_SUICIDE_DECLARED = "voting.suicide_declared", Audience.CITY_TRIBUNE
    VOTING_SUICIDE_CONFIRMED = "voting.suicide_confirmed", Audience.CITY_TRIBUNE
    VOTING_SUICIDE_REFUSED = "voting.suicide_refused", Audience.CITY_TRIBUNE
    VOTING_SPEECH_REQUESTED = "voting.speech_requested", Audience.CITY_TRIBUNE_PROCURATOR
    # The Supreme Court
    COURT_RENEWED = "court.renewed", Audience.STAFF
    COURT_CASE_OPENED = "court.case_opened", Audience.STAFF, "court"
    COURT_SENTENCED = "court.sentenced", Audience.STAFF, "court"
    COURT_VOTED = "court.voted", Audience.PROCURATOR_ARBITER
    COURT_PROCEDURE_SET = "court.procedure_set", Audience.STAFF
    # Judges
    ELECTION_SCHEDULED = "election.scheduled", Audience.STAFF
    ELECTION_OPENED = "election.opened", Audience.STAFF
    ELECTION_CLOSED = "election.closed", Audience.STAFF, "election"
    ELECTION_CANDIDATES_PASSED = "election.candidates_passed", Audience.STAFF
    ELECTION_PROPOSED = "election.proposed", Audience.CITY_HOSTS
    ELECTION_PROXY_RECORDED = "election.proxy_recorded", Audience.PROCURATOR_ARBITER
    JUDGE_RECUSED = "judge.recused", Audience.STAFF
    REMOVAL_OPENED = "removal.opened", Audience.CITY_TRIBUNE_PROCURATOR
    REMOVAL_CONFIRMED = "removal.confirmed", Audience.CITY_TRIBUNE_PROCURATOR
    REMOVAL_VALID = "removal.valid", Audience.STAFF
    REMOVAL_APPLIED = "removal.applied", Audience.STAFF
    # The night: the mafia's side is the Consigliere's
    NIGHT_DECISION = "night.decision", Audience.CONSIGLIERE
    NIGHT_GIFT = "night.gift", Audience.CONSIGLIERE
    NIGHT_RESOLVED = "night.resolved", Audience.CONSIGLIERE, "night"
    GODFATHER_APPOINTED = "godfather.appointed", Audience.CONSIGLIERE
    GODFATHER_ELECTION_OPENED = "godfather.election_opened", Audience.CONSIGLIERE
    GODFATHER_ELECTION_CLOSED = "godfather.election_closed", Audience.CONSIGLIERE
    GODFATHER_VOTED = "godfather.voted", Audience.CONSIGLIERE
    # Staff matters
    STAFF_STAND_IN_GRANTED = "staff.stand_in_granted", Audience.STAFF
    STAFF_STAND_IN_ENDED = "staff.stand_in_ended", Audience.STAFF
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
    # Play bans are public; the Consigliere's confirmation names nobody
    PLAY_BAN_RECORDED = "play_ban.recorded", Audience.STAFF
    PLAY_BAN_ENDED = "play_ban.ended", Audience.STAFF
    PLAY_BAN_LIFTED = "play_ban.lifted", Audience.STAFF
    ASSIGN_CONFIRMED = "assign.confirmed", Audience.STAFF
    # The clock and the scheduler's own rows
    CLOCK_STARTED = "clock.started", Audience.STAFF
    CLOCK_DAY_STARTED = "clock.day_started", Audience.STAFF
    CLOCK_NIGHT_STARTED = "clock.night_started", Audience.STAFF
    CLOCK_PAUSED = "clock.paused", Audience.STAFF  # the operator's pause, audited in every running game
    CLOCK_RESUMED = "clock.resumed", Audience.STAFF
    CLOCK_REPLANNED = "clock.replanned", Audience.STAFF  # the plan's times moved
    SCHEDULER_EVENT_FAILED = "scheduler.event_failed", Audience.PROCURATOR
    SCHEDULER_EVENT_CRASHED = "scheduler.event_crashed", Audience.PROCURATOR
    SCHEDULER_RETRY_REQUESTED = "scheduler.retry_requested", Audience.PROCURATOR
    SCHEDULER_EVENT_WAITS = "scheduler.event_waits", Audience.PROCURATOR  # like a failed event, the Procurator's
    # The archive's per-person records: nobody among the staff
    ARCHIVE_CONSENT_GIVEN = "archive.consent_given", Audience.NOBODY
    ARCHIVE_CONSENT_REVOKED = "archive.consent_revoked", Audience.NOBODY
    ARCHIVE_OPEN_REQUEST = "archive.open_request", Audience.NOBODY
    ARCHIVE_REMINDER = "archive.reminder", Audience.NOBODY


#: The engine's audiences of kind families by prefix, for kinds not listed in ``EventKind`` (checked after it); a
#: ruleset declares those of the families it records itself (``RulesetSpec.event_families``, ``event_families()``).
EVENT_FAMILIES: tuple[tuple[str, Audience], ...] = (
    ("night.", Audience.CONSIGLIERE), ("mafia.", Audience.CONSIGLIERE), ("godfather.", Audience.CONSIGLIERE),
    ("touring.", Audience.CONSIGLIERE), ("gift.", Audience.CONSIGLIERE), ("check.", Audience.NOBODY),
)


def event_families() -> tuple[tuple[str, Audience], ...]:
    """Every family of kinds by prefix, as (prefix, ``Audience``) pairs: the engine's (``EVENT_FAMILIES``), then
    those every registered ruleset declares (``RulesetSpec.event_families``), in registration order."""
    return EVENT_FAMILIES + tuple((prefix, Audience(audience)) for prefix, audience in ruleset_event_families())


class ScheduledKind(StrEnum):
    """A ``ScheduledEvent`` kind with the ``audience`` of the ``scheduler.<kind>`` row written when it runs,
    ``clock`` (part of the day/night plan the clock keeps in step) and ``day_deadline`` (a deadline of the day:
    the night waits for it)."""

    audience: Audience
    clock: bool
    day_deadline: bool

    def __new__(cls, value: str, audience: Audience, clock: bool = False, day_deadline: bool = False):
        member = str.__new__(cls, value)
        member._value_ = value
        member.audience = audience
        member.clock = clock
        member.day_deadline = day_deadline
        return member

    PUBLISH_POST = "publish_post", Audience.NOBODY  # the post's own row, scheduler.post_published, is the staff's
    DAY_START = "day_start", Audience.STAFF, True
    NIGHT_START = "night_start", Audience.STAFF, True
    NIGHT_END = "night_end", Audience.PROCURATOR, True  # its summary counts the checks
    DAILY_POST_DRAFT = "daily_post_draft", Audience.STAFF, True
    VOTING_OPEN = "voting_open", Audience.STAFF, False, True
    VOTING_CLOSE = "voting_close", Audience.STAFF, False, True
    COURT_DEADLINE = "court_deadline", Audience.STAFF, False, True
    ELECTION_OPEN = "election_open", Audience.STAFF, False, True
    ELECTION_CLOSE = "election_close", Audience.STAFF, False, True
    PLAY_BAN_END = "play_ban_end", Audience.STAFF  # the end of a play ban recorded

    @property
    def audit_kind(self) -> str:
        """The kind of the audit row the scheduler writes when an event of this kind runs."""
        return f"scheduler.{self.value}"


def event_audience(kind: str) -> Audience:
    """The audience of the audit-log ``kind``: its ``EventKind``'s, a scheduled event's ``scheduler.<kind>`` row's,
    its family's (``event_families()``: the engine's, then the rulesets'), else ``Audience.NOBODY`` (fail closed)."""
    if kind in EventKind._value2member_map_:
        return EventKind(kind).audience
    if kind.startswith("scheduler.") and kind[len("scheduler."):] in ScheduledKind._value2member_map_:
        return ScheduledKind(kind[len("scheduler."):]).audience
    for prefix, audience in event_families():
        if kind.startswith(prefix):
            return audience
    return Audience.NOBODY


#: What each scheduled kind is, in words, for the clock's pages and the ``scheduler.<kind>`` audit rows.
SCHEDULED_LABELS = {
    ScheduledKind.PUBLISH_POST: _("publishing a scheduled post"),
    ScheduledKind.DAY_START: _("the start of the day"),
    ScheduledKind.NIGHT_START: _("the start of the night"),
    ScheduledKind.NIGHT_END: _("the end of the night"),
    ScheduledKind.DAILY_POST_DRAFT: _("the draft of the daily post"),
    ScheduledKind.VOTING_OPEN: _("the opening of the voting"),
    ScheduledKind.VOTING_CLOSE: _("the close of the voting"),
    ScheduledKind.COURT_DEADLINE: _("the court's deadline"),
    ScheduledKind.ELECTION_OPEN: _("the opening of a judge election"),
    ScheduledKind.ELECTION_CLOSE: _("the close of a judge election"),
    ScheduledKind.PLAY_BAN_END: _("the end of a play ban"),
}


def scheduled_label(kind: str) -> str:
    """The words for a ScheduledEvent ``kind`` in the active language (its name, spaced, when it has none)."""
    label = SCHEDULED_LABELS.get(kind) if kind in ScheduledKind._value2member_map_ else None
    return str(label) if label is not None else kind.replace("_", " ")
