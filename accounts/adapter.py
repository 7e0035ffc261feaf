"""The allauth account adapter: usernames are checked like display names (``accounts.names``); allauth's flash
messages speak the language of the account's games."""
from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter
from django.utils import translation

from cities.i18n import account_language

from .names import validate_public_name


class AccountAdapter(DefaultAccountAdapter):
    """Refuses a username that could impersonate the site, a member of staff or another player: with no display
    name, the username is the name shown in games."""

    def clean_username(self, username, shallow=False):
        """allauth's checks, then ``validate_public_name`` (raises ``ValidationError`` with the reason)."""
        username = super().clean_username(username, shallow=shallow)
        validate_public_name(username)
        return username

    def add_message(self, request, level, message_template=None, message_context=None, extra_tags="",
                    message=None):
        """allauth's flash message ("Successfully signed in as ..."), written in the language of the games of
        the user it is about (``cities.i18n.account_language``), since it is shown on the next page, often a
        game's: a player of English games who logs in from the Russian front page reads it in English. Other cases keep the
        request's language."""
        user = getattr(request, "user", None)
        language = account_language(user) if user is not None and user.is_authenticated else None
        with translation.override(language or translation.get_language()):
            super().add_message(request, level, message_template=message_template,
                                message_context=message_context, extra_tags=extra_tags, message=message)
