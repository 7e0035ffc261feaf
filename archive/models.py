"""After the game and notifications during it: the tables.

Read disclosure state only through ``inboxes.policies`` (consents and open requests are clauses of THE access
policy, not flags that views check); write these tables only through ``archive.services``.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from cities.models import Resident, ScheduledEvent, StaffRole
from inboxes.models import Inbox
from kernel.live import ALL, ReaderRowsQuerySet, field_values, track_reader_rows


class DisclosureConsent(models.Model):
    """One person's consent to disclose ``inbox`` after the game.

    The consenter is a seat (``resident``: the owner of a personal inbox, a member of a secret inbox) or, for a
    secret inbox a staff member organised, that ``staff_role``. ``revoked_at`` set = withdrawn (allowed only while
    the inbox is not yet disclosed); giving it again clears it. One row per (inbox, consenter).
    """

    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="disclosure_consents")
    resident = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.CASCADE, related_name="disclosure_consents")
    staff_role = models.ForeignKey(StaffRole, null=True, blank=True, on_delete=models.CASCADE, related_name="disclosure_consents")
    given_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    given_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ReaderRowsQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(resident__isnull=True, staff_role__isnull=False)
                                   | Q(resident__isnull=False, staff_role__isnull=True),
                                   name="consent_one_consenter"),
            models.UniqueConstraint(fields=["inbox", "resident"], condition=Q(resident__isnull=False),
                                    name="consent_one_per_inbox_resident"),
            models.UniqueConstraint(fields=["inbox", "staff_role"], condition=Q(staff_role__isnull=False),
                                    name="consent_one_per_inbox_staff_role"),
        ]

    def __str__(self) -> str:
        return f"consent to disclose {self.inbox_id} by {self.resident_id or self.staff_role_id}"

    @classmethod
    def live_readers(cls, rows) -> list[tuple[int, int | None]]:
        """Whose reading a consent of ``rows`` may change: everyone in the inboxes' games (a disclosure is for all,
        ``kernel.live.ALL``)."""
        inboxes = {pk for (pk,) in field_values(rows, "inbox_id")}
        return [(game_id, ALL) for game_id in Inbox._base_manager.filter(pk__in=inboxes).values_list("game_id", flat=True)]


class OpenRequest(models.Model):
    """The logged click of ``user`` opening an "open to anyone who asks" inbox after the game."""

    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="open_requests")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="archive_open_requests")
    at = models.DateTimeField()

    objects = ReaderRowsQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["inbox", "user"], name="openrequest_one_per_inbox_user")]

    def __str__(self) -> str:
        return f"{self.user_id} opened {self.inbox_id}"

    @classmethod
    def live_readers(cls, rows) -> list[tuple[int, int | None]]:
        """Whose reading the requests ``rows`` change, as (game id, user id): each requester."""
        pairs = field_values(rows, "inbox_id", "user_id")
        games = dict(Inbox._base_manager.filter(pk__in={pk for pk, _u in pairs}).values_list("pk", "game_id"))
        return [(games[inbox_id], user_id) for inbox_id, user_id in pairs if inbox_id in games]


class NotificationKind(models.TextChoices):
    """What a notification is about. Each is sent to a person only while the policy lets them read
    what it points at (``archive.notifications.still_allowed``)."""

    MENTION = "mention", _("Mentions of you")
    REPLY = "reply", _("New messages in your inboxes")
    DEADLINE = "deadline", _("Deadlines approaching for you")
    NIGHT_RESULT = "night_result", _("Your night result")
    OFFER = "offer", _("Offers and requests addressed to you")


class Channel(models.TextChoices):
    """How one kind of notification reaches a person: on the site (every channel but ``OFF`` lists it in the
    notifications page) and, for the e-mail channels, by e-mail at once or in an hourly or daily digest."""

    SITE = "site", _("On the site")
    EMAIL_NOW = "email_now", _("On the site and by e-mail at once")
    DIGEST_HOURLY = "digest_hourly", _("On the site and in an hourly e-mail digest")
    DIGEST_DAILY = "digest_daily", _("On the site and in a daily e-mail digest")
    OFF = "off", _("Off")


#: The channel of each kind for a person who never chose (deadline reminders went by e-mail before).
DEFAULT_CHANNELS = {NotificationKind.MENTION: Channel.SITE, NotificationKind.REPLY: Channel.SITE,
                    NotificationKind.DEADLINE: Channel.EMAIL_NOW, NotificationKind.NIGHT_RESULT: Channel.SITE,
                    NotificationKind.OFFER: Channel.EMAIL_NOW}


def _channel_field(kind: NotificationKind) -> models.CharField:
    return models.CharField(kind.label, max_length=16, choices=Channel.choices, default=DEFAULT_CHANNELS[kind],
                            db_default=DEFAULT_CHANNELS[kind])


class NotificationSettings(models.Model):
    """A user's notification choices: one ``Channel`` per ``NotificationKind`` (the field is named by the kind),
    and when each digest last went out. The zone times are written in is the account's display zone
    (``User.time_zone``)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_settings")
    mention = _channel_field(NotificationKind.MENTION)
    reply = _channel_field(NotificationKind.REPLY)
    deadline = _channel_field(NotificationKind.DEADLINE)
    night_result = _channel_field(NotificationKind.NIGHT_RESULT)
    offer = _channel_field(NotificationKind.OFFER)
    hourly_digest_at = models.DateTimeField(null=True, blank=True)
    daily_digest_at = models.DateTimeField(null=True, blank=True)

    def channel(self, kind: str) -> str:
        """The ``Channel`` chosen for ``kind``."""
        return getattr(self, kind)

    def __str__(self) -> str:
        return f"notification settings of {self.user_id}"


