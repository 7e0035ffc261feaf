"""Typed kinds (the kernel layer): every ``GameEvent`` kind the site records and every ``ScheduledEvent`` kind the
clock runs, as enums that carry their metadata, instead of free strings keyed by separate string tables.

- ``EventKind``: the audit-log kinds the engine's own services record. Each member carries its ``audience`` (who
  among the game's staff browses it while the game runs, ``Audience``, decided in ``inboxes.audit_policy``) and its
  ``timeline`` line (how the archive's timeline shows it, or "" when it is not on the timeline). A ruleset types
  the kinds its own services record the same way, as a subclass of ``DeclaredEventKind`` in its package declared
  on its spec (``RulesetSpec.event_kinds``), and the audience of the kinds it records without listing each one by
  prefix (``RulesetSpec.event_families``, ``event_families()``).
- ``ScheduledKind``: the scheduled-event kinds the engine's own services plan and handle, each with the audience
  of the ``scheduler.<kind>`` audit row the scheduler writes when it runs and its ``label`` (what it is, in words);
  a ruleset declares its own as a subclass of ``DeclaredScheduledKind`` (``RulesetSpec.scheduled_event_kinds``).

``event_audience``, ``event_timelines``, ``declared_scheduled_kind`` and ``scheduled_label`` read the engine's
tables and every registered ruleset's, joined once per state of the registry (the audit log asks per event).

Enum members are ``str`` (``StrEnum``): ``record_event(game, EventKind.POST_CREATED, ...)`` and the literal
``"post.created"`` are the same kind, and the database stores the string. A kind declared nowhere is shown to no
staff member (fail closed); ``tests/kernel/test_events.py`` checks that every kind the code records is declared.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.utils.translation import gettext_lazy as _

from .rulesets import registered_rulesets, registry_version


def ruleset_event_families() -> tuple[tuple[str, Any], ...]:
    """The (prefix, audience) families of event kinds every registered ruleset declares
    (``RulesetSpec.event_families``), in registration order."""
    return tuple(pair for spec in registered_rulesets().values() for pair in spec.event_families)


def ruleset_event_kinds() -> tuple[Any, ...]:
    """The typed event kinds every registered ruleset declares (``RulesetSpec.event_kinds``), in registration
    order."""
    return tuple(kind for spec in registered_rulesets().values() for kind in spec.event_kinds)


def ruleset_scheduled_kinds() -> tuple[Any, ...]:
    """The typed scheduled-event kinds every registered ruleset declares (``RulesetSpec.scheduled_event_kinds``),
    in registration order."""
    return tuple(kind for spec in registered_rulesets().values() for kind in spec.scheduled_event_kinds)


class Audience(StrEnum):
    """Who among a running game's staff sees an audit-log kind (the table in ``inboxes.audit_policy``). The staff
    kinds behind each audience are the game's ruleset's (``cities.staff_kinds``): its host, its court kinds
    (``court_staff_kinds``), its city kinds (``city_staff_kinds``), its night kinds (``night_staff_kinds``)."""

    STAFF = "staff"
    INBOX = "inbox"
    PROCURATOR = "procurator"
    HOST_COURT = "host+court"
    CITY_HOSTS = "city hosts"
    CITY_STAFF = "city staff"
    CITY_STAFF_HOST = "city staff+host"
    APPOINTMENT = "appointment"
    NIGHT_STAFF = "night staff"
    NOBODY = "nobody"


class DeclaredEventKind(StrEnum):
    """The base of a table of ``GameEvent`` kinds (no members of its own): each member is ``value, audience`` or
    ``value, audience, timeline`` and carries its ``audience`` (``Audience``) and ``timeline`` line ("" = not on
    it). The engine's table is ``EventKind``; a ruleset subclasses it for the kinds its own services record."""

    audience: Audience
    timeline: str

    def __new__(cls, value: str, audience: Audience, timeline: str = ""):
        member = str.__new__(cls, value)
        member._value_ = value
        member.audience = audience
        member.timeline = timeline
        return member


