"""The staff app's console pages on the one ``/staff/`` site (``staff.console.staff_admin_site``).

Registered here, through the console's registries, with the same conventions (read-only, policy-scoped querysets, a
whitelist of URL lookups, every write one service call with ``acting_user=request.user``):

* **What needs me now** (``dashboard_needs``): per role, counts with links: the Procurator's failed scheduled
  events. Other apps and the rulesets add theirs with
  ``staff.console.register_dashboard_needs`` (a day's requests, court cases...).
* **The audit log** (``GameEvent``): the events of the viewer's scope, decided per kind by
  ``inboxes.audit_policy.audit_log_audience`` (``audit_policy.visible_events``); the Consigliere's name as actor only to
  those who may know it.
* **Stand-ins** (a city's staff role holding the powers of the absent holder of the same kind in another city for
  a period): listed to every staff member of the game; the host grants them on a page and ends them with an
  action (``staff.services``).
* **The early end of a game**: a Procurator's page, then a confirmation page (``kernel.confirm``).
"""
from __future__ import annotations

from zoneinfo import ZoneInfo

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from cities.forms import WallClockField, wall_clock_to_utc
from cities.models import HOST_STAFF_KIND, Game, GameEvent, ScheduledEvent, StaffRole
from cities.staff_kinds import staff_kind_label, staff_kinds_of
from inboxes import audit_policy
from kernel.errors import RuleViolation
from kernel.form_fields import ObjectChoiceField
from kernel.timezones import zoned_time
from staff.console import (
    DASHBOARD_NEEDS,
    Need,
    ScopedRelatedFilter,
    StaffScopedAdmin,
    _current_request,
    changelist_url,
    game_provides,
    register_dashboard_links,
    register_dashboard_needs,
    register_urls,
    role_game_ids,
    staff_admin_site,
    staff_game,
    staff_roles_of,
)

from . import services
from .audit_sentences import audit_sentence, kind_label
from .models import StaffStandIn

_changelist = changelist_url


# --------------------------------------------------------------------------------------------------------------
# What needs me now
# --------------------------------------------------------------------------------------------------------------

@register_dashboard_needs
def _procurator_needs(request, role: StaffRole) -> list[Need]:
    if role.kind != HOST_STAFF_KIND:
        return []
    failed = ScheduledEvent.objects.filter(game=role.game, done_at__isnull=True, cancelled_at__isnull=True,
                                           attempts__gt=0).exclude(last_error="").count()
    return [Need("failed", _("Failed scheduled events"), failed,
                 _changelist("cities_gameevent", game=role.game, kind="scheduler.event_failed"))]


def dashboard_needs(request, role: StaffRole) -> list[Need]:
    """The "what needs me now" lines for ``role`` of the request's user: every registered provider's lines, in
    order (``staff.console.DASHBOARD_NEEDS``)."""
    return [need for hook in DASHBOARD_NEEDS for need in hook(request, role)]


@register_dashboard_links(order=50)
def dashboard_links(request, role: StaffRole) -> list[tuple[str, str]]:
    """Links this app adds to a role's dashboard row."""
    links = [(None, _("Audit log"), _changelist("cities_gameevent", game=role.game)),
             ("stand_ins", _("Stand-ins"), _changelist("staff_staffstandin", game=role.game))]
    if role.kind == HOST_STAFF_KIND:
        links += [("stand_ins", _("Grant a stand-in"), reverse("admin:grant_stand_in", args=[role.game.slug],
                                                               current_app=staff_admin_site.name))]
    links = [(label, url) for tool, label, url in links if game_provides(role.game, tool)]
    if getattr(role, "stands_in_now", False):
        links.insert(0, (_("You stand in for this city"), _changelist("cities_resident",
                                                                             city=role.city)))
    return links


# --------------------------------------------------------------------------------------------------------------
# The audit log
# --------------------------------------------------------------------------------------------------------------

