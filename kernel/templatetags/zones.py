"""Template filters for time zones: ``{{ game.time_zone|utc_offset }}`` -> "UTC+03:00"."""
from __future__ import annotations

from django import template

from kernel.timezones import utc_offset_label

register = template.Library()


@register.filter
def utc_offset(zone_name: str) -> str:
    """The zone's current offset from UTC, written the way a person reads it ("UTC−03:00" for Etc/GMT+3)."""
    try:
        return utc_offset_label(zone_name)
    except (KeyError, ValueError):
        return ""
