"""Forms of game pages."""
from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from kernel.errors import InvalidInput
from kernel.form_fields import (
    AccessedChoiceField,
    IdField,
    ObjectChoiceField,
)
from kernel.timezones import TimeZoneField

WALL_CLOCK_FORMATS = ("%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M")

class _PickForm(forms.Form):
    def __init__(self, data, *, name, queryset, required):
        super().__init__(data)
        self.fields[name] = ObjectChoiceField(queryset, required=required)


def pick(data, name: str, queryset, *, required: bool = True):
    """The object of ``queryset`` posted as field ``name`` of ``data`` (a QueryDict), through a Django form.

    Returns the object, or None when the field is empty and not ``required``. Raises ``InvalidInput`` with the
    field's readable error for a missing, malformed or unknown id (the view answers 400 and changes nothing).
    """
    form = _PickForm(data, name=name, queryset=queryset, required=required)
    if not form.is_valid():
        raise InvalidInput("; ".join(str(e) for e in form.errors[name]))
    return form.cleaned_data[name]


def wall_clock_to_utc(naive: datetime, zone: ZoneInfo) -> datetime:
    """The aware UTC instant of the wall-clock time ``naive`` in ``zone`` (game times are given in the
    game's zone). Raises ``ValidationError`` for a time that does not exist (skipped by a clock change) or is
    ambiguous (repeated by one), rather than guessing."""
    first = naive.replace(tzinfo=zone, fold=0)
    second = naive.replace(tzinfo=zone, fold=1)
    if first.utcoffset() != second.utcoffset():
        as_utc = first.astimezone(UTC)
        if as_utc.astimezone(zone).replace(tzinfo=None) != naive:
            raise ValidationError(_("This time does not exist in %(tz)s (the clocks skip it)."), params={"tz": zone.key})
        raise ValidationError(_("This time happens twice in %(tz)s (the clocks go back); choose another."),
                              params={"tz": zone.key})
    return first.astimezone(UTC)


class WallClockField(forms.Field):
    """A date and time typed as on a wall clock (``YYYY-MM-DDTHH:MM``), with no offset; ``clean`` returns a naive
    datetime that the form interprets in the game's zone. Offsets, seconds and other formats are refused."""

    widget = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")
    default_error_messages = {"invalid": _("Enter a date and time as YYYY-MM-DD HH:MM.")}

    def to_python(self, value):
        if value in self.empty_values:
            return None
        if isinstance(value, datetime):
            return value.replace(tzinfo=None)
        for fmt in WALL_CLOCK_FORMATS:
            try:
                # A wall-clock reading, naive by design: the form makes it aware in the game's zone
                # (``wall_clock_to_utc``), never in the server's.
                return datetime.strptime(str(value).strip(), fmt)  # noqa: DTZ007
            except ValueError:
                continue
        raise ValidationError(self.error_messages["invalid"], code="invalid")


class SchedulePostForm(forms.Form):
    """The Procurator's scheduled announcement: title, Markdown text and a publication time given in the
    game's time zone (converted to aware UTC with ``zoneinfo``); the service checks it lies in the future."""

    title = forms.CharField(label=_("Title"), max_length=200)
    body = forms.CharField(label=_("Text"), widget=forms.Textarea(attrs={"rows": 8}))
    publish_at = WallClockField(label=_("Publish at"))

    def __init__(self, *args, time_zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = ZoneInfo(time_zone)
        self.fields["publish_at"].help_text = _("Time in the game's time zone (%(tz)s).") % {"tz": time_zone}

    def clean_publish_at(self) -> datetime:
        """Interpret the entered wall-clock time in the game's zone; return an aware UTC datetime."""
        try:
            return wall_clock_to_utc(self.cleaned_data["publish_at"], self.zone)
        except OverflowError:
            raise ValidationError(_("This date is out of range.")) from None


class NewGameForm(forms.Form):
    """A new game of cities (of the default ruleset): its title and address, rules, time zone, how the cities are
    formed and when the day starts (a wall-clock time in the game's zone). ``do_create_game`` checks it again."""

    title = forms.CharField(label=_("Title"), max_length=200)
    slug = forms.SlugField(label=_("Address"), max_length=60, help_text=_("Latin letters, digits and dashes."))
    rules_text = forms.CharField(label=_("Rules and announcement"), widget=forms.Textarea(attrs={"rows": 8}),
                                 required=False)
    time_zone = TimeZoneField(label=_("Time zone"), initial="Europe/Moscow")
    city_count = IdField(label=_("Number of cities"), min_value=1, max_value=20, required=False,
                                    help_text=_("Leave empty to form cities of the target size."))
    city_size = IdField(label=_("Target city size"), min_value=2, max_value=200, initial=20)
    day_start = forms.TimeField(label=_("Day start"), initial="10:00", widget=forms.TimeInput(attrs={"type": "time"}),
                                help_text=_("Time in the game's time zone."))


class RecruitmentPostForm(forms.Form):
    """The recruitment post: both fields optional (defaults: the game's title and rules)."""

    title = forms.CharField(label=_("Title"), max_length=200, required=False)
    body = forms.CharField(label=_("Text"), widget=forms.Textarea(attrs={"rows": 6}), required=False)


class FormCitiesForm(forms.Form):
    """City names for the automatic split, one per line (optional)."""

    names = forms.CharField(label=_("City names, one per line"), widget=forms.Textarea(attrs={"rows": 3}),
                            required=False)


class MoveSignupForm(forms.Form):
    """Put a signed-up player into a city by hand: one of the game's sign-ups and one of its cities, each a
    legal choice resolved through the access policy (``signup_access``, ``city_access``: an id to its object,
    raising ``Http404`` for a bad one, as ``kernel.form_fields.AccessedChoiceField`` says)."""

    signup = AccessedChoiceField(label=_("Player"), access=None)
    city = AccessedChoiceField(label=_("City"), access=None)

    def __init__(self, *args, signups=(), cities=(), signup_access=None, city_access=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["signup"].choices = [(s.public_id, s.user.public_name) for s in signups]
        self.fields["city"].choices = [(c.public_id, c.name) for c in cities]
        self.fields["signup"].access, self.fields["city"].access = signup_access, city_access


class AppointStaffForm(forms.Form):
    """Appoint a staff member by account name; a city's role (a Tribune, say) needs a city. ``kinds``: the
    (value, label) choices of the roles the game's ruleset appoints this way; ``city_roles``: the labels of its
    city's roles (``staff_labels(game, "city_staff_kinds")``), named by the city field's label."""

    kind = forms.ChoiceField(label=_("Role"), choices=())
    username = forms.CharField(label=_("Account (user name)"), max_length=150)
    city = AccessedChoiceField(label=_("City (for a city's role)"), required=False, access=None)

    def __init__(self, *args, kinds=(), cities=(), city_access=None, city_roles=(), **kwargs):
        super().__init__(*args, **kwargs)
        if city_roles:
            self.fields["city"].label = _("City (for the role %(roles)s)") % {"roles": ", ".join(city_roles)}
        self.fields["kind"].choices = list(kinds)
        self.fields["city"].choices = [("", "—"), *[(c.public_id, c.name) for c in cities]]
        self.fields["city"].access = city_access