class Notification(models.Model):
    """One thing to tell ``user``: a message that mentions them, a new message in one of their
    inboxes, a site message with their night result (``message``), a deadline of theirs (``event``), or one of a
    ruleset's own records addressed to them (``record``: a generic relation, ``record_type`` + ``record_id``; the
    ruleset words it, links it and says who may still see it: ``RulesetSpec.record_notification_text`` and friends).
    Rows are written by ``archive.services.do_collect_notifications`` for the readers the policy allows then;
    whether a row is shown or e-mailed is decided again by the policy when it is
    (``archive.notifications.still_allowed``). ``emailed_at``: sent by e-mail (at once or in a digest);
    ``withheld_at``: refused by the policy at send time and never sent; ``read_at``: opened or marked read on the
    notifications page. A ruleset's record model declares a ``GenericRelation`` to this model, so that deleting the
    record deletes its notifications."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications")
    game = models.ForeignKey("cities.Game", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=NotificationKind.choices)
    message = models.ForeignKey("inboxes.Message", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    event = models.ForeignKey(ScheduledEvent, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    record_type = models.ForeignKey(ContentType, null=True, blank=True, on_delete=models.CASCADE, related_name="+",
                                    db_index=False)
    record_id = models.PositiveBigIntegerField(null=True, blank=True)
    record = GenericForeignKey("record_type", "record_id")
    created_at = models.DateTimeField()
    read_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)
    withheld_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "-created_at"], name="notification_user_recent"),
                   models.Index(fields=["record_type", "record_id"], name="notification_record")]
        constraints = [
            models.UniqueConstraint(fields=["user", "message"], condition=Q(message__isnull=False),
                                    name="notification_one_per_user_message"),
            models.UniqueConstraint(fields=["user", "event"], condition=Q(event__isnull=False),
                                    name="notification_one_per_user_event"),
            models.UniqueConstraint(fields=["user", "record_type", "record_id"], condition=Q(record_type__isnull=False),
                                    name="notification_one_per_user_record"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} for {self.user_id}"


class NotificationCursor(models.Model):
    """How far ``do_collect_notifications`` has read the game's records (messages, the rulesets' own records):
    one row, ``up_to`` (aware UTC). Each run re-reads a short overlap before it (rows are unique per source)."""

    name = models.CharField(max_length=20, unique=True)
    up_to = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} up to {self.up_to}"


track_reader_rows(DisclosureConsent)
track_reader_rows(OpenRequest)
