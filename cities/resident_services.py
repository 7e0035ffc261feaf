"""A seat's alignment set by the site's draws (the mafia draw): ``do_set_resident_flags``.

A low-level service every layer above may call (the inboxes, a ruleset's day, the draws): it imports only the
kernel and the models.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed
from kernel.rulesets import rule_id

from .models import Resident


@transaction.atomic
def do_set_resident_flags(resident: Resident, *, acting_user, now: datetime | None = None, **flags) -> Resident:
    """Set the secret ``alignment`` of ``resident`` as a draw decided. Only the site (``acting_user`` None: the
    draws) calls this; a ruleset's own ranks are set by its own services. Raises ``NotAllowed`` for a person (the
    rule key ``alignment_by_draw``: nobody chooses the mafia by hand) and ``InvalidInput`` for another flag. The audit row names the flag but neither its value nor the
    resident: the audit log must not become a list of the mafia.
    """
    now = now or timezone.now()
    if acting_user is not None:
        raise NotAllowed(_("Roles are set by the site's draws and elections, not by hand."),
                         rule=rule_id(resident.game, "alignment_by_draw"))
    unknown = set(flags) - {"alignment"}
    if unknown:
        raise InvalidInput(f"Unknown resident flags: {sorted(unknown)}")
    for key, value in flags.items():
        setattr(resident, key, value)
    resident.save(update_fields=list(flags))
    record_event(resident.game, "resident.flags", actor=None, at=now, payload={"flags": sorted(flags)})
    return resident
