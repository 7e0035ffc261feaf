"""Forms of game pages."""
from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from django import forms
from django.utils.translation import gettext_lazy as _


class SchedulePostForm(forms.Form):
    """The Procurator's scheduled announcement: title, Markdown text and a publication time given in the
    game's time zone (converted to aware UTC with ``zoneinfo``)."""

    title = forms.CharField(label=_("Title"), max_length=200)
    body = forms.CharField(label=_("Text"), widget=forms.Textarea(attrs={"rows": 8}))
    publish_at = forms.DateTimeField(
        label=_("Publish at"), input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )

    def __init__(self, *args, time_zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = ZoneInfo(time_zone)
        self.fields["publish_at"].help_text = _("Time in the game's time zone (%(tz)s).") % {"tz": time_zone}

    def clean_publish_at(self) -> datetime:
        """Interpret the entered wall-clock time in the game's zone; return an aware UTC datetime."""
        value = self.cleaned_data["publish_at"]
        naive = value.replace(tzinfo=None) if value.tzinfo else value
        return naive.replace(tzinfo=self.zone).astimezone(ZoneInfo("UTC"))
