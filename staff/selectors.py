"""Reads of the staff app's player pages: the open impeachment demand of a city (L-IMPEACH)."""
from __future__ import annotations

from cities.models import Resident

from .models import ImpeachmentDemand


def open_impeachment_demand_of(seat: Resident) -> ImpeachmentDemand | None:
    """The impeachment demand of ``seat``'s city not yet ruled on (at most one, L-IMPEACH-1), or None. For a page
    of that city's residents (the caller checked the seat)."""
    return ImpeachmentDemand.objects.filter(city_id=seat.city_id, ruled_at__isnull=True).first()
