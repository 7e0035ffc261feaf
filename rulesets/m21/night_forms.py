"""Forms of the M21 night page (RULES.md M-NIGHT-1, M-MAFIA-2): choices are built from what the seat may do now
(``night_pages.night_options``), so the page offers nothing else; the service checks again."""
from __future__ import annotations

from collections.abc import Sequence

from django import forms
from django.utils.translation import gettext_lazy as _

from . import items as item_data
from .night_pages import NightOption


class NightActionForm(forms.Form):
    """Submit or withdraw one night action: ``option`` (an option key), ``target`` (a legal target of some option),
    ``item`` (for a delivery or a safecrack); ``withdraw`` takes back the standing one."""

    option = forms.ChoiceField(label=_("Action"))
    target = forms.ChoiceField(label=_("Target"), required=False)
    item = forms.ChoiceField(label=_("Item"), required=False)
    withdraw = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, options: Sequence[NightOption], **kwargs):
        super().__init__(*args, **kwargs)
        catalogue = item_data.item_catalogue()
        self.fields["option"].choices = [(o.key, o.label) for o in options] + [("role", _("My role action"))]
        targets = dict.fromkeys(t for o in options for t in o.targets)
        self.fields["target"].choices = [("", "—")] + [(t, t) for t in targets]
        items = dict.fromkeys(i for o in options for i in o.items)
        self.fields["item"].choices = [("", "—")] + [(i, catalogue[i].name) for i in items]


class StashForm(forms.Form):
    """The mafia's one stash item of the night (M-MAFIA-2): ``item`` to ``holder``."""

    item = forms.ChoiceField(label=_("Item"))
    holder = forms.ChoiceField(label=_("To"))

    def __init__(self, *args, stash: Sequence[str], mafia: Sequence[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["item"].choices = [(k, item_data.STASH_ITEMS[k].name) for k in stash]
        self.fields["holder"].choices = [(n, n) for n in mafia]
