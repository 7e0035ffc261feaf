"""Form fields for ids a client posts (the kernel layer, used by every app's forms): whole numbers in ASCII digits
within a bigint, opaque public ids, objects chosen by their public id, and the idempotency key of a form that
creates something. A malformed, huge, fractional or non-ASCII id is a form error, never a database error."""
from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from kernel.public_ids import IDEMPOTENCY_KEY_REGEX, is_public_id, new_idempotency_key

#: A whole number as a client may type it: ASCII digits only (Python's ``int`` would also read '٣' as 3), at most
#: 18 of them so that it always fits a bigint.
_ASCII_INTEGER = re.compile(r"-?[0-9]{1,18}")


def well_formed_key(value, key: str) -> bool:
    """True when ``value`` has the shape of the ``key`` column: a public id, or a database id in ASCII digits."""
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
        kwargs.setdefault("required", False)
        kwargs.setdefault("widget", forms.HiddenInput)
        kwargs.setdefault("initial", new_idempotency_key)
        kwargs.setdefault("error_messages", {"invalid": _("This form is out of date: reload the page.")})
        # The whole value (``RegexField`` searches): a key of the shape inside a longer value is no key.
        super().__init__(re.compile(rf"\A(?:{IDEMPOTENCY_KEY_REGEX})\Z"), **kwargs)


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
        if not well_formed_key(value, self.to_field_name or "pk"):
            raise ValidationError(self.error_messages["invalid_choice"], code="invalid_choice")
        return super().to_python(value)


class ObjectMultipleChoiceField(_ObjectKey, forms.ModelMultipleChoiceField):
    """Several objects of ``queryset`` by public id (or database id), with ``ObjectChoiceField``'s checks."""

    def _check_values(self, value):
        key = self.to_field_name or "pk"
        for item in value:
            if not well_formed_key(item, key):
                raise ValidationError(self.error_messages["invalid_choice"], code="invalid_choice",
                                      params={"value": str(item)[:40]})
        return super()._check_values(value)


class AccessedChoiceField(forms.ChoiceField):
    """One of ``choices`` (pairs of public id and label), where the id is resolved first by ``access``: a callable
    taking the posted value and returning the object, raising ``Http404`` for a malformed, missing or forbidden
    id (an ``inboxes.access.access_<noun>_by_id`` bound to the viewer and the page). So a bad id in this field is
    the same 404 as in every other id field of the page (a form never tells a forbidden object from a
    missing one), and only a real object that is not among the legal choices is the field's "invalid_choice"
    error (a 400 that re-renders the form). An empty value is the "required" error. Cleans to the public id."""

    def __init__(self, *, access, **kwargs):
        super().__init__(**kwargs)
        self.access = access

    def validate(self, value):
        if value not in self.empty_values:
            self.access(value)  # raises Http404, before a choice is compared: as the page's other id fields
        super().validate(value)


class AccessedObjectField(forms.CharField):
    """A hidden field naming one object by its id (a button's object on a page: a declaration to confirm, a
    request to accept), cleaned to the object by ``access``: a callable taking the posted value and returning the
    object, raising ``Http404`` for an empty, malformed, missing or forbidden id (an
    ``inboxes.access.access_<noun>_by_id`` bound to the viewer and the page). So every bad id is the page's one
    404, never a form error that would tell a forbidden object from a missing one. The form sets
    ``access`` when it is built for a request."""

    widget = forms.HiddenInput

    def __init__(self, *, access=None, **kwargs):
        kwargs["required"] = False  # an empty id is the access function's 404, as any other bad id
        super().__init__(**kwargs)
        self.access = access

    def clean(self, value):
        return self.access(super().clean(value))
