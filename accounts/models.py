"""The site's user: an ordinary account; game staff are game roles held by such accounts."""
from __future__ import annotations

import unicodedata

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from kernel.live import note_user_changed


def normalize_display_name(name: str) -> str:
    """``name`` in Unicode NFKC form with runs of white space collapsed and the ends trimmed, so that
    "Игрок  pl01 " and fullwidth look-alikes cannot pass for "Игрок pl01"."""
    return " ".join(unicodedata.normalize("NFKC", name or "").split())


def display_name_key(name: str) -> str:
    """The comparison key of a display name: normalised and case-folded (Cyrillic included, which SQLite's
    LOWER() would not fold)."""
    return normalize_display_name(name).casefold()


class User(AbstractUser):
    """A site account.

    ``display_name`` is the name shown in games (city lists, message authors); it defaults to the username.
    Being a Django superuser grants nothing inside a game: the access policy never looks at
    ``is_superuser`` or ``is_staff``.
    """

    display_name = models.CharField(_("display name"), max_length=60, blank=True)
    #: The IANA zone this person reads every time in (pages, notifications, e-mails); blank: each game's own zone
    #: (``kernel.timezones.display_zone_name``).
    time_zone = models.CharField(_("display time zone"), max_length=64, blank=True, default="", db_default="")
    #: ``display_name_key(display_name)``: what two names must not share (set by ``save``).
    display_name_key = models.CharField(max_length=60, blank=True, editable=False, default="", db_default="")
    #: ``accounts.names.name_skeleton(public_name)``: the confusable skeleton no other account's name may share
    #: (set by ``save``; looked up at every sign-up and name change).
    name_skeleton = models.CharField(max_length=240, blank=True, editable=False, default="", db_default="",
                                     db_index=True)

    class Meta(AbstractUser.Meta):
        swappable = "AUTH_USER_MODEL"
        constraints = [
            # Two players may not share a name in games (one could pass for the other, or for a Tribune).
            models.UniqueConstraint(fields=["display_name_key"], condition=~Q(display_name_key=""),
                                    name="user_display_name_key_unique"),
        ]

    def save(self, *args, **kwargs):
        """Keep ``display_name`` normalised and ``display_name_key`` and ``name_skeleton`` in step with it; the
        account's live polls take the full path after the commit (an activation or password change ends what an
        open tab was told, ``kernel.live``)."""
        from .names import name_skeleton

        self.display_name = normalize_display_name(self.display_name)
        self.display_name_key = display_name_key(self.display_name)
        self.name_skeleton = name_skeleton(self.public_name)[:240]
        fields = kwargs.get("update_fields")
        if fields is not None and ({"display_name", "username"} & set(fields)):
            kwargs["update_fields"] = {*fields, "display_name_key", "name_skeleton"}
        super().save(*args, **kwargs)
        note_user_changed(self.pk)

    def __str__(self) -> str:
        return self.public_name

    @property
    def public_name(self) -> str:
        """The name shown to other players: ``display_name`` or, when blank, the username."""
        return self.display_name or self.username
