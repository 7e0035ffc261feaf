"""Forms of the M21 night page (RULES.md M-NIGHT-1, M-MAFIA-2): choices are built from what the seat may do now
(``night_pages.night_options``), so the page offers nothing else; the service checks again."""
from __future__ import annotations

from collections.abc import Sequence

from django import forms
from django.utils.translation import gettext_lazy as _

from . import items as item_data
from .night_pages import NightOption, target_order


class NightActionForm(forms.Form):
    """Submit one night action: ``option`` (one of the seat's ``options``, nothing else), ``target`` (a legal target
    of some option, ordered by ``night_pages.target_order`` with the seat's mafia ``partners`` last), ``item`` (for a
    delivery, a safecrack: the field exists only when some option takes an item)."""

    option = forms.ChoiceField(label=_("Action"))
    target = forms.ChoiceField(label=_("Target"), required=False)
    item = forms.ChoiceField(label=_("Item"), required=False)

    def __init__(self, *args, options: Sequence[NightOption], partners: Sequence[str] = (), **kwargs):
        super().__init__(*args, **kwargs)
        catalogue = item_data.item_catalogue()
        self.fields["option"].choices = [(o.key, o.label) for o in options]
        targets = sorted({t for o in options for t in o.targets}, key=lambda t: target_order(t, partners))
        self.fields["target"].choices = [("", "—")] + [(t, t) for t in targets]
        items = dict.fromkeys(i for o in options for i in o.items)
        if items:
            self.fields["item"].choices = [("", "—")] + [(i, catalogue[i].name) for i in items]
        else:
            del self.fields["item"]


class WithdrawForm(forms.Form):
    """Take back one standing submission: ``option`` "role" or ``use_item:<item>``, one of ``standing``."""

    option = forms.ChoiceField()

    def __init__(self, *args, standing: Sequence[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["option"].choices = [(g, g) for g in standing]


class StashForm(forms.Form):
    """The mafia's one stash item of the night (M-MAFIA-2): ``item`` to ``holder``; ``current`` (item, holder name)
    is tonight's assignment, shown selected."""

    item = forms.ChoiceField(label=_("Item"))
    holder = forms.ChoiceField(label=_("To"))

    def __init__(self, *args, stash: Sequence[str], mafia: Sequence[str], current: tuple[str, str] | None = None,
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["item"].choices = [(k, item_data.STASH_ITEMS[k].name) for k in stash]
        self.fields["holder"].choices = [(n, n) for n in mafia]
        if current is not None:
            self.initial.setdefault("item", current[0])
            self.initial.setdefault("holder", current[1])