class EventKind(DeclaredEventKind):
    """The ``GameEvent`` kinds the engine's own services record, with their ``audience`` and ``timeline`` line."""

    # Setup and recruitment
    GAME_CREATED = "game.created", Audience.STAFF
    GAME_STATUS = "game.status", Audience.STAFF, "status"
    CITY_ADDED = "city.added", Audience.STAFF
    CITIES_FORMED = "cities.formed", Audience.STAFF
    CITIES_LISTS_PUBLISHED = "cities.lists_published", Audience.STAFF
    SIGNUP_CREATED = "signup.created", Audience.STAFF
    SIGNUP_NOT_SEATED = "signup.not_seated", Audience.STAFF
    SIGNUP_WITHDRAWN = "signup.withdrawn", Audience.STAFF
    SIGNUPS_CLOSED = "signups.closed", Audience.STAFF
    RESIDENT_SEATED = "resident.seated", Audience.STAFF
    RESIDENT_MOVED = "resident.moved", Audience.STAFF
    RESIDENT_FLAGS = "resident.flags", Audience.NOBODY  # a seat's secret flags: the row must not list the mafia
    STAFF_APPOINTED = "staff.appointed", Audience.APPOINTMENT
    # Public posts
    POST_CREATED = "post.created", Audience.STAFF
    POST_SCHEDULED = "post.scheduled", Audience.STAFF
    POST_PUBLISHED = "post.published", Audience.STAFF
    POST_APPENDED = "post.appended", Audience.STAFF
    SCHEDULER_POST_PUBLISHED = "scheduler.post_published", Audience.STAFF
    # Inboxes, memberships, messages
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
    MEMBERSHIP_PENALTY_BANNED = "membership.penalty_banned", Audience.HOST_COURT
    # Deaths and seats
    RESIDENT_DIED = "resident.died", Audience.STAFF, "death"
    RESIDENT_REPLACED = "resident.replaced", Audience.STAFF
    # Staff matters
    STAFF_STAND_IN_GRANTED = "staff.stand_in_granted", Audience.STAFF
    STAFF_STAND_IN_ENDED = "staff.stand_in_ended", Audience.STAFF
    # Play bans are public
    PLAY_BAN_RECORDED = "play_ban.recorded", Audience.STAFF
    PLAY_BAN_ENDED = "play_ban.ended", Audience.STAFF
    PLAY_BAN_LIFTED = "play_ban.lifted", Audience.STAFF
    # The operator's pause of the site's clock, audited in every running game, and the scheduler's own rows
    CLOCK_PAUSED = "clock.paused", Audience.STAFF
    CLOCK_RESUMED = "clock.resumed", Audience.STAFF
    SCHEDULER_EVENT_FAILED = "scheduler.event_failed", Audience.PROCURATOR
    SCHEDULER_EVENT_CRASHED = "scheduler.event_crashed", Audience.PROCURATOR
    SCHEDULER_RETRY_REQUESTED = "scheduler.retry_requested", Audience.PROCURATOR
    SCHEDULER_EVENT_WAITS = "scheduler.event_waits", Audience.PROCURATOR  # like a failed event, the host's
    # The archive's per-person records: nobody among the staff. Deadline reminders are notifications
    # (``archive.notifications``): no code records archive.reminder, kept for the rows already stored.
    ARCHIVE_CONSENT_GIVEN = "archive.consent_given", Audience.NOBODY
    ARCHIVE_CONSENT_REVOKED = "archive.consent_revoked", Audience.NOBODY
    ARCHIVE_OPEN_REQUEST = "archive.open_request", Audience.NOBODY
    ARCHIVE_REMINDER = "archive.reminder", Audience.NOBODY


#: Engine kinds no code records any more, kept for the rows already stored (their audience and sentence stay).
STORED_ONLY_EVENT_KINDS = frozenset({EventKind.ARCHIVE_REMINDER})


def event_families() -> tuple[tuple[str, Audience], ...]:
    """Every family of kinds by prefix, as (prefix, ``Audience``) pairs: those every registered ruleset declares
    (``RulesetSpec.event_families``), in registration order. The engine records no family of kinds."""
    return _tables().families


class DeclaredScheduledKind(StrEnum):
    """The base of a table of ``ScheduledEvent`` kinds (no members of its own): each member is ``value, audience,
    label`` and carries the ``audience`` of the ``scheduler.<kind>`` row written when it runs and its ``label``
    (lazily translated: what it is, for the clock's pages and those rows). The engine's table is ``ScheduledKind``;
    a ruleset subclasses it for the kinds its own services plan (its own ``__new__`` may take more: what its clock
    reads of each kind)."""

    audience: Audience
    label: Any

    def __new__(cls, value: str, audience: Audience, label: Any):
        member = str.__new__(cls, value)
        member._value_ = value
        member.audience = audience
        member.label = label
        return member

    @property
    def audit_kind(self) -> str:
        """The kind of the audit row the scheduler writes when an event of this kind runs."""
        return f"scheduler.{self.value}"


class ScheduledKind(DeclaredScheduledKind):
    """The ``ScheduledEvent`` kinds the engine's own services plan and handle."""

    # The post's own row, scheduler.post_published, is the staff's
    PUBLISH_POST = "publish_post", Audience.NOBODY, _("publishing a scheduled post")
    PLAY_BAN_END = "play_ban_end", Audience.STAFF, _("the end of a play ban")


