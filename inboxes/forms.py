"""Forms of inbox pages."""
from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _


class PostMessageForm(forms.Form):
    """A new message: Markdown text. Length and emptiness are checked again by ``do_post_message``."""

    text = forms.CharField(
        label=_("Message"), widget=forms.Textarea(attrs={"rows": 5}), strip=True,
        max_length=settings.MAFIA_MESSAGE_MAX_LENGTH,
        error_messages={"required": _("The message is empty.")},
    )


class EditMessageForm(PostMessageForm):
    """The new text of one's own message (L-INBOX-21); checked again by ``do_edit_message``."""
