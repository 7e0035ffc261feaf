"""IANA time zones for people: the choices a zone picker offers, labelled with their UTC offset, and the form
field that accepts only those. The ``Etc/GMT±N`` zones are left out (their sign is the opposite of what they
read: ``Etc/GMT+3`` is UTC−3); UTC stays."""
from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

from django import forms
from django.conf import settings
from django.utils.formats import date_format
from django.utils.translation import gettext_lazy as _


def utc_offset_label(zone_name: str, at: datetime | None = None) -> str:
    """``"UTC+03:00"`` for ``zone_name`` at ``at`` (aware; default now): the offset a person can read."""
    offset = datetime.now(UTC).astimezone(ZoneInfo(zone_name)).utcoffset() if at is None \
        else at.astimezone(ZoneInfo(zone_name)).utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "+" if minutes >= 0 else "−"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


@lru_cache(maxsize=1)
def time_zone_names() -> tuple[str, ...]:
    """Every IANA zone a person may pick, sorted by name (no ``Etc/`` zones but UTC, no legacy aliases)."""
    names = {n for n in available_timezones()
             if "/" in n and not n.startswith(("Etc/", "SystemV/", "US/", "posix/", "right/"))}
    return tuple(sorted(names | {"UTC"}))


def time_zone_choices(at: datetime | None = None) -> list[tuple[str, str]]:
    """``(name, "Europe/Moscow (UTC+03:00)")`` pairs for a picker, by name; offsets as of ``at`` (aware; default
    now), exact to the minute: zones change their offset on a whole minute, so the list is computed once per
    minute (about 600 zones: rendering a picker must not load every zone file again)."""
    minute = (at or datetime.now(UTC)).astimezone(UTC).replace(second=0, microsecond=0)
    return list(_time_zone_choices_at(minute))


@lru_cache(maxsize=1)
def _time_zone_choices_at(minute: datetime) -> tuple[tuple[str, str], ...]:
    return tuple((n, f"{n.replace('_', ' ')} ({utc_offset_label(n, minute)})") for n in time_zone_names())


class TimeZoneInput(forms.TextInput):
    """A text box with the zones as suggestions (``<datalist>``): type "Mos" and pick Europe/Moscow. No script."""

    template_name = "kernel/widgets/time_zone.html"

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        context["widget"]["attrs"]["list"] = f"{context['widget']['attrs'].get('id', name)}-zones"
        context["widget"]["attrs"].setdefault("autocomplete", "off")
        context["zones"] = time_zone_choices()
        return context


class TimeZoneField(forms.CharField):
    """An IANA zone name from ``time_zone_names()``; anything else is refused with a message naming the format."""

    widget = TimeZoneInput
    default_error_messages = {
        "unknown": _("Unknown time zone “%(value)s”: pick one from the list, e.g. Europe/Moscow or Europe/London."),
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 64)
        super().__init__(**kwargs)

    def clean(self, value):
        value = super().clean(value)
        if value and value not in time_zone_names():
            raise forms.ValidationError(self.error_messages["unknown"], code="unknown", params={"value": value})
        return value


def zone_abbreviation(at: datetime, zone_name: str) -> str:
    """The abbreviation of ``zone_name`` at ``at`` (aware): "MSK", "CET", "GMT"; zones without letters give their
    offset ("+04"), UTC gives "UTC"."""
    return at.astimezone(ZoneInfo(zone_name)).tzname() or zone_name


def zoned_time(at: datetime, zone_name: str, fmt: str = "DATETIME_FORMAT") -> str:
    """``at`` (aware) written in ``zone_name`` in the active language's ``fmt`` followed by the zone's
    abbreviation: "20 ноября 2026 г. 23:50 MSK"."""
    local = at.astimezone(ZoneInfo(zone_name))
    return f"{date_format(local, fmt)} {zone_abbreviation(at, zone_name)}"


def zoned_date(at: datetime, zone_name: str) -> str:
    """The date of ``at`` (aware) in ``zone_name``, in the active language's ``DATE_FORMAT``: "6 декабря 2026 г."."""
    return date_format(at.astimezone(ZoneInfo(zone_name)), "DATE_FORMAT")


def display_zone_name(user, game=None) -> str:
    """The zone ``user`` reads times in: their own display zone (``User.time_zone``) when they chose one, else
    ``game``'s zone (a Game or a zone name), else the site's ``TIME_ZONE``. Anonymous visitors read the game's."""
    own = getattr(user, "time_zone", "") if getattr(user, "is_authenticated", False) else ""
    if own and own in time_zone_names():
        return own
    if game is not None:
        return game if isinstance(game, str) else game.time_zone
    return settings.TIME_ZONE


def time_for(at: datetime, user, game=None, fmt: str = "DATETIME_FORMAT") -> str:
    """``at`` (aware) as ``user`` reads it: in their display zone (``display_zone_name(user, game)``; ``game`` a Game,
    a zone name or None) in the active language's ``fmt`` (a format name or a ``date`` format string such as
    ``"H:i"``) with the zone's abbreviation: "20.11 18:00 MSK"."""
    return zoned_time(at, display_zone_name(user, game), fmt)
