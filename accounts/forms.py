"""Account forms plugged into django-allauth."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class SignupForm(forms.Form):
    """Extra sign-up field for allauth (``ACCOUNT_FORMS['signup']``): the display name used in games."""

    display_name = forms.CharField(
        label=_("Display name"), max_length=60, required=False,
        help_text=_("Shown to other players in games. Leave blank to use your username."),
    )

    def signup(self, request, user) -> None:
        """Store the display name on the new ``user`` (called by allauth after the account is created)."""
        user.display_name = self.cleaned_data.get("display_name", "").strip()
        user.save(update_fields=["display_name"])
