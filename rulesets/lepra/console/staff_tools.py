"""Lepra's staff tools on the one staff console (``staff.console``): the Procurator's impeachment demands
(L-IMPEACH-1, L-IMPEACH-2: who signed is his to know; actions open the impeachment inbox and record a ruling) and
complaints of no confidence in the Arbiter or the Consigliere (L-IMPEACH-3), with their dashboard lines and links.
Same conventions as the engine's console pages: read-only, policy-scoped querysets, a whitelist of URL lookups, every
write one service call with ``acting_user=request.user``.

What must never leak here: who of the mafia complained about the Consigliere. A mafia complaint is listed as
"the mafia of city C" (the case stores no complainant), its inbox's memberships are not listed
(``secret_member_kinds``), its messages are the site's; nothing on these pages links to a resident.
"""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from cities.models import HOST_STAFF_KIND, StaffRole
from kernel.errors import RuleViolation
from staff.console import (
    Need,
    ScopedRelatedFilter,
    StaffScopedAdmin,
    action_page,
    bound_form,
    changelist_url,
    register_dashboard_links,
    register_dashboard_needs,
    role_game_ids,
    staff_admin_site,
)

from .. import no_confidence_services, staff_services
from ..models import ImpeachmentDemand, ImpeachmentRuling, NoConfidenceCase, NoConfidenceRuling, NoConfidenceTarget

_changelist = changelist_url


# --------------------------------------------------------------------------------------------------------------
# What needs the Procurator now
# --------------------------------------------------------------------------------------------------------------

@register_dashboard_needs(tool="impeachment")
def _procurator_impeachment_needs(request, role: StaffRole) -> list[Need]:
    if role.kind != HOST_STAFF_KIND:
        return []
    demands = (staff_admin_site._registry[ImpeachmentDemand].get_queryset(request)
               .filter(game=role.game, reached_at__isnull=False, ruled_at__isnull=True).count())
    return [Need("impeachment", _("Impeachment demands before you"), demands,
                 _changelist("lepra_impeachmentdemand", game=role.game))]


@register_dashboard_links(order=51, tool="impeachment")
def _impeachment_links(request, role: StaffRole) -> list[tuple[str, str]]:
    if role.kind != HOST_STAFF_KIND:
        return []
    return [(_("Impeachment demands"), _changelist("lepra_impeachmentdemand", game=role.game))]


# --------------------------------------------------------------------------------------------------------------
# Impeachment
# --------------------------------------------------------------------------------------------------------------

def _each(request, objects, call, success) -> None:
    for obj in objects:
        try:
            call(obj)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, success(obj))


@admin.action(description=gettext_lazy("Open the impeachment inbox"))
def open_impeachment_inboxes(modeladmin, request, queryset):
    """The Procurator opens the impeachment inbox (``do_open_impeachment_inbox``)."""
    _each(request, queryset.select_related("city"),
          lambda d: staff_services.do_open_impeachment_inbox(d, acting_user=request.user),
          lambda d: _("The impeachment inbox of %(city)s is open.") % {"city": d.city.name})


class RulingForm(forms.Form):
    """One of the four rulings; the new Tribune's username when replacing."""

    ruling = forms.ChoiceField(label=gettext_lazy("Ruling"), choices=ImpeachmentRuling.choices)
    username = forms.CharField(label=gettext_lazy("Username of the new Tribune (replacement only)"), max_length=150,
                               required=False)
    reason = forms.CharField(label=gettext_lazy("Reason"), widget=forms.Textarea(attrs={"rows": 3}), required=False)

    def clean_username(self):
        username = self.cleaned_data["username"].strip()
        if not username:
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise ValidationError(_("No account has this username."))
        return user


@admin.action(description=gettext_lazy("Rule"))
def rule_on_impeachments(modeladmin, request, queryset):
    """The Procurator records a ruling (``do_rule_on_impeachment``), one demand at a time."""
    demands = list(queryset.select_related("city")[:2])
    if len(demands) != 1:
        if demands:
            messages.error(request, _("Choose one demand at a time."))
        return None
    demand = demands[0]
    form = bound_form(request, RulingForm)
    if form.is_valid():
        data = form.cleaned_data
        _each(request, [demand], lambda d: staff_services.do_rule_on_impeachment(
            d, data["ruling"], acting_user=request.user, reason=data["reason"], new_tribune_user=data["username"]),
            lambda d: _("The ruling on the impeachment in %(city)s is recorded.") % {"city": d.city.name})
        return None
    return action_page(modeladmin, request, action="rule_on_impeachments", title=_("Rule"),
                        targets=[(demand.pk, str(demand.city.name))], form=form, submit=_("Rule"))


