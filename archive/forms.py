"""Forms of the archive and notification pages."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from kernel.form_fields import AccessedObjectField
from kernel.timezones import TimeZoneField

from .models import Channel, NotificationKind


class ConsentForm(forms.Form):
    """A consent button of the consents page: the inbox, by public id, resolved by ``access`` (the
    access policy's ``access_inbox_by_id`` for the viewer: a bad id is its 404)."""

    inbox = AccessedObjectField()

    def __init__(self, *args, access, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["inbox"].access = access


class NotificationSettingsForm(forms.Form):
    """A person's display zone (blank: each game's own zone) and a ``Channel`` per ``NotificationKind`` (a field
    named by the kind)."""

    time_zone = TimeZoneField(label=_("Your time zone"), required=False,
                              help_text=_("Every time on the site, in notifications and in e-mails is shown in "
                                          "this zone. Leave it empty to see each game's times in its own zone."))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for kind in NotificationKind:
            self.fields[kind.value] = forms.ChoiceField(label=kind.label, choices=Channel.choices)

    def channels(self) -> dict[str, str]:
        """The chosen channel of each kind (after ``is_valid()``)."""
        return {kind.value: self.cleaned_data[kind.value] for kind in NotificationKind}


class TimelineFilterForm(forms.Form):
    """The timeline's filters (GET): a city of the game by number and an inbox kind, each "all" when empty. A value
    outside the choices is the field's error, shown in the form, and that filter is left off."""

    city = forms.TypedChoiceField(label=_("City"), required=False, coerce=int, empty_value=None)
    kind = forms.ChoiceField(label=_("Inbox kind"), required=False)

    def __init__(self, *args, cities, kinds, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["city"].choices = [("", _("all")), *[(c.number, c.name) for c in cities]]
        self.fields["kind"].choices = [("", _("all")), *kinds]

    def filters(self) -> tuple[int | None, str | None]:
        """(city number or None, inbox kind or None) of the valid fields; a field in error filters nothing."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return data.get("city") or None, data.get("kind") or None


class MarkAllReadForm(forms.Form):
    """The explicit "mark all read" of the notifications page (no fields: the button is the choice)."""
