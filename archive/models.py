"""After the game (L-ARCH) and notifications during it (L-INBOX-20): the tables.

Read disclosure state only through ``inboxes.policies`` (consents and open requests are clauses of THE access
policy, not flags that views check); write these tables only through ``archive.services``.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from cities.models import Resident, ScheduledEvent, StaffRole
from inboxes.models import Inbox


class DisclosureConsent(models.Model):
    """One person's consent to disclose ``inbox`` after the game (L-ARCH-2, L-INBOX-5, L-INBOX-13).

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


class OpenRequest(models.Model):
    """The logged click of ``user`` opening an "open to anyone who asks" inbox after the game (L-ARCH-1)."""

    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="open_requests")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="archive_open_requests")
    at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["inbox", "user"], name="openrequest_one_per_inbox_user")]

    def __str__(self) -> str:
        return f"{self.user_id} opened {self.inbox_id}"


class NotificationSettings(models.Model):
    """A user's notification choices: the e-mail digest and the time zone reminders are written in."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_settings")
    time_zone = models.CharField(_("time zone"), max_length=64, default="Europe/Moscow")
    email_digest = models.BooleanField(_("e-mail digest"), default=False)
    reminders = models.BooleanField(_("deadline reminders"), default=True)
    digest_sent_up_to = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"notification settings of {self.user_id}"


class ReminderSent(models.Model):
    """A reminder of ``event`` (a deadline) sent to ``user``, so that no tick sends it twice."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    event = models.ForeignKey(ScheduledEvent, on_delete=models.CASCADE, related_name="+")
    sent_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "event"], name="remindersent_one_per_user_event")]
