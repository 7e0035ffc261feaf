"""Forms of the draw pages."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from cities.forms import IdField, PublicIdFormField


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


class NightActionForm(forms.Form):
    """One night action posted from the night page (L-NIGHT): ``action`` names the service; ``city`` (a city
    number), ``target`` (a resident's public id, empty = "no kill"), ``kind`` and ``text`` as that action needs. The
    services check everything else."""

    ACTIONS = ["open_election", "vote_godfather", "close_election", "appoint_godfather", "decide", "tour", "check",
               "gift"]

    action = forms.ChoiceField(choices=[(a, a) for a in ACTIONS])
    city = IdField(required=False, min_value=1)
    to_city = IdField(required=False, min_value=1)
    target = PublicIdFormField(required=False)
    kind = forms.ChoiceField(required=False, choices=[("", ""), ("gift", "gift"), ("fish", "fish")])
    text = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))


class EndGameForm(forms.Form):
    """The Procurator's early end of the game (L-WIN-3): the reason, recorded and shown."""

    reason = forms.CharField(label=_("Reason"), max_length=2000, widget=forms.Textarea(attrs={"rows": 3}))
