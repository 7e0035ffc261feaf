"""The allauth account adapter: usernames are checked like display names (``accounts.names``)."""
from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter

from .names import validate_public_name


class AccountAdapter(DefaultAccountAdapter):
    """Refuses a username that could impersonate the site, a member of staff or another player: with no display
    name, the username is the name shown in games."""

    def clean_username(self, username, shallow=False):
        """allauth's checks, then ``validate_public_name`` (raises ``ValidationError`` with the reason)."""
        username = super().clean_username(username, shallow=shallow)
        validate_public_name(username)
        return username