@dataclass(frozen=True)
class _Tables:
    """The engine's declarations joined with the registered rulesets' (``_tables``)."""

    kinds: dict[str, DeclaredEventKind]
    scheduled: dict[str, DeclaredScheduledKind]
    families: tuple[tuple[str, Audience], ...]
    audiences: dict[str, Audience]
    timelines: dict[str, str]


_JOINED: list = [None, None]  # [the registry's version, its _Tables]


def _tables() -> _Tables:
    """The joined tables, built once per state of the registry (``kernel.rulesets.registry_version``): the engine's
    kinds first, then each registered ruleset's in registration order (a value declared twice keeps the first
    declaration; ``event_kind_problems`` reports it)."""
    version = registry_version()
    if _JOINED[0] != version:
        kinds: dict[str, DeclaredEventKind] = {}
        for kind in (*EventKind, *ruleset_event_kinds()):
            kinds.setdefault(kind.value, kind)
        scheduled: dict[str, DeclaredScheduledKind] = {}
        for kind in (*ScheduledKind, *ruleset_scheduled_kinds()):
            scheduled.setdefault(kind.value, kind)
        audiences = {kind.audit_kind: kind.audience for kind in scheduled.values() if kind.audience != Audience.NOBODY}
        audiences.update((value, kind.audience) for value, kind in kinds.items())
        _JOINED[:] = [version, _Tables(
            kinds=kinds, scheduled=scheduled,
            families=tuple((prefix, Audience(audience)) for prefix, audience in ruleset_event_families()),
            audiences=audiences, timelines={value: kind.timeline for value, kind in kinds.items() if kind.timeline})]
    return _JOINED[1]


def declared_event_kind(kind: str) -> DeclaredEventKind | None:
    """The declaration of the ``GameEvent`` kind ``kind``: the engine's (``EventKind``) or a registered ruleset's
    (``RulesetSpec.event_kinds``); None when none declares it (a family's kind, say)."""
    return _tables().kinds.get(kind)


def event_audiences() -> dict[str, Audience]:
    """Every declared kind -> its audience: the typed kinds (the engine's and the registered rulesets') and the
    ``scheduler.<kind>`` row of every declared scheduled kind whose row some staff member sees (shared: read only)."""
    return _tables().audiences


def event_audience(kind: str) -> Audience:
    """The audience of the audit-log ``kind``: its declaration's (``event_audiences``: a typed kind, a scheduled
    event's ``scheduler.<kind>`` row), its family's (``event_families()``), else ``Audience.NOBODY`` (fail
    closed)."""
    tables = _tables()
    audience = tables.audiences.get(kind)
    if audience is not None:
        return audience
    for prefix, audience in tables.families:
        if kind.startswith(prefix):
            return audience
    return Audience.NOBODY


def event_timelines() -> dict[str, str]:
    """The kinds shown on the archive's timeline -> their line (``timeline``), the engine's and the registered
    rulesets' (shared: read only)."""
    return _tables().timelines


def declared_scheduled_kind(kind: str) -> DeclaredScheduledKind | None:
    """The declaration of the ``ScheduledEvent`` kind ``kind``: the engine's (``ScheduledKind``) or a registered
    ruleset's (``RulesetSpec.scheduled_event_kinds``); None when none declares it."""
    return _tables().scheduled.get(kind)


def scheduled_label(kind: str) -> str:
    """The words for a ScheduledEvent ``kind`` in the active language (its name, spaced, when none declares it)."""
    declared = declared_scheduled_kind(kind)
    return str(declared.label) if declared is not None else kind.replace("_", " ")


def event_kind_problems() -> list[str]:
    """What is wrong with the event and scheduled kinds the registered rulesets declare, one sentence each ([]
    when nothing): a declaration that is not of the kernel's base tables, a kind the engine or another ruleset
    declares too. Read by the system checks (``mafia_site.checks``)."""
    problems = []
    seen: dict[tuple[str, str], str] = {**{("event", k.value): "the engine" for k in EventKind},
                                        **{("scheduled", k.value): "the engine" for k in ScheduledKind}}
    for key, spec in registered_rulesets().items():
        for table, base, kinds in (("event", DeclaredEventKind, spec.event_kinds),
                                   ("scheduled", DeclaredScheduledKind, spec.scheduled_event_kinds)):
            for kind in kinds:
                if not isinstance(kind, base):
                    problems.append(f"ruleset {key!r}: {table} kind {kind!r} is not a {base.__name__}")
                    continue
                other = seen.setdefault((table, kind.value), f"ruleset {key!r}")
                if other != f"ruleset {key!r}":
                    problems.append(f"ruleset {key!r}: {table} kind {kind.value!r} is declared by {other} too")
    return problems
