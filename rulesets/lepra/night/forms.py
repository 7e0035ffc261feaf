"""Forms of Lepra's night page: decisions, targets, gifts (L-NIGHT) and the early end (L-WIN-3)."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from kernel.form_fields import AccessedChoiceField, IdField, PublicIdFormField


class NightActionForm(forms.Form):
    """A night action posted from outside the pickers the page shows the viewer (L-NIGHT): ``city`` and
    ``to_city`` (city numbers), ``target`` (a resident's public id, empty = "no kill"), ``kind`` and ``text`` as
    the action needs. Only the shapes are checked here; the action's service refuses what the viewer may not do."""

    city = IdField(required=False, min_value=1)
    to_city = IdField(required=False, min_value=1)
    target = PublicIdFormField(required=False)
    kind = forms.ChoiceField(required=False, choices=[("", ""), ("gift", "gift"), ("fish", "fish")])
    text = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))


class NightTargetForm(forms.Form):
    """One resident picker of the night page (L-NIGHT): a godfather vote or appointment, a kill, a touring kill,
    a commissar check. ``choices`` are the legal targets (Residents) the page offers; a posted id is resolved by
    ``access`` first (``AccessedChoiceField``). With ``none_label`` the empty choice means "no kill" and is legal."""

    target = AccessedChoiceField(access=None)

    def __init__(self, *args, label, choices, access, none_label=None, with_city=False, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["target"]
        field.label, field.access, field.required = label, access, none_label is None
        empty = [("", none_label)] if none_label is not None else [("", _("— choose a resident —"))]
        field.choices = [*empty, *[(r.public_id, f"{r.name} · {r.city.name}" if with_city else r.name)
                                  for r in choices]]


class GiftForm(forms.Form):
    """The Consigliere's gift or fish from one city's mafia to the touring city (L-NIGHT): the sending city and the
    toured city by number among the legal ones, the kind and the text."""

    city = forms.TypedChoiceField(label=_("From"), coerce=int)
    to_city = forms.TypedChoiceField(label=_("To"), coerce=int)
    kind = forms.ChoiceField(label=_("Kind"), choices=[("gift", _("gift")), ("fish", _("fish"))],
                             widget=forms.RadioSelect, initial="gift")
    text = forms.CharField(label=_("Text"), required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, cities, toured, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["city"].choices = [(c.number, c.name) for c in cities]
        self.fields["to_city"].choices = [(c.number, c.name) for c in toured]


class EndGameForm(forms.Form):
    """The Procurator's early end of the game (L-WIN-3): the reason, recorded and shown."""

    reason = forms.CharField(label=_("Reason"), max_length=2000, widget=forms.Textarea(attrs={"rows": 3}))
