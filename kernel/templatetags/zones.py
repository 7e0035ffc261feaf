"""Template filters for time zones: ``{{ game.time_zone|utc_offset }}`` -> "UTC+03:00"; ``{{ game|display_zone:user }}``
-> the zone ``user`` reads the game's times in; ``{{ moment|when }}`` -> the moment in the active zone with the
zone's abbreviation ("20 ноября 2026 г. 18:00 MSK")."""
from __future__ import annotations

from django import template
from django.utils import timezone
from django.utils.formats import date_format

from kernel.timezones import display_zone_name, utc_offset_label, zoned_time

register = template.Library()


@register.filter
def utc_offset(zone_name: str) -> str:
    """The zone's current offset from UTC, written the way a person reads it ("UTC−03:00" for Etc/GMT+3)."""
    try:
        return utc_offset_label(zone_name)
    except (KeyError, ValueError):
        return ""


@register.filter
def display_zone(game, user) -> str:
    """The zone name ``user`` reads ``game``'s times in: their own display zone, else the game's
    (``kernel.timezones.display_zone_name``); ``game`` may be a Game or a zone name."""
    return display_zone_name(user, game)


@register.filter
def when(moment, fmt: str = "DATETIME_FORMAT") -> str:
    """``moment`` (aware) in the active time zone (``{% timezone %}``) formatted with ``fmt`` and followed by the
    zone's abbreviation; "" for None."""
    if moment is None or moment == "":
        return ""
    local = timezone.localtime(moment)
    return f"{date_format(local, fmt)} {local.tzname()}"


@register.filter
def in_zone(moment, zone_name: str) -> str:
    """``moment`` (aware) in ``zone_name`` with the zone's abbreviation ("2026-11-20 23:00 MSK"); "" for None."""
    if moment is None or moment == "":
        return ""
    return zoned_time(moment, zone_name, "Y-m-d H:i")