class EventKindFilter(admin.SimpleListFilter):
    """Filter by event kind, offering only the kinds present in the viewer's scope."""

    title = gettext_lazy("kind")
    parameter_name = "kind"

    def lookups(self, request, model_admin):
        kinds = sorted(set(model_admin.get_queryset(request).values_list("kind", flat=True)))
        return sorted(((k, kind_label(k)) for k in kinds), key=lambda pair: pair[1])

    def has_output(self) -> bool:
        return True

    def queryset(self, request, queryset):
        return queryset.filter(kind=self.value()) if self.value() else queryset


def _audit_scopes(request) -> dict[int, audit_policy.AuditScope]:
    cached = getattr(request, "_staff_audit_scopes", None)
    if cached is None:
        cached = {gid: audit_policy.AuditScope(request.user, gid) for gid in {r.game_id for r in staff_roles_of(request)}}
        request._staff_audit_scopes = cached
    return cached


@admin.register(GameEvent, site=staff_admin_site)
class StaffGameEventAdmin(StaffScopedAdmin):
    """The audit log of the games the user hosts: only the events of their scope (``audit_policy.visible_events``,
    the per-kind table ``audit_log_audience``)."""

    list_display = ("at_shown", "sentence")
    list_per_page = 100
    list_max_show_all = 10_000  # "show all" covers a whole game's log
    list_filter = (("game", ScopedRelatedFilter), EventKindFilter)
    search_fields = ("kind",)
    fields = ("game", "at_shown", "sentence")
    allowed_lookups = frozenset({"game__slug__exact", "game__isnull", "kind"})

    def get_ordering(self, request):
        return ("-at", "-id")

    def scoped_queryset(self, request):
        ids: list[int] = []
        for game_id in sorted({r.game_id for r in staff_roles_of(request)}):
            ids += list(audit_policy.visible_events(request.user, game_id).values_list("pk", flat=True))
        return GameEvent.objects.filter(pk__in=ids).select_related("game", "actor")

    def _scope(self, obj):
        request = _current_request.get()
        return None if request is None else _audit_scopes(request).get(obj.game_id)

    @admin.display(description=gettext_lazy("actor"))
    def actor_shown(self, obj: GameEvent) -> str:
        if obj.actor_id is None:
            return _("the site")
        scope = self._scope(obj)
        if scope is None or not scope.can_see(obj) or not scope.shows_actor(obj):
            return "—"
        return obj.actor.public_name

    @admin.display(description=gettext_lazy("details"))
    def details(self, obj: GameEvent) -> str:
        scope = self._scope(obj)
        if scope is None:
            return ""
        return format_html_join(", ", "{}={}", scope.shown_details(obj))

    @admin.display(description=gettext_lazy("what happened"))
    def sentence(self, obj: GameEvent) -> str:
        """The event in words in its game's language, with links the viewer may open (``audit_sentence``)."""
        scope = self._scope(obj)
        return "" if scope is None else audit_sentence(scope, obj)

    @admin.display(description=gettext_lazy("when"), ordering="at")
    def at_shown(self, obj: GameEvent) -> str:
        """The moment in the game's time zone, with the zone's abbreviation."""
        return zoned_time(obj.at, obj.game.time_zone)


# --------------------------------------------------------------------------------------------------------------
# Stand-ins
# --------------------------------------------------------------------------------------------------------------

@admin.action(description=gettext_lazy("End now"))
def end_stand_ins(modeladmin, request, queryset):
    """The host ends stand-in periods now: ``do_end_stand_in`` for each."""
    for period in queryset.select_related("city"):
        try:
            services.do_end_stand_in(period, acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("The stand-in for %(city)s has ended.") % {"city": period.city.name})


@admin.register(StaffStandIn, site=staff_admin_site)
class StaffStandInAdmin(StaffScopedAdmin):
    """Stand-in periods of the games the user hosts (public among the staff: who runs which city)."""
    console_tool = "stand_ins"

    list_display = ("city", "stand_in", "starts_at", "ends_at", "ended_at")
    list_filter = (("game", ScopedRelatedFilter), ("city", ScopedRelatedFilter))
    city_field = "city"
    fields = ("game", "city", "absent", "stand_in", "starts_at", "ends_at", "granted_at", "ended_at")
    allowed_lookups = frozenset({"game__slug__exact", "city__public_id__exact"})
    actions = (end_stand_ins,)

    def get_ordering(self, request):
        return ("-starts_at", "-id")

    def offers_action(self, request, name: str) -> bool:
        return bool(role_game_ids(request, HOST_STAFF_KIND))

    def scoped_queryset(self, request):
        games = {r.game_id for r in staff_roles_of(request)}
        return StaffStandIn.objects.filter(game_id__in=games).select_related("game", "city", "stand_in__city",
                                                                               "absent__city")


