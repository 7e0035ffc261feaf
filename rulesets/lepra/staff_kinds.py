"""Lepra's staff kinds (RULES.md L-STAFF-1..4): the Procurator (the game's host, ``HOST_STAFF_KIND``), a Tribune
per city, the Supreme Arbiter and the Consigliere. Registered by ``LepraRuleset.staff_kinds``; their powers are
``policy_grants`` (the grants and the staff tables of ``cities.staff_kinds``)."""
from __future__ import annotations

from types import MappingProxyType

from django.db import models
from django.utils.translation import gettext_lazy as _

from cities.staff_kinds import HOST_STAFF_KIND


class StaffKind(models.TextChoices):
    """Lepra's staff kinds: the stored values of ``StaffRole.kind`` in a Lepra game."""

    PROCURATOR = HOST_STAFF_KIND, _("Procurator")
    TRIBUNE = "tribune", _("Tribune")
    ARBITER = "arbiter", _("Supreme Arbiter")
    CONSIGLIERE = "consigliere", _("Consigliere")


#: ``LepraRuleset.staff_kinds``: value -> label, in the order the game's staff are listed (L-STAFF-1..4).
STAFF_KINDS = MappingProxyType({kind.value: kind.label for kind in StaffKind})
