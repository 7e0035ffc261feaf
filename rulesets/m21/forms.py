"""Forms of the M21 pages: a new game, its timing, co-hosts, the setup table, the deal, the day's host and Judge
actions. The services check everything again; the forms turn request data into typed values."""
from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from cities.forms import WallClockField
from inboxes.access import access_resident_by_id
from kernel.form_fields import AccessedChoiceField
from kernel.timezones import TimeZoneField

from .roles import CITIZEN, GOON, MAFIA_POWER_ROLES, ROLES, TOWN_POWER_ROLES
from .setup import MAX_PLAYERS


class NewM21GameForm(forms.Form):
    """A new M21 game (M-SETUP-1/2): title, address, time zone, phase lengths and shift, the vote rules."""

    title = forms.CharField(max_length=200)
    slug = forms.SlugField(label="Address", max_length=60, help_text="Latin letters, digits and dashes.")
    time_zone = TimeZoneField(label="Time zone", initial="Europe/London")
    day_hours = forms.IntegerField(label="Day length (hours)", min_value=1, max_value=168, initial=48)
    night_hours = forms.IntegerField(label="Night length (hours)", min_value=1, max_value=168, initial=24)
    phase_shift = forms.TimeField(label="Phase shift", initial="22:00", widget=forms.TimeInput(attrs={"type": "time"}),
                                  help_text="Wall-clock time in the game's time zone.")
    vote_preset = forms.ChoiceField(label="Vote rules", initial="m21", choices=[
        ("m21", "M21: ##END hammer, plurality at the deadline"),
        ("classic", "Classic forum: a majority ends the day at once")])
    self_votes_allowed = forms.BooleanField(label="Self-votes allowed", required=False, initial=True)
    no_lynch_allowed = forms.BooleanField(label="No Lynch allowed", required=False, initial=True)
    game_thread_public = forms.BooleanField(
        label="Public game thread", required=False, initial=True,
        help_text="Anyone, logged in or not, reads the game thread during the game, as a forum thread. "
                  "Untick to keep it to the players, the hosts and the spectators.")


class TimingForm(forms.Form):
    """Phase lengths and shift before the deal (M-SETUP-2)."""

    day_hours = forms.IntegerField(label="Day length (hours)", min_value=1, max_value=168)
    night_hours = forms.IntegerField(label="Night length (hours)", min_value=1, max_value=168)
    phase_shift = forms.TimeField(label="Phase shift", widget=forms.TimeInput(attrs={"type": "time"}))


class CohostForm(forms.Form):
    """A co-host by their display name (M-SETUP-4)."""

    name = forms.CharField(label="Co-host's name", max_length=150)

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        user = get_user_model().objects.filter(display_name__iexact=name, is_active=True).first() or \
            get_user_model().objects.filter(username__iexact=name, is_active=True).first()
        if user is None:
            raise forms.ValidationError("No account has this name.")
        return user


class SetupTableForm(forms.Form):
    """The setup as a table of counts (M-SETUP-1): citizens and goons 0..60, each power role 0 or 1, and the chance
    of an insane cop in percent (M-ROLE-1)."""

    cop_insanity_percent = forms.IntegerField(label="Chance of an insane cop (%)", min_value=0, max_value=100,
                                              initial=0)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key in (CITIZEN.key, *TOWN_POWER_ROLES, GOON.key, *MAFIA_POWER_ROLES):
            role = ROLES[key]
            most = MAX_PLAYERS if key in (CITIZEN.key, GOON.key) else 1
            self.fields[f"role_{key}"] = forms.IntegerField(
                label=f"{role.name} ({role.alignment}, {role.setup_count})", min_value=0, max_value=most, initial=0,
                help_text=role.summary)

    def counts(self) -> dict[str, int]:
        return {name.removeprefix("role_"): value for name, value in self.cleaned_data.items()
                if name.startswith("role_") and value}


class DrawSetupForm(forms.Form):
    """"Let the site draw" a legal setup for the players signed up (M-SETUP-1)."""

    cop_insanity_percent = forms.IntegerField(label="Chance of an insane cop (%)", min_value=0, max_value=100,
                                              initial=0)


class DealForm(forms.Form):
    """When day 1 starts once the roles are dealt: a wall-clock time (naive), which the view reads in the game's zone."""

    first_day_starts_at = WallClockField(label="Day 1 starts at (game's time zone)")


class ExtendForm(forms.Form):
    """The host extends the current phase (M-SETUP-2)."""

    hours = forms.IntegerField(min_value=1, max_value=72, initial=24)


#: The casting vote's choice of no lynch (the other choices are players' public ids).
NO_LYNCH = "no_lynch"


class CastingVoteForm(forms.Form):
    """The Judge's casting vote: a living player of ``game`` (by public id, resolved through the access policy for
    ``user``: a malformed or foreign id is the 404 of a missing player) or No Lynch (M-ROLE judge)."""

    target = AccessedChoiceField(label="Candidate", access=None)

    def __init__(self, *args, game, user, candidates=(), **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["target"]
        field.access = lambda value: None if value == NO_LYNCH else access_resident_by_id(user, value, game=game)
        field.choices = [(NO_LYNCH, "No Lynch"), *[(r.public_id, r.name) for r in candidates]]


class DayPickForm(forms.Form):
    """The game page's pickers of a day action (RULES.md M-ITEM-1 gun, M-ROLE item cop and coroner): ``target`` one
    of ``targets`` (players' names the page offers, ``role_services.day_actions_for``) and, to confiscate, ``item``
    one of ``items`` (the target is then fixed: a hidden field). Any other value is the field's error."""

    target = forms.ChoiceField(label="Target")
    item = forms.ChoiceField(label="Item", required=False)

    def __init__(self, *args, targets, label="Target", items=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target"].choices = [(name, name) for name in targets]
        self.fields["target"].label = label
        if items is None:
            del self.fields["item"]
        else:
            self.fields["target"].widget = forms.HiddenInput()
            self.fields["item"].choices = [(item, item) for item in items]
            self.fields["item"].required = True
            self.fields["item"].label = label


def day_pick_forms(offers: dict, data=None) -> dict:
    """The game page's ``DayPickForm`` of each pick action ``offers`` holds (``day_actions_for``): "gun" and
    "post_mortem" one form each, "confiscate" a list of (name, form), one per player with found items; bound to
    ``data`` when given. Element ids are per form."""
    out: dict = {}
    if offers.get("gun"):
        out["gun"] = DayPickForm(data, targets=offers["gun"], label="Shoot", auto_id="id_gun_%s")
    if offers.get("post_mortem"):
        out["post_mortem"] = DayPickForm(data, targets=offers["post_mortem"], label="Post mortem of",
                                         auto_id="id_post_mortem_%s")
    if offers.get("confiscate"):
        out["confiscate"] = [
            (name, DayPickForm(data, targets=[name], items=items, label=f"Confiscate from {name}",
                               auto_id=f"id_confiscate_{i}_%s", initial={"target": name}))
            for i, (name, items) in enumerate(offers["confiscate"].items())]
    return out


class DayActionForm(forms.Form):
    """A day action of a role or an item (RULES.md M-ROLE, M-ITEM-1): ``target`` a player's name, ``item`` an item
    key, ``text`` the words of an extra or of the busted-out prisoner's message; each action reads what it needs and
    the services check every field again."""

    target = forms.CharField(max_length=60, required=False)
    item = forms.CharField(max_length=20, required=False)
    text = forms.CharField(max_length=1000, required=False, widget=forms.Textarea(attrs={"rows": 2}))
