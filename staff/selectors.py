"""Reads of the staff app's player pages: the open impeachment demand of a city and whether a mafioso
acknowledged their role."""
from __future__ import annotations

from cities.models import Resident

from .models import ImpeachmentDemand, RoleAcknowledgement


def open_impeachment_demand_of(seat: Resident) -> ImpeachmentDemand | None:
    """The impeachment demand of ``seat``'s city not yet ruled on (at most one), or None. For a page
    of that city's residents (the caller checked the seat)."""
    return ImpeachmentDemand.objects.filter(city_id=seat.city_id, ruled_at__isnull=True).first()


def has_acknowledged_role(seat: Resident) -> bool:
    """True when ``seat`` (a mafioso; the caller checked) has acknowledged their role."""
    return RoleAcknowledgement.objects.filter(resident=seat).exists()
