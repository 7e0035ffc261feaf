"""Forms of inbox pages."""
from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from kernel.form_fields import IdempotencyKeyField, ObjectMultipleChoiceField
from cities.models import LifeStatus, Resident


class PostMessageForm(forms.Form):
    """A new message: Markdown text. Length and emptiness are checked again by ``do_post_message``.

    The length is checked here, not by the browser: a ``maxlength`` would cut a long paste silently (and a cut
    command, ``##VOTE Jo``, would still count); an over-long text is refused as a whole and shown again."""

    text = forms.CharField(
        label=_("Message"), widget=forms.Textarea(attrs={"rows": 5}), strip=True,
        error_messages={"required": _("The message is empty.")},
    )
    idempotency_key = IdempotencyKeyField()

    def clean_text(self) -> str:
        text = self.cleaned_data["text"]
        limit = settings.MAFIA_MESSAGE_MAX_LENGTH
        if len(text) > limit:
            # Formatted when shown, in the page's language (the game's, activated after validation).
            raise forms.ValidationError(_("The message is too long: %(length)d characters, at most %(max)d."),
                                        code="max_length", params={"length": len(text), "max": limit})
        return text


class EditMessageForm(PostMessageForm):
    """The new text of one's own message; checked again by ``do_edit_message``."""


class SecretInboxForm(forms.Form):
    """A new secret inbox: a title and the residents to invite (the living residents of the game: the
    dead learn nothing created after their death; the page lists them by city, which is public).
    ``do_create_secret_inbox`` checks everything again."""

    title = forms.CharField(label=_("Title"), max_length=200, strip=True,
                            error_messages={"required": _("The title is empty.")})
    members = ObjectMultipleChoiceField(label=_("Members"), queryset=None, widget=forms.CheckboxSelectMultiple,
                                             error_messages={"required": _("Invite at least one member.")})
    idempotency_key = IdempotencyKeyField()

    def __init__(self, *args, game, exclude=None, **kwargs):

        super().__init__(*args, **kwargs)
        residents = Resident.objects.filter(game=game, status=LifeStatus.ALIVE).select_related("city").order_by("city__number", "name")
        if exclude is not None:
            residents = residents.exclude(pk=exclude.pk)
        self.fields["members"].queryset = residents
        self.fields["members"].label_from_instance = lambda r: f"{r.name} ({r.city.name})" if r.city_id else r.name
