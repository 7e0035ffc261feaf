"""Account forms plugged into django-allauth."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import display_name_key, normalize_display_name


class SignupForm(forms.Form):
    """Extra sign-up field for allauth (``ACCOUNT_FORMS['signup']``): the display name used in games."""

    display_name = forms.CharField(
        label=_("Display name"), max_length=60, required=False,
        help_text=_("Shown to other players in games. Leave blank to use your username."),
    )

    def clean_display_name(self) -> str:
        """Refuse a display name that another account shows already, as its display name or its username
        (case-insensitive): nobody may pass for another player or for a member of staff."""
        from django.contrib.auth import get_user_model

        name = normalize_display_name(self.cleaned_data.get("display_name", ""))
        key = display_name_key(name)
        users = get_user_model().objects
        if name and (users.filter(display_name_key=key).exists() or users.filter(username__iexact=name).exists()):
            raise forms.ValidationError(_("This name is already taken."))
        return name

    def signup(self, request, user) -> None:
        """Store the display name on the new ``user`` (called by allauth after the account is created)."""
        user.display_name = self.cleaned_data.get("display_name", "").strip()
        user.save(update_fields=["display_name"])
