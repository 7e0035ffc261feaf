"""Forms of game pages."""
from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from kernel.timezones import TimeZoneField

WALL_CLOCK_FORMATS = ("%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M")

#: A whole number as a client may type it: ASCII digits only (Python's ``int`` would also read '٣' as 3), at most
#: 18 of them so that it always fits a bigint.
_ASCII_INTEGER = re.compile(r"-?[0-9]{1,18}")


def _well_formed_key(value, key: str) -> bool:
    """True when ``value`` has the shape of the ``key`` column: a public id, or a database id in ASCII digits."""
    from kernel.public_ids import is_public_id

    if key == "public_id":
        return is_public_id(value)
    return isinstance(value, (str, int)) and _ASCII_INTEGER.fullmatch(str(value)) is not None


def _default_key(queryset, to_field_name):
    """``public_id`` for models that have one (their database id never reaches a page), else ``to_field_name``."""
    if to_field_name is None and queryset is not None \
            and any(f.name == "public_id" for f in queryset.model._meta.concrete_fields):
        return "public_id"
    return to_field_name


class IdempotencyKeyField(forms.RegexField):
    """The hidden key of one rendering of a form that creates something (``kernel.public_ids``): a fresh key per
    page, posted back with the form, so the service stores one object however often the form is re-submitted
    (a double click, a network retry). Optional: a client without it simply gets no deduplication."""

    def __init__(self, **kwargs):
        from kernel.public_ids import IDEMPOTENCY_KEY_REGEX, new_idempotency_key

        kwargs.setdefault("required", False)
        kwargs.setdefault("widget", forms.HiddenInput)
        kwargs.setdefault("initial", new_idempotency_key)
        kwargs.setdefault("error_messages", {"invalid": _("This form is out of date: reload the page.")})
        super().__init__(IDEMPOTENCY_KEY_REGEX, **kwargs)


class IdField(forms.IntegerField):
    """A whole number typed in ASCII digits and within a bigint (a city number, a day): '²', '٣', '1.5' and a
    number of 19 digits or more are the field's "invalid" error, never a database error."""

    default_error_messages = {"invalid": _("Enter a whole number.")}

    def to_python(self, value):
        if value in self.empty_values:
            return None
        text = str(value).strip()
        if _ASCII_INTEGER.fullmatch(text) is None:
            raise ValidationError(self.error_messages["invalid"], code="invalid")
        return int(text)


class _ObjectKey:
    """Choose by ``public_id`` when the queryset's model has one, also when the queryset is set after creation
    (forms that narrow it in ``__init__``), unless a ``to_field_name`` is given."""

    def __init__(self, queryset=None, *, to_field_name=None, **kwargs):
        self._auto_key = to_field_name is None
        super().__init__(queryset, to_field_name=to_field_name, **kwargs)
        if self._auto_key:
            self.to_field_name = _default_key(self.queryset, None)

    def _set_queryset(self, queryset):
        super()._set_queryset(queryset)
        if getattr(self, "_auto_key", False):
            self.to_field_name = _default_key(self.queryset, None)

    queryset = property(forms.ModelChoiceField._get_queryset, _set_queryset)


class PublicIdFormField(forms.CharField):
    """An opaque public id (``kernel.public_ids``) typed in a form: anything of another shape is the field's
    "invalid" error; whether it names an object the viewer may use is the view's or the service's question."""

    default_error_messages = {"invalid": _("Select a valid choice. That choice is not one of the available choices.")}

    def to_python(self, value):
        from kernel.public_ids import is_public_id

        value = super().to_python(value)
        if value in self.empty_values:
            return value
        if not is_public_id(value):
            raise ValidationError(self.error_messages["invalid"], code="invalid")
        return value


class ObjectChoiceField(_ObjectKey, forms.ModelChoiceField):
    """One object of ``queryset``, posted by its public id (or, for a model without one, its database id).

    Anything that is not of the key's shape (a malformed, huge, fractional or non-ASCII id) and any id outside
    ``queryset`` is the same "invalid_choice" error: a form never tells a forbidden object from a missing one.
    """

    def to_python(self, value):
        if value in self.empty_values:
            return None
        if not _well_formed_key(value, self.to_field_name or "pk"):
            raise ValidationError(self.error_messages["invalid_choice"], code="invalid_choice")
        return super().to_python(value)


class ObjectMultipleChoiceField(_ObjectKey, forms.ModelMultipleChoiceField):
    """Several objects of ``queryset`` by public id (or database id), with ``ObjectChoiceField``'s checks."""

    def _check_values(self, value):
        key = self.to_field_name or "pk"
        for item in value:
            if not _well_formed_key(item, key):
                raise ValidationError(self.error_messages["invalid_choice"], code="invalid_choice",
                                      params={"value": str(item)[:40]})
        return super()._check_values(value)


class _PickForm(forms.Form):
    def __init__(self, data, *, name, queryset, required):
        super().__init__(data)
        self.fields[name] = ObjectChoiceField(queryset, required=required)


def pick(data, name: str, queryset, *, required: bool = True):
    """The object of ``queryset`` posted as field ``name`` of ``data`` (a QueryDict), through a Django form.

    Returns the object, or None when the field is empty and not ``required``. Raises ``InvalidInput`` with the
    field's readable error for a missing, malformed or unknown id (the view answers 400 and changes nothing).
    """
    from .errors import InvalidInput

    form = _PickForm(data, name=name, queryset=queryset, required=required)
    if not form.is_valid():
        raise InvalidInput("; ".join(str(e) for e in form.errors[name]))
    return form.cleaned_data[name]


def wall_clock_to_utc(naive: datetime, zone: ZoneInfo) -> datetime:
    """The aware UTC instant of the wall-clock time ``naive`` in ``zone`` (L-DAY-1: game times are given in the
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
    """A new Lepra game (issue 3 item 1): its title and address, rules, time zone, how the cities are formed and
    when the day starts (a wall-clock time in the game's zone, L-DAY-1). ``do_create_game`` checks it again."""

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
    """The recruitment post (L-POST-1): both fields optional (defaults: the game's title and rules)."""

    title = forms.CharField(label=_("Title"), max_length=200, required=False)
    body = forms.CharField(label=_("Text"), widget=forms.Textarea(attrs={"rows": 6}), required=False)


class FormCitiesForm(forms.Form):
    """City names for the automatic split, one per line (optional)."""

    names = forms.CharField(label=_("City names, one per line"), widget=forms.Textarea(attrs={"rows": 3}),
                            required=False)


class MoveSignupForm(forms.Form):
    """Put a signed-up player into a city by hand (ids checked by the view against the game)."""

    signup = IdField(label=_("Player"))
    city = IdField(label=_("City"))


class AppointStaffForm(forms.Form):
    """Appoint a staff member by account name (L-STAFF-1); a Tribune needs a city."""

    kind = forms.ChoiceField(label=_("Role"), choices=[("tribune", _("Tribune")), ("arbiter", _("Supreme Arbiter")),
                                                       ("consigliere", _("Consigliere"))])
    username = forms.CharField(label=_("Account (user name)"), max_length=150)
    city = IdField(label=_("City (for a Tribune)"), required=False)
