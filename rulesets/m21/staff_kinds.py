"""M21's staff kinds (RULES.md M-SETUP-4): the host (the game's ``HOST_STAFF_KIND``) and any number of co-hosts,
who run every inbox of the game and know every role. Registered by ``M21Ruleset.staff_kinds``; their powers are
``policy_grants``."""
from __future__ import annotations

from types import MappingProxyType

from django.db import models
from django.utils.translation import gettext_lazy as _

from cities.staff_kinds import HOST_STAFF_KIND


class StaffKind(models.TextChoices):
    """M21's staff kinds: the stored values of ``StaffRole.kind`` in an M21 game."""

    HOST = HOST_STAFF_KIND, _("Host")
    COHOST = "cohost", _("Co-host")


#: ``M21Ruleset.staff_kinds``: value -> label, the host first (M-SETUP-4).
STAFF_KINDS = MappingProxyType({kind.value: kind.label for kind in StaffKind})
