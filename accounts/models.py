"""The site's user: an ordinary account; game staff are game roles held by such accounts (L-STAFF-5)."""
from __future__ import annotations

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy as _


class User(AbstractUser):
    """A site account.

    ``display_name`` is the name shown in games (city lists, message authors); it defaults to the username.
    Being a Django superuser grants nothing inside a game (L-STAFF-5): the access policy never looks at
    ``is_superuser`` or ``is_staff``.
    """

    display_name = models.CharField(_("display name"), max_length=60, blank=True)

    class Meta(AbstractUser.Meta):
        swappable = "AUTH_USER_MODEL"
        constraints = [
            # Two players may not share a name in games (one could pass for the other, or for a Tribune).
            models.UniqueConstraint(Lower("display_name"), condition=~Q(display_name=""),
                                    name="user_display_name_unique_ci"),
        ]

    def __str__(self) -> str:
        return self.public_name

    @property
    def public_name(self) -> str:
        """The name shown to other players: ``display_name`` or, when blank, the username."""
        return self.display_name or self.username
