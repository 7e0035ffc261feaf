"""Seat flags set by the site's draws and elections (L-ASSIGN, L-JUDGE): ``do_set_resident_flags``.

A low-level service every layer above may call (the inboxes, the Lepra day, the draws): it imports only the
kernel and the models.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed

from .models import Resident


@transaction.atomic
def do_set_resident_flags(resident: Resident, *, acting_user, now: datetime | None = None, **flags) -> Resident:
    """Set secret or role flags of ``resident`` (alignment, is_commissar, is_judge, is_godfather) as a draw or an
    election decided. Only the site (``acting_user`` None: the draws and elections of roles/) calls this;
    the named DB constraints reject a second commissar, judge or godfather in a city.
    """
    now = now or timezone.now()
    if acting_user is not None:
        raise NotAllowed(_("Roles are set by the site's draws and elections, not by hand."), rule="L-ASSIGN-3")
    allowed = {"alignment", "is_commissar", "is_judge", "is_godfather"}
    unknown = set(flags) - allowed
    if unknown:
        raise InvalidInput(f"Unknown resident flags: {sorted(unknown)}")
    fields = list(flags)
    # Date the secret roles (L-STAFF-6 [interp]: knowledge is dated by the death of the one who knows).
    if "is_godfather" in flags and bool(flags["is_godfather"]) != resident.is_godfather:
        if flags["is_godfather"]:
            resident.godfather_since, resident.godfather_until = now, None
        else:
            resident.godfather_until = now
        fields += ["godfather_since", "godfather_until"]
    if flags.get("is_commissar") and not resident.is_commissar:
        resident.commissar_since = now
        fields.append("commissar_since")
    for key, value in flags.items():
        setattr(resident, key, value)
    resident.save(update_fields=fields)
    # The payload names the flags but not their values: the audit log must not become a list of the mafia.
    # The audit log will be browsed by staff : a row naming the resident of a secret flag (alignment,
    # commissar, godfather) would be a list of the mafia for the Procurator. Only the public judge flag names
    # its resident; the secret ones are recorded without anyone's name (the draws audit themselves).
    public = {key: value for key, value in flags.items() if key == "is_judge"}
    payload = {"resident": resident.pk, "flags": sorted(public)} if public and len(public) == len(flags) else {"flags": sorted(flags)}
    record_event(resident.game, "resident.flags", actor=None, at=now, payload=payload)
    return resident
