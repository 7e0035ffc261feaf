"""Account forms plugged into django-allauth."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from .models import display_name_key, normalize_display_name
from .names import validate_public_name

#: The label of allauth's login field (its own msgid and context), translated again in the project's catalogue:
#: allauth's Russian calls the field «Войти», like the button under it; the field takes a login («Логин»).
LOGIN_FIELD_LABEL = pgettext_lazy("field label", "Login")


class SignupForm(forms.Form):
    """Extra sign-up field for allauth (``ACCOUNT_FORMS['signup']``): the display name used in games."""

    display_name = forms.CharField(
        label=_("Display name"), max_length=60, required=False,
        help_text=_("Shown to other players in games. Leave blank to use your username."),
    )

    def clean_display_name(self) -> str:
        """Refuse a display name that another account shows already, as its display name or its username
        (case-insensitive), and any name that could impersonate (``accounts.names``: control characters, mixed
        look-alike scripts, reserved names, a confusable skeleton shared with another account): nobody may pass
        for the site, a member of staff or another player."""
        from django.contrib.auth import get_user_model

        raw = self.cleaned_data.get("display_name", "")
        name = normalize_display_name(raw)
        key = display_name_key(name)
        users = get_user_model().objects
        if name and (users.filter(display_name_key=key).exists() or users.filter(username__iexact=name).exists()):
            raise forms.ValidationError(_("This name is already taken."))
        validate_public_name(raw)  # the raw text: NFKC normalisation would hide some look-alikes
        return name

    def signup(self, request, user) -> None:
        """Store the display name on the new ``user`` (called by allauth after the account is created)."""
        user.display_name = self.cleaned_data.get("display_name", "").strip()
        user.save(update_fields=["display_name"])
