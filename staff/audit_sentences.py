"""The audit log in words (the staff console): each ``GameEvent`` as a sentence in its game's language (the
language of the game's pages), naming residents, cities and inboxes with links the viewer may open, times in the
game's zone with the zone's abbreviation.

The engine words the typed kinds it records itself (``kernel.events.EventKind``) and the ``scheduler.<kind>`` rows
of every declared scheduled kind (``kernel.events.scheduled_label``); a ruleset words the kinds its own services
record (``RulesetSpec.audit_sentences``, with the payload codes it shows in words), read for its games only. What
a sentence may show is decided by the audit clause of the policy (``inboxes.audit_policy.AuditScope``): nothing of
an event the viewer may not see; an inbox or a message only by a link to an inbox the viewer reads (else "—"); the
actor only when ``shows_actor``; no database id anywhere.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from django.urls import reverse
from django.utils import translation
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _

from cities.models import City, GameStatus, Resident
from inboxes.audit_policy import AUDIT_PLAIN_NUMBERS, AUDIT_REFERENCES, AuditScope
from inboxes.models import DeathCause, Inbox, Message
from kernel.events import EventKind, declared_scheduled_kind, scheduled_label
from kernel.rulesets import registered_rulesets, ruleset_of
from kernel.timezones import zoned_time

K = EventKind

#: The sentence of each audit kind the engine records. Placeholders name payload keys (``%(resident)s``...) and ``%(actor)s``.
SENTENCES = {
    K.GAME_CREATED: _("%(actor)s created the game “%(title)s”."),
    K.GAME_STATUS: _("%(actor)s set the game's status to %(status)s (day %(day)s)."),
    K.CITY_ADDED: _("%(actor)s added the city %(city)s."),
    K.CITIES_FORMED: _("%(actor)s formed the cities: %(cities)s."),
    K.CITIES_LISTS_PUBLISHED: _("%(actor)s published the city lists."),
    K.SIGNUP_CREATED: _("%(actor)s signed up to play."),
    K.SIGNUP_NOT_SEATED: _("Not seated when the cities were formed: %(reason)s"),
    K.SIGNUP_WITHDRAWN: _("%(actor)s withdrew their sign-up."),
    K.SIGNUPS_CLOSED: _("%(actor)s closed the sign-ups (%(signups)s signed up)."),
    K.RESIDENT_SEATED: _("%(resident)s was seated in %(city)s."),
    K.RESIDENT_MOVED: _("%(actor)s moved %(resident)s to %(city)s."),
    K.STAFF_APPOINTED: _("%(actor)s appointed %(user)s: %(role)s."),
    K.POST_CREATED: _("%(actor)s wrote a public post."),
    K.POST_SCHEDULED: _("%(actor)s scheduled a public post for %(publish_at)s."),
    K.POST_PUBLISHED: _("%(actor)s published a public post."),
    K.POST_APPENDED: _("%(actor)s added to a public post."),
    K.SCHEDULER_POST_PUBLISHED: _("The site published a scheduled public post."),
    K.RESIDENT_FLAGS: _("A resident's flags were set."),
    K.INBOX_CREATED: _("%(actor)s created the inbox %(inbox)s."),
    K.INBOX_KILLED: _("%(actor)s closed the inbox %(inbox)s."),
    K.INBOX_ROLLED_OVER: _("The inbox %(inbox)s was rolled over into %(successor)s."),
    K.MESSAGE_POSTED: _("%(actor)s posted %(message)s in %(inbox)s."),
    K.MESSAGE_SITE_POSTED: _("The site posted %(message)s in %(inbox)s."),
    K.MESSAGE_EDITED: _("%(actor)s edited %(message)s in %(inbox)s."),
    K.MESSAGE_HIDDEN: _("%(actor)s hid %(message)s in %(inbox)s."),
    K.MEMBERSHIP_ADDED: _("%(actor)s added %(resident)s to %(inbox)s."),
    K.MEMBERSHIP_BANNED: _("%(actor)s banned %(resident)s in %(inbox)s until %(until)s."),
    K.MEMBERSHIP_UNBANNED: _("%(actor)s lifted the ban of %(resident)s in %(inbox)s."),
    K.MEMBERSHIP_REMOVED: _("%(actor)s removed %(resident)s from %(inbox)s."),
    K.MEMBERSHIP_LEFT: _("%(resident)s left %(inbox)s."),
    K.MEMBERSHIP_PENALTY_BANNED: _("%(actor)s gave %(resident)s a penalty ban until %(until)s: %(reason)s."),
    K.RESIDENT_DIED: _("%(resident)s died (%(cause)s)."),
    K.RESIDENT_REPLACED: _("%(actor)s replaced the player of %(resident)s: %(old_user)s by %(new_user)s."),
    K.STAFF_STAND_IN_GRANTED: _("%(actor)s gave %(city)s a stand-in until %(until)s: %(role)s."),
    K.STAFF_STAND_IN_ENDED: _("%(actor)s ended the stand-in of %(city)s."),
    K.PLAY_BAN_RECORDED: _("%(actor)s banned %(user)s from playing until %(until)s."),
    K.PLAY_BAN_ENDED: _("The play ban of %(user)s ended."),
    K.PLAY_BAN_LIFTED: _("%(actor)s lifted the play ban of %(user)s: %(reason)s"),
    K.CLOCK_PAUSED: _("The site's clock was paused: %(reason)s."),
    K.CLOCK_RESUMED: _("The site's clock resumed."),
    K.SCHEDULER_EVENT_FAILED: _("A scheduled event (%(kind)s) failed after %(attempts)s attempts: %(error)s."),
    K.SCHEDULER_EVENT_CRASHED: _("A scheduled event (%(kind)s) crashed after %(attempts)s attempts."),
    K.SCHEDULER_RETRY_REQUESTED: _("%(actor)s asked the site to retry a scheduled event (%(kind)s)."),
    K.SCHEDULER_EVENT_WAITS: _("A scheduled event (%(kind)s) waits until %(until)s: %(reason)s."),
    K.ARCHIVE_CONSENT_GIVEN: _("%(actor)s consented to disclose %(inbox)s."),
    K.ARCHIVE_CONSENT_REVOKED: _("%(actor)s withdrew their consent to disclose %(inbox)s."),
    K.ARCHIVE_OPEN_REQUEST: _("%(actor)s opened %(inbox)s after the game."),
    K.ARCHIVE_REMINDER: _("A deadline reminder was sent."),
}

SCHEDULER_RAN = _("The site ran %(what)s.")
UNKNOWN_KIND = _("An event of the game.")
NOBODY_SHOWN = _("a member of staff")
SITE = _("the site")
#: Payload keys whose strings are moments (ISO 8601), shown in the game's zone.
MOMENT_KEYS = frozenset({"opens_at", "closes_at", "publish_at", "until", "from", "to", "starts_at", "deadline",
                         "night_starts_at", "first_day_starts_at", "ends", "paused_at", "drafted_at", "started_at",
                         "next_day_starts_at"})

#: Payload keys whose strings are codes of a set of choices, shown as the choice's translated words (with those a
#: game's ruleset declares, ``RulesetSpec.audit_payload_codes``); "kind" only for the event kinds its ruleset lists
#: in ``audit_kind_codes`` (elsewhere it names a scheduled event). An unknown code stays as stored.
CODE_KEYS = {"cause": DeathCause, "status": GameStatus}


def known_audit_sentences() -> dict[str, Any]:
    """The audit sentence of every event kind some registered ruleset words (``RulesetSpec.audit_sentences``): kind ->
    the sentence of the first registration that words it (for a list of kinds across games, such as a filter)."""
    sentences: dict[str, Any] = {}
    for spec in registered_rulesets().values():
        for kind, sentence in spec.audit_sentences.items():
            sentences.setdefault(kind, sentence)
    return sentences



def _is_scheduler_row(kind: str) -> bool:
    """True when ``kind`` is the row the scheduler writes when a declared scheduled kind runs (``scheduler.<kind>``)."""
    return kind.startswith("scheduler.") and declared_scheduled_kind(kind[len("scheduler."):]) is not None


def sentence_of(game, kind: str):
    """The sentence (lazily translated) of audit ``kind`` in ``game``: its ruleset's
    (``RulesetSpec.audit_sentences``), else the engine's (``SENTENCES``); None when neither words it."""
    own = ruleset_of(game).audit_sentences.get(kind)
    return own if own is not None else SENTENCES.get(kind)


