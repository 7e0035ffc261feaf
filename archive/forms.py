"""Forms of the archive and notification pages."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from kernel.timezones import TimeZoneField


class NotificationSettingsForm(forms.Form):
    """Notification choices: an IANA time zone for reminders, the e-mail digest, the reminders."""

    time_zone = TimeZoneField(label=_("time zone"))
    email_digest = forms.BooleanField(label=_("e-mail digest"), required=False)
    reminders = forms.BooleanField(label=_("deadline reminders"), required=False)
