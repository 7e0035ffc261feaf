"""Forms of the Lepra day pages."""
from __future__ import annotations

from zoneinfo import ZoneInfo

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from cities.forms import WallClockField, wall_clock_to_utc
from kernel.form_fields import AccessedChoiceField, AccessedObjectField, ObjectChoiceField

from rulesets.lepra.models import CourtProcedure


class NomineeForm(forms.Form):
    """Choose a resident (nomination, L-NOM-1; proxy request, L-NOM-6) among ``choices`` (Residents). Nothing is
    chosen in advance (not even oneself): an empty choice is refused as a missing field."""

    nominee = forms.ChoiceField(label=_("Nominee"))

    def __init__(self, *args, choices, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["nominee"].choices = [("", _("— choose a resident —"))] + [(r.public_id, r.name) for r in choices]


class NominationForm(NomineeForm):
    """The nomination of a resident for today (L-NOM-1..3)."""


class ProxyRequestForm(NomineeForm):
    """A request for a proxy vote for a nominee (L-NOM-6)."""


class AccessedObjectForm(forms.Form):
    """A button's form naming one object by a hidden id (``kernel.form_fields.AccessedObjectField``): ``access``
    resolves it for the viewer (a bad id is its 404). Subclasses declare the one field."""

    def __init__(self, *args, access, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.access = access


class ConfirmSuicideForm(AccessedObjectForm):
    """The Tribune's confirmation of one suicide declaration of the city (L-NOM-5)."""

    declaration = AccessedObjectField()


class AcceptProxyForm(AccessedObjectForm):
    """The Tribune's acceptance of one proxy vote request of the city (L-NOM-6)."""

    proxy = AccessedObjectField()


class ConfirmRemovalForm(AccessedObjectForm):
    """A resident's confirmation of one demand to remove the city's judge (L-JUDGE-8)."""

    demand = AccessedObjectField()


class ResidentChoiceForm(forms.Form):
    """Choose one of ``choices`` (Residents) by public id; nothing chosen in advance. Subclasses name the field and
    its label: a judge's court vote (L-COURT-2), the Procurator's execution decision (L-VOTE-7). With ``access``
    (a callable from a posted id to its Resident raising ``Http404``, ``kernel.form_fields.AccessedChoiceField``)
    a malformed or unknown id is that 404 and only a real resident outside ``choices`` is a form error."""

    field_name = "resident"
    label = _("Resident")
    widget = forms.Select

    def __init__(self, *args, choices, access=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.residents = {r.public_id: r for r in choices}
        options = [(r.public_id, r.name) for r in choices]
        if self.widget is forms.Select:
            options = [("", _("— choose a resident —")), *options]
        if access is None:
            field = forms.ChoiceField(label=self.label, choices=options, widget=self.widget)
        else:
            field = AccessedChoiceField(label=self.label, choices=options, widget=self.widget, access=access)
        self.fields[self.field_name] = field

    def chosen(self):
        """The chosen Resident (call after ``is_valid()``)."""
        return self.residents[self.cleaned_data[self.field_name]]


class CourtVoteForm(ResidentChoiceForm):
    """A sitting judge confirms one of the candidates before the court (L-COURT-2): radio buttons, one per
    candidate, nothing chosen in advance."""

    field_name = "choice"
    label = _("Confirm the sentence of")
    widget = forms.RadioSelect


class ExecutionDecisionForm(ResidentChoiceForm):
    """The Procurator names the executed when the day's voting decided nothing (L-VOTE-7)."""

    field_name = "resident"
    label = _("The executed")


class CandidateForm(ResidentChoiceForm):
    """A resident proposes a judge candidate of their city (L-JUDGE-3) among the legal ``choices``."""

    field_name = "candidate"
    label = _("Propose a candidate")


class SpeechRequestForm(forms.Form):
    """A request for a confrontation or a last word (L-INBOX-19): optionally the other resident, one of ``choices``
    (the residents the nomination page offers; any other value, a malformed id included, is the field's error, as
    on the page's nomination form) and a short note. The service says what each kind of request needs."""

    other = forms.ChoiceField(label=_("With"), required=False)
    note = forms.CharField(label=_("Note"), required=False, max_length=300)

    def __init__(self, *args, choices, **kwargs):
        super().__init__(*args, **kwargs)
        self.residents = {r.public_id: r for r in choices}
        self.fields["other"].choices = [("", "—"), *[(r.public_id, r.name) for r in choices]]

    def other_resident(self):
        """The chosen Resident or None (call after ``is_valid()``)."""
        return self.residents.get(self.cleaned_data["other"] or "")


class ScheduleVotingForm(forms.Form):
    """The Tribune's voting times, typed in the game's zone (L-DAY-3); the service checks the rules."""

    opens_at = WallClockField(label=_("Voting opens at"))
    closes_at = WallClockField(label=_("Voting closes at"))

    def __init__(self, *args, time_zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = ZoneInfo(time_zone)

    def clean(self):
        data = super().clean()
        for name in ("opens_at", "closes_at"):
            if data.get(name) is not None:
                try:
                    data[name] = wall_clock_to_utc(data[name], self.zone)
                except ValidationError as exc:
                    self.add_error(name, exc)
                except OverflowError:
                    self.add_error(name, _("This date is out of range."))
        return data


class ExtendVotingForm(forms.Form):
    """The new closing time of open voting, typed in the game's zone (L-DAY-3); the service checks the rules.
    The day page's and the console's."""

    closes_at = WallClockField(label=_("Voting closes at"))

    def __init__(self, *args, time_zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = ZoneInfo(time_zone)
        self.fields["closes_at"].help_text = _("Time in the game's time zone (%(tz)s).") % {"tz": time_zone}

    def clean_closes_at(self):
        try:
            return wall_clock_to_utc(self.cleaned_data["closes_at"], self.zone)
        except OverflowError:
            raise ValidationError(_("This date is out of range.")) from None


class CourtDeadlineForm(forms.Form):
    """The Arbiter's court deadline, typed in the game's zone (L-COURT-4)."""

    deadline = WallClockField(label=_("Court deadline"))

    def __init__(self, *args, time_zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = ZoneInfo(time_zone)

    def clean_deadline(self):
        try:
            return wall_clock_to_utc(self.cleaned_data["deadline"], self.zone)
        except OverflowError:
            raise ValidationError(_("This date is out of range.")) from None


class CourtProcedureForm(forms.Form):
    """The Arbiter's choice of how the court confirms a sentence (L-COURT-3)."""

    procedure = forms.ChoiceField(label=_("The court confirms a sentence by"), choices=CourtProcedure.choices,
                                  widget=forms.RadioSelect)


class JudgeElectionForm(ScheduleVotingForm):
    """The Arbiter's election times, typed in the game's zone (L-DAY-4); the service checks the rules."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["opens_at"].label = _("Election opens at")
        self.fields["closes_at"].label = _("Election closes at")


class RecusalForm(forms.Form):
    """When the Arbiter received a judge's resignation, typed in the game's zone (L-JUDGE-9)."""

    received_at = WallClockField(label=_("Resignation received at"))

    def __init__(self, *args, time_zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = ZoneInfo(time_zone)

    def clean_received_at(self):
        try:
            return wall_clock_to_utc(self.cleaned_data["received_at"], self.zone)
        except OverflowError:
            raise ValidationError(_("This date is out of range.")) from None


class ElectionProxyForm(forms.Form):
    """A proxy ballot the Arbiter records (L-JUDGE-6): a voter of the city, a candidate, the ballot."""

    voter = ObjectChoiceField(queryset=None, label=_("Voter"))
    candidate = ObjectChoiceField(queryset=None, label=_("Candidate"))
    ballot = forms.ChoiceField(label=_("Ballot"), choices=[("Он - Ганди!", "Он - Ганди!"),
                                                           ("Он - Гитлер!", "Он - Гитлер!")])

    def __init__(self, *args, voters, candidates, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["voter"].queryset = voters
        self.fields["candidate"].queryset = candidates
