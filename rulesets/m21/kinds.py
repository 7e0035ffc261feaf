"""M21's inbox kinds (M-SETUP-5): the values stored in ``Inbox.kind`` for M21's games and their labels, registered
on the spec (``M21Ruleset.inbox_kind_choices``)."""
from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class M21InboxKind(models.TextChoices):
    """The kinds of M21's inboxes: the game thread, a player's role PM with the hosts, the mafia thread, the
    spectators' thread and the hosts' office."""

    GAME_THREAD = "game_thread", _("Game thread")
    ROLE_PM = "role_pm", _("Role PM")
    MAFIA_THREAD = "mafia_thread", _("Mafia thread")
    SPECTATORS = "spectators", _("Spectators' thread")
    OFFICE = "office", _("Office")