def code_words(choices, value: str) -> str:
    """The translated label of ``value`` in the Django ``choices`` enum (active language), or ``value`` itself
    when it is not one of its codes."""
    member = choices._value2member_map_.get(value)
    return str(member.label) if member is not None else value


class _Words:
    """The payload of one event as the sentence's values (a mapping for ``%``): escaped text and links."""

    def __init__(self, scope: AuditScope, event, refs: dict):
        self.scope, self.event, self.refs = scope, event, refs
        self.payload = event.payload or {}
        spec = ruleset_of(event.game)
        self.codes = {**CODE_KEYS, **spec.audit_payload_codes}
        self.kind_codes = spec.audit_kind_codes.get(event.kind)

    def __getitem__(self, key: str):
        if key == "actor":
            if self.event.actor_id is None:
                return conditional_escape(str(SITE))
            if not self.scope.shows_actor(self.event):
                return conditional_escape(str(NOBODY_SHOWN))
            return conditional_escape(self.event.actor.public_name)
        value = self.payload.get(key)
        if value is None or value == "" or value == []:
            return "—"
        if isinstance(value, list):
            return mark_safe(", ".join(str(self._one(key, v)) for v in value[:30]))
        return self._one(key, value)

    def _one(self, key: str, value):
        if isinstance(value, bool):
            return conditional_escape(str(_("yes") if value else _("no")))
        if isinstance(value, int):
            if key in AUDIT_PLAIN_NUMBERS:
                return str(value)
            return self._reference(key, value)
        if key == "kind" and isinstance(value, str) and self.kind_codes is not None:
            return conditional_escape(code_words(self.kind_codes, value))
        if key == "kind" and isinstance(value, str) and declared_scheduled_kind(value) is not None:
            return conditional_escape(scheduled_label(value))
        if key in self.codes and isinstance(value, str):
            return conditional_escape(code_words(self.codes[key], value))
        if key in MOMENT_KEYS and isinstance(value, str):
            try:
                return conditional_escape(zoned_time(datetime.fromisoformat(value), self.event.game.time_zone))
            except ValueError:
                pass
        return conditional_escape(str(value)[:200])

    def _reference(self, key: str, value: int):
        target = AUDIT_REFERENCES.get(key)
        found = self.refs.get(target, {}).get(value)
        if found is None:
            return "—" if target in ("inbox", "message", "resident", "city", "user", "role") else "…"
        label, url = found
        return format_html('<a href="{}">{}</a>', url, label) if url else conditional_escape(label)


