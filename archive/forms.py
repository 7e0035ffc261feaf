"""Forms of the archive and notification pages."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class NotificationSettingsForm(forms.Form):
    """Notification choices: an IANA time zone for reminders, the e-mail digest, the reminders."""

    time_zone = forms.CharField(label=_("time zone"), max_length=64)
    email_digest = forms.BooleanField(label=_("e-mail digest"), required=False)
    reminders = forms.BooleanField(label=_("deadline reminders"), required=False)