@admin.register(ImpeachmentDemand, site=staff_admin_site)
class StaffImpeachmentDemandAdmin(StaffScopedAdmin):
    """Impeachment demands of the games where the user is the Procurator (who signed is his to know)."""
    console_tool = "impeachment"

    list_display = ("city", "created_at", "signers", "reached_at", "opened_at", "ruling", "ruled_at")
    list_filter = (("game", ScopedRelatedFilter), ("city", ScopedRelatedFilter))
    city_field = "city"
    fields = ("game", "city", "tribune", "created_at", "signers", "reached_at", "inbox", "opened_at", "ruling",
              "ruled_at", "reason")
    allowed_lookups = frozenset({"game__slug__exact", "city__public_id__exact"})
    actions = (open_impeachment_inboxes, rule_on_impeachments)

    def has_module_permission(self, request) -> bool:
        return bool(role_game_ids(request, HOST_STAFF_KIND))

    def get_ordering(self, request):
        return ("-created_at", "-id")

    def scoped_queryset(self, request):
        return ImpeachmentDemand.objects.filter(game_id__in=role_game_ids(request, HOST_STAFF_KIND)) \
            .select_related("game", "city", "tribune__city", "inbox")

    @admin.display(description=gettext_lazy("living signers"))
    def signers(self, obj: ImpeachmentDemand) -> str:
        signers, living = staff_services.living_signatures(obj)
        return f"{signers} / {living}"


# --------------------------------------------------------------------------------------------------------------
# Complaints of no confidence
# --------------------------------------------------------------------------------------------------------------

def complainants_label(case: NoConfidenceCase) -> str:
    """Who complains, as the Procurator may know it: the resident's name about the Arbiter; "the mafia of city C"
    about the Consigliere."""
    if case.target == NoConfidenceTarget.CONSIGLIERE:
        return no_confidence_services.mafia_signature(case.city)
    return case.complainant.name if case.complainant_id else "—"


class NoConfidenceRulingForm(forms.Form):
    """The Procurator's ruling: well-founded with a bonus, or unfounded; always with a reason."""

    ruling = forms.ChoiceField(label=gettext_lazy("Ruling"), choices=NoConfidenceRuling.choices)
    reason = forms.CharField(label=gettext_lazy("Reason"), widget=forms.Textarea(attrs={"rows": 3}),
                             max_length=no_confidence_services.MAX_TEXT_LENGTH)
    bonus = forms.CharField(label=gettext_lazy("Bonus (well-founded only)"), widget=forms.Textarea(attrs={"rows": 2}),
                            max_length=no_confidence_services.MAX_TEXT_LENGTH, required=False)


@admin.action(description=gettext_lazy("Rule"))
def rule_on_no_confidence(modeladmin, request, queryset):
    """The Procurator rules on one complaint (``do_rule_on_no_confidence``)."""
    cases = list(queryset.select_related("city", "complainant")[:2])
    if len(cases) != 1:
        if cases:
            messages.error(request, _("Choose one complaint at a time."))
        return None
    case = cases[0]
    form = bound_form(request, NoConfidenceRulingForm)
    if form.is_valid():
        data = form.cleaned_data
        try:
            no_confidence_services.do_rule_on_no_confidence(case, data["ruling"], reason=data["reason"], bonus=data["bonus"],
                                              acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("The ruling on the complaint of %(who)s is recorded.")
                             % {"who": complainants_label(case)})
        return None
    label = f"{case.get_target_display()} · {complainants_label(case)}"
    return action_page(modeladmin, request, action="rule_on_no_confidence", title=_("Rule on the complaint"),
                        targets=[(case.pk, label)], form=form, submit=_("Rule"))


@admin.register(NoConfidenceCase, site=staff_admin_site)
class StaffNoConfidenceCaseAdmin(StaffScopedAdmin):
    """Complaints of no confidence in the games where the user is the Procurator: whom they are
    about, who complains as he may know it, the complaint inbox (to read and answer), the ruling."""
    console_tool = "no_confidence"

    list_display = ("filed_at", "target", "complainants", "thread", "ruling", "ruled_at")
    list_filter = (("game", ScopedRelatedFilter), "target")
    fields = ("game", "target", "complainants", "thread", "filed_at", "ruling", "ruled_at", "reason", "bonus")
    allowed_lookups = frozenset({"game__slug__exact", "target__exact", "ruled_at__isnull"})
    actions = (rule_on_no_confidence,)

    def has_module_permission(self, request) -> bool:
        return bool(role_game_ids(request, HOST_STAFF_KIND))

    def get_ordering(self, request):
        return ("-filed_at", "-id")

    def scoped_queryset(self, request):
        return (NoConfidenceCase.objects.filter(game_id__in=role_game_ids(request, HOST_STAFF_KIND))
                .select_related("game", "city", "complainant", "inbox"))

    @admin.display(description=gettext_lazy("complainants"))
    def complainants(self, obj: NoConfidenceCase) -> str:
        return complainants_label(obj)

    @admin.display(description=gettext_lazy("inbox"))
    def thread(self, obj: NoConfidenceCase) -> str:
        return format_html('<a href="{}">{}</a>', reverse("inbox_thread", args=[obj.inbox.public_id]), obj.inbox.title)


@register_dashboard_needs(tool="no_confidence")
def _procurator_no_confidence_needs(request, role) -> list[Need]:
    if role.kind != HOST_STAFF_KIND:
        return []
    count = NoConfidenceCase.objects.filter(game_id=role.game_id, ruled_at__isnull=True).count()
    return [Need("no_confidence", _("Complaints of no confidence before you"), count,
                 _changelist("lepra_noconfidencecase", game=role.game))]


@register_dashboard_links(order=60, tool="no_confidence")
def _no_confidence_links(request, role) -> list[tuple[str, str]]:
    if role.kind != HOST_STAFF_KIND:
        return []
    return [(_("Complaints of no confidence"), _changelist("lepra_noconfidencecase", game=role.game))]


__all__ = ["complainants_label"]