def city_roles_label(game: Game) -> str:
    """The labels of the city staff kinds of ``game``'s ruleset (``city_staff_kinds``), as it names them in the
    active language, joined by " / " when it declares several; "" when it declares none. No query."""
    return " / ".join(sorted(staff_kind_label(game, kind) for kind in staff_kinds_of(game, "city_staff_kinds")))


class StandInForm(forms.Form):
    """Which holder of a city's staff role stands in for which city, from when until when (wall clock in the game's
    zone). The labels name the role as the game's ruleset does (``city_roles_label``)."""

    absent = ObjectChoiceField(label="", queryset=StaffRole.objects.none())
    stand_in = ObjectChoiceField(label="", queryset=StaffRole.objects.none())
    starts_at = WallClockField(label=gettext_lazy("From"))
    ends_at = WallClockField(label=gettext_lazy("Until"))

    def __init__(self, *args, game: Game, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = ZoneInfo(game.time_zone)
        role = city_roles_label(game)
        self.fields["absent"].label = _("City whose %(role)s is absent") % {"role": role}
        self.fields["stand_in"].label = _("%(role)s standing in") % {"role": role}
        city_roles = (StaffRole.objects.filter(game=game, kind__in=staff_kinds_of(game, "city_staff_kinds"))
                      .select_related("city", "user"))
        self.fields["absent"].queryset = city_roles
        self.fields["absent"].label_from_instance = lambda r: r.city.name
        self.fields["stand_in"].queryset = city_roles
        self.fields["stand_in"].label_from_instance = lambda r: f"{r.user.public_name} ({r.city.name})"

    def clean(self):
        data = super().clean()
        for name in ("starts_at", "ends_at"):
            if data.get(name) is not None:
                try:
                    data[name] = wall_clock_to_utc(data[name], self.zone)
                except ValidationError as exc:
                    self.add_error(name, exc)
                except OverflowError:
                    self.add_error(name, _("This date is out of range."))
        return data



def grant_stand_in_view(request, slug: str):
    """The host's page granting a stand-in in the game of ``slug`` (``do_grant_stand_in``); a 404 for anyone
    else."""
    game = staff_game(request, slug)
    form = StandInForm(request.POST if request.method == "POST" else None, game=game)
    if form.is_valid():
        data = form.cleaned_data
        try:
            period = services.do_grant_stand_in(data["absent"], data["stand_in"], data["starts_at"],
                                                data["ends_at"], acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("%(name)s stands in for the absent %(role)s of %(city)s.")
                             % {"name": period.stand_in.user.public_name, "city": period.city.name,
                                "role": staff_kind_label(game, period.absent.kind)})
            return HttpResponseRedirect(_changelist("staff_staffstandin", game=game))
    return _page(request, _("Grant a stand-in"), game, form, _("Grant"))


def _page(request, title: str, game: Game, form, submit: str):
    context = {**staff_admin_site.each_context(request), "title": title, "subtitle": game.title, "form": form,
               "submit_label": submit}
    request.current_app = staff_admin_site.name
    return TemplateResponse(request, "staff_admin/staff_form.html", context)


@register_urls(tool="stand_ins")
def extra_urls(site) -> list:
    """The pages this app adds to the staff site (mounted by ``GameStaffAdminSite.get_urls``): granting a
    stand-in."""
    return [path("games/<slug:slug>/stand-in/", site.admin_view(grant_stand_in_view), name="grant_stand_in")]


__all__ = ["DASHBOARD_NEEDS", "Need", "dashboard_links", "dashboard_needs", "extra_urls"]
