"""Forms of Lepra's setup draw pages: the Procurator's numbers (L-ASSIGN-2), the answer to a commissar offer (L-COMM-2)."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class MafiaNumbersForm(forms.Form):
    """The Procurator's numbers (L-ASSIGN-2): one text field per city, "3, 7, 12, 19"; checked by the service."""

    def __init__(self, *args, cities, **kwargs):
        super().__init__(*args, **kwargs)
        for city in cities:
            self.fields[f"city_{city.number}"] = forms.CharField(
                label=city.name, max_length=400, help_text=_("%(count)d distinct numbers from 1 to %(n)d.")
                % {"count": city.mafia_count, "n": city.population})


class AnswerOfferForm(forms.Form):
    """The candidate's answer to a commissar offer (L-COMM-2): "accept" or "decline", with an optional reason."""

    answer = forms.ChoiceField(choices=[("accept", "accept"), ("decline", "decline")])
    reason = forms.CharField(label=_("Reason (optional; the Procurator never sees it)"), required=False,
                             max_length=2000, widget=forms.Textarea(attrs={"rows": 3}))
