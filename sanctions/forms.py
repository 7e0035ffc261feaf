"""Forms of the sanctions' pages: a complaint of no confidence and a message in a mafia complaint."""
from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _


class ComplaintForm(forms.Form):
    """The text of a complaint, or of a message in the mafia's complaint (Markdown)."""

    text = forms.CharField(label=_("Your complaint"), widget=forms.Textarea(attrs={"rows": 5}),
                           max_length=settings.MAFIA_MESSAGE_MAX_LENGTH)