def _references(scope: AuditScope, game) -> dict[str, dict[int, tuple[str, str | None]]]:
    """Object id -> (label, link or None) per kind of reference, for one viewer and game (cached on ``scope``)."""
    cached = scope.__dict__.get("_sentence_refs")
    if cached is not None:
        return cached
    readable = scope.readable_inbox_ids()
    refs = {
        "resident": {pk: (name, reverse("resident_detail", args=[game.slug, public_id])) for pk, name, public_id
                     in Resident.objects.filter(game=game).values_list("pk", "name", "public_id")},
        "city": {pk: (name, reverse("city_day", args=[game.slug, number])) for pk, name, number
                 in City.objects.filter(game=game).values_list("pk", "name", "number")},
        "inbox": {pk: (title, reverse("inbox_thread", args=[public_id])) for pk, title, public_id
                  in Inbox.objects.filter(game=game, pk__in=readable).values_list("pk", "title", "public_id")},
        "message": {pk: (str(_("a message")), reverse("inbox_thread", args=[inbox_pid])) for pk, inbox_pid
                    in Message.objects.filter(inbox__game=game, inbox_id__in=readable)
                    .values_list("pk", "inbox__public_id")},
        "user": {pk: (text, None) for pk, text in scope._references("user").items()},
        "role": {pk: (text, None) for pk, text in scope._references("role").items()},
    }
    scope.__dict__["_sentence_refs"] = refs
    return refs


def audit_sentence(scope: AuditScope, event) -> SafeString:
    """``event`` (a GameEvent of ``scope``'s game) as one sentence in its game's language, with links to the
    residents, cities, inboxes and messages it names that ``scope``'s viewer may open; "" when the viewer may not
    see the event at all (``AuditScope.can_see``)."""
    if not scope.can_see(event):
        return mark_safe("")
    kind = event.kind
    sentence = sentence_of(event.game, kind)
    with translation.override(event.game.language):
        if sentence is not None:
            template = str(sentence)
        elif _is_scheduler_row(kind):
            template = str(SCHEDULER_RAN) % {"what": scheduled_label(kind[len("scheduler."):])}
        else:
            template = str(UNKNOWN_KIND)
        words = _Words(scope, event, _references(scope, event.game))
        return mark_safe(conditional_escape(template) % words
                         if "%(" in template else conditional_escape(template))


def kind_label(kind: str) -> str:
    """A kind's sentence with its blanks as "…", for the console's filter (the active language): the engine's, else
    that of a registered ruleset that words it (``known_audit_sentences``); the kind itself when none does."""
    sentence = SENTENCES.get(kind)
    if sentence is None:
        sentence = known_audit_sentences().get(kind)
    if sentence is not None:
        template = str(sentence)
    elif _is_scheduler_row(kind):
        template = str(SCHEDULER_RAN) % {"what": scheduled_label(kind[len("scheduler."):])}
    else:
        return kind
    return template % _Blanks()


class _Blanks:
    def __getitem__(self, key: str) -> str:
        return "…"
