"""The staff console's pages of games, residents, inboxes, memberships and messages, on the one console site of
``staff.console`` mounted at ``/staff/``.

Who may enter: an active account holding at least one ``StaffRole`` (Procurator, Tribune, Arbiter, Consigliere).
``is_staff`` and ``is_superuser`` grant nothing here: a site operator without a game role is sent to
log in when anonymous and refused (403) when logged in. The operators' admin (``/admin/``, ``cities.admin``)
stays separate and shows no secrets.

What each staff member sees, and why nothing leaks (DESIGN.md "The access policy"):

* **Every queryset starts from the access policy**, never from ``Model.objects.all()``:
  inboxes are ``policies.readable_inboxes(user)`` narrowed to the games where the user is staff; messages are
  ``policies.readable_messages`` of those; memberships are those of readable inboxes; residents are the whole
  game for the Procurator, the Arbiter and the Consigliere, and only their own city for a Tribune.
  Changelists, object pages, history pages, autocomplete, search, filters and actions all read
  ``get_queryset``, so an object outside the scope behaves exactly like a missing id (the admin's
  "doesn't exist" redirect to the index; 403 for the add/delete/POST-change URLs, alike for both).
* **Secrets are never a model field in a page**: no list column, filter, search field, ordering or detail field
  names ``alignment`` or a ruleset's secret rank. They appear only as computed, unsortable columns asked of
  ``knowledge.visible_alignment`` / ``known_seat_roles`` for the viewer: among staff only the
  Consigliere sees alignments and godfathers; the Procurator and the city's Tribune see the commissar.
* **URL lookups are a whitelist** (``allowed_lookups``): any other query parameter, such as ``?alignment=mafia``
  or a ruleset's secret rank through ``?resident__...``, is refused with the same 400 whatever its value, so no
  filter can serve as an oracle. What exists only in some rulesets' games follows the games in the list's scope
  (``StaffScopedAdmin.city_field``, ``declared_choices``): a City column, filter and lookup only when a game in
  scope has cities; the inbox kind filter offers, and accepts, only the kinds their rulesets declare
  (``RulesetSpec.inbox_kinds``); any other value is the same 400. ``?o=`` can only sort by real, public columns;
  ``?q=`` searches public fields of objects already in scope, and never the text of a hidden message the viewer
  may not see.
* The "view on site" redirect (which answers for any model and id) is not mounted; no delete or add exists.
* **Writes go through services only**: the admin is read-only except its actions, which call
  ``inboxes.services`` with ``acting_user=request.user``: membership ban, unban, remove, add back; resident
  replace, record a death (Procurator), penalty ban (Arbiter); inbox roll over, close; message hide; and the
  Procurator's stage page. The services ask the policy, write the ``GameEvent`` audit row, and their
  ``RuleViolation`` message is shown as is. An action is offered only to users for whom its service could
  succeed, and its intermediate page names only what the viewer may see (the penalty ban's inbox list: kinds
  whose membership is no secret, titles only of inboxes the Arbiter reads).
"""
from __future__ import annotations

from operator import attrgetter
from types import MappingProxyType
from zoneinfo import ZoneInfo

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.http import HttpResponseRedirect
from django.template.defaultfilters import linebreaksbr
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.text import Truncator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from inboxes import knowledge, membership_services, policies, policy_tables
from inboxes import services as inbox_services
from inboxes.models import DeathCause, Inbox, Membership, MembershipState, Message
from kernel.errors import RuleViolation
from kernel.form_fields import ObjectMultipleChoiceField
from kernel.public_ids import is_public_id
from kernel.rulesets import ruleset_of, seat_state_relations
from kernel.timezones import time_for
from staff.console import (
    ScopedRelatedFilter,
    StaffScopedAdmin,
    _current_request,
    _hidden_text_inbox_ids,
    action_page,
    bound_form,
    confirm_action,
    current_viewer,
    readable_inboxes_for_staff,
    register_dashboard_links,
    register_urls,
    role_game_ids,
    staff_admin_site,
    staff_game,
    staff_game_ids,
    staff_roles_of,
    table_role_game_ids,
)
from staff.console_scope import DeclaredChoicesFilter

from .forms import WallClockField, wall_clock_to_utc
from .models import HOST_STAFF_KIND, City, Game, GameStatus, Resident


class InboxFilter(admin.SimpleListFilter):
    """Filter memberships or messages by inbox, offering the inboxes present in the scoped queryset, addressed by
    their public id (``?inbox=<public id>``): a database id in the link would count the inboxes the viewer may
    not read. An unknown or malformed value filters to nothing, like an inbox outside the scope."""

    title = gettext_lazy("inbox")
    parameter_name = "inbox"

    def lookups(self, request, model_admin):
        inboxes = (Inbox.objects.filter(pk__in=model_admin.get_queryset(request).values("inbox_id"))
                   .order_by("game_id", "kind", "city__number", "title").values_list("public_id", "title"))
        return list(inboxes)

    def has_output(self) -> bool:
        return True

    def queryset(self, request, queryset):
        value = self.value()
        if not value:
            return queryset
        return queryset.filter(inbox__public_id=value) if is_public_id(value) else queryset.none()


def _fact(fact: str, label: str) -> str:
    return format_html('<span data-fact="{}">{}</span>', fact, label)


# --------------------------------------------------------------------------------------------------------------
# The staff's actions (admin actions call the same services as the pages)
# --------------------------------------------------------------------------------------------------------------
#
# Each action works on the changelist's queryset (already scoped by the policy, so an object outside the scope
# is dropped exactly like a missing id), asks for its input on an intermediate page when it needs any, and calls
# one service with ``acting_user=request.user``. A ``RuleViolation`` is shown as the service wrote it; nothing is
# written here. Actions are offered only to users for whom the service could succeed (``offers_action``).

def _organized_readable_inboxes(request):
    """Readable inboxes (in the user's staff games) that one of the user's staff roles organises."""
    return readable_inboxes_for_staff(request).filter(organizer_id__in=[r.pk for r in staff_roles_of(request)])


def _may_moderate_somewhere(request) -> bool:
    """True when the user is a moderator (``moderation_policy.can_moderate_inbox``: organizer or Procurator) of some
    inbox in scope; cached per request."""
    cached = getattr(request, "_staff_admin_moderates", None)
    if cached is None:
        cached = bool(role_game_ids(request, HOST_STAFF_KIND)) or _organized_readable_inboxes(request).exists()
        request._staff_admin_moderates = cached
    return cached


def _may_roll_over_somewhere(request) -> bool:
    """True when the user organises an inbox in scope that may be rolled over (``do_roll_over_inbox``)."""
    cached = getattr(request, "_staff_admin_rolls_over", None)
    if cached is None:
        cached = _organized_readable_inboxes(request).exclude(
            policy_tables.kinds_q("no_rollover_kinds")).filter(killed_at__isnull=True).exists()
        request._staff_admin_rolls_over = cached
    return cached


def _one_resident(request, queryset) -> Resident | None:
    """The single selected resident (in scope), or None after saying why (none selected: nothing is said)."""
    residents = list(queryset.select_related("game", "city")[:2])
    if len(residents) > 1:
        messages.error(request, _("Choose one resident at a time."))
        return None
    return residents[0] if residents else None


def _resident_target(resident: Resident) -> list[tuple[int, str]]:
    return [(resident.pk, resident.name_and_city)]


class ReplacePlayerForm(forms.Form):
    """The account that takes over the seat, by username."""

    username = forms.CharField(label=gettext_lazy("Username of the new player"), max_length=150)

    def clean_username(self):
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise ValidationError(_("No account has this username."))
        return user


@admin.action(description=gettext_lazy("Replace the player"))
def replace_player(modeladmin, request, queryset):
    """The Procurator hands a seat to another account: ``do_replace_player``."""
    resident = _one_resident(request, queryset)
    if resident is None:
        return None
    form = bound_form(request, ReplacePlayerForm)
    if form.is_valid():
        old_name = resident.name
        try:
            resident = membership_services.do_replace_player(resident, form.cleaned_data["username"],
                                                        acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("%(new)s takes over the seat of %(old)s.")
                             % {"new": resident.name, "old": old_name})
        return None
    return action_page(modeladmin, request, action="replace_player", title=_("Replace the player"),
                        targets=_resident_target(resident), form=form, submit=_("Replace"))


class DeathForm(forms.Form):
    """The cause of a death and whether a night victim stays a spirit for the day."""

    cause = forms.ChoiceField(label=gettext_lazy("Cause"), choices=DeathCause.choices)
    spirit = forms.BooleanField(label=gettext_lazy("A spirit for the day (killed at night)"), required=False)


@admin.action(description=gettext_lazy("Record a death"))
def record_death(modeladmin, request, queryset):
    """The Procurator records deaths: ``do_kill_resident`` for each selected resident, after a
    confirmation page (a death is final)."""
    residents = list(queryset.select_related("game", "city"))
    if not residents:
        return None
    form = bound_form(request, DeathForm)
    if form.is_valid():
        confirm = confirm_action(
            modeladmin, request, "record_death", title=_("Record a death?"),
            consequence=_("These residents die (%(cause)s): %(names)s.")
            % {"cause": DeathCause(form.cleaned_data["cause"]).label,
               "names": ", ".join(f"{r.name} ({r.city.name})" if r.city_id else r.name for r in residents)},
            confirm_label=_("Record"))
        if confirm is not None:
            return confirm
        for resident in residents:
            try:
                membership_services.do_kill_resident(resident, form.cleaned_data["cause"], acting_user=request.user,
                                                spirit=form.cleaned_data["spirit"])
            except RuleViolation as exc:
                messages.error(request, str(exc))
            else:
                messages.success(request, _("The death of %(name)s is recorded.") % {"name": resident.name})
        # The ruleset's aftermath of a death by day (an election, a victory check).
        ruleset_of(residents[0].game).after_day_death(residents[0].game, now=timezone.now())
        return None
    targets = [(r.pk, r.name_and_city) for r in residents]
    return action_page(modeladmin, request, action="record_death", title=_("Record a death"), targets=targets,
                        form=form, submit=_("Record"))


def penalty_ban_candidates(resident: Resident):
    """The inboxes the Arbiter may name for a penalty ban of ``resident``, by the service's own rule
    (``do_penalty_ban``): open inboxes of the resident's game of its ruleset's ``penalty_ban_kinds`` (kinds whose
    membership is no secret) where the resident reads. Never a mafia inbox, police station, secret inbox, bar,
    notary or check channel, so the list tells nothing of who is mafia, who is the commissar or who talks to whom.
    """
    kinds = sorted(policy_tables.kinds_of(resident.game, "penalty_ban_kinds"))
    return (Inbox.objects.filter(game_id=resident.game_id, kind__in=kinds, killed_at__isnull=True,
                                 rolled_over_at__isnull=True, memberships__resident=resident,
                                 memberships__state__in=policy_tables.READING_STATES)
            .select_related("game", "city").order_by("kind", "city__number", "id"))


def penalty_ban_label(viewer, inbox: Inbox) -> str:
    """How a penalty-ban choice is named to ``viewer``: the title of an inbox they may read; otherwise only the
    public facts of the rules (its kind and city), never its title."""
    if policies.can_read_inbox(viewer, inbox):
        return inbox.title
    return f"{inbox.get_kind_display()} · {inbox.city.name}" if inbox.city_id else inbox.get_kind_display()


class PenaltyBanForm(forms.Form):
    """The Arbiter's penalty ban: the inboxes, the end (wall clock in the game's time
    zone) and the reason. The service checks everything again."""

    inboxes = ObjectMultipleChoiceField(label=gettext_lazy("Inboxes"), queryset=Inbox.objects.none(),
                                             widget=forms.CheckboxSelectMultiple, required=False)
    until = WallClockField(label=gettext_lazy("Banned until"))
    reason = forms.CharField(label=gettext_lazy("Reason"), max_length=300, required=False)

    def __init__(self, *args, resident: Resident, viewer, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = ZoneInfo(resident.game.time_zone)
        field = self.fields["inboxes"]
        field.queryset = penalty_ban_candidates(resident)
        field.label_from_instance = lambda inbox: penalty_ban_label(viewer, inbox)
        self.fields["until"].help_text = _("Time in the game's time zone (%(tz)s).") % {"tz": self.zone.key}

    def clean_until(self):
        try:
            return wall_clock_to_utc(self.cleaned_data["until"], self.zone)
        except OverflowError:
            raise ValidationError(_("This date is out of range.")) from None


@admin.action(description=gettext_lazy("Penalty ban"))
def penalty_ban(modeladmin, request, queryset):
    """The Arbiter bans one resident in named inboxes until a time: ``do_penalty_ban``."""
    resident = _one_resident(request, queryset)
    if resident is None:
        return None
    form = bound_form(request, PenaltyBanForm, resident=resident, viewer=request.user)
    if form.is_valid():
        inboxes = list(form.cleaned_data["inboxes"])
        try:
            membership_services.do_penalty_ban(resident, inboxes, form.cleaned_data["until"], form.cleaned_data["reason"],
                                          acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            local = form.cleaned_data["until"].astimezone(form.zone)
            messages.success(request, _("%(name)s is banned until %(until)s (%(tz)s) in: %(inboxes)s.") % {
                "name": resident.name, "until": local.strftime("%Y-%m-%d %H:%M"), "tz": form.zone.key,
                "inboxes": ", ".join(penalty_ban_label(request.user, inbox) for inbox in inboxes)})
        return None
    return action_page(modeladmin, request, action="penalty_ban", title=_("Penalty ban"),
                        targets=_resident_target(resident), form=form, submit=_("Ban"))


class RollOverForm(forms.Form):
    title = forms.CharField(label=gettext_lazy("Title of the new inbox"), max_length=200, required=False,
                            help_text=gettext_lazy("Empty: the first inbox's title with “part N”."))


@admin.action(description=gettext_lazy("Roll over"))
def roll_over_inboxes(modeladmin, request, queryset):
    """The organizer rolls inboxes over: ``do_roll_over_inbox`` for each."""
    inboxes = list(queryset)
    if not inboxes:
        return None
    form = bound_form(request, RollOverForm)
    if form.is_valid():
        for inbox in inboxes:
            try:
                new = inbox_services.do_roll_over_inbox(inbox, acting_user=request.user,
                                                        title=form.cleaned_data["title"].strip() or None)
            except RuleViolation as exc:
                messages.error(request, str(exc))
            else:
                messages.success(request, _("“%(old)s” is rolled over into “%(new)s”.")
                                 % {"old": inbox.title, "new": new.title})
        return None
    return action_page(modeladmin, request, action="roll_over_inboxes", title=_("Roll over"),
                        targets=[(i.pk, i.title) for i in inboxes], form=form, submit=_("Roll over"))


@admin.action(description=gettext_lazy("Close (kill)"))
def kill_inboxes(modeladmin, request, queryset):
    """A moderator closes inboxes, after a confirmation: ``do_kill_inbox`` for each."""
    inboxes = list(queryset)
    if not inboxes:
        return None
    form = bound_form(request, forms.Form)
    if form.is_valid():
        for inbox in inboxes:
            try:
                inbox_services.do_kill_inbox(inbox, acting_user=request.user)
            except RuleViolation as exc:
                messages.error(request, str(exc))
            else:
                messages.success(request, _("“%(inbox)s” is closed.") % {"inbox": inbox.title})
        return None
    return action_page(modeladmin, request, action="kill_inboxes", title=_("Close these inboxes?"),
                        targets=[(i.pk, i.title) for i in inboxes], form=form, submit=_("Close"))


@admin.action(description=gettext_lazy("Hide"))
def hide_messages(modeladmin, request, queryset):
    """A moderator hides messages for abuse: ``do_hide_message`` for each."""
    for message in queryset.select_related("inbox"):
        try:
            membership_services.do_hide_message(message, acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("A message in “%(inbox)s” is hidden.") % {"inbox": message.inbox.title})


class StageInboxForm(forms.Form):
    """A stage inbox: its title, its speakers (residents of the game, the dead too) and its
    audience (nobody, a city, or all residents). ``do_create_stage_inbox`` checks it again."""

    title = forms.CharField(label=gettext_lazy("Title"), max_length=200, required=False)
    speakers = ObjectMultipleChoiceField(label=gettext_lazy("Speakers"), queryset=Resident.objects.none(),
                                              required=False, widget=forms.SelectMultiple(attrs={"size": 12}))
    audience = forms.ChoiceField(label=gettext_lazy("Audience (reads only)"), required=False)

    def __init__(self, *args, game: Game, **kwargs):
        super().__init__(*args, **kwargs)
        self.game = game
        speakers = self.fields["speakers"]
        speakers.queryset = Resident.objects.filter(game=game).select_related("city").order_by("city__number", "name")
        speakers.label_from_instance = lambda r: f"{r.name_and_city} · {r.get_status_display()}"
        # Cities by their public number, not their database id.
        self.cities = {str(c.number): c for c in City.objects.filter(game=game).order_by("number")}
        self.fields["audience"].choices = [
            ("", _("Nobody (only the speakers)")),
            (inbox_services.STAGE_AUDIENCE_ALL, _("All residents")),
            *[(pk, c.name) for pk, c in self.cities.items()],
        ]

    def clean_audience(self):
        value = self.cleaned_data["audience"]
        if not value:
            return None
        return self.cities.get(value, inbox_services.STAGE_AUDIENCE_ALL)


# --------------------------------------------------------------------------------------------------------------
# Games
# --------------------------------------------------------------------------------------------------------------

@admin.register(Game, site=staff_admin_site)
class StaffGameAdmin(StaffScopedAdmin):
    """The games where the user holds a role, with the user's roles there; a game is named by its slug (public,
    unique), never by its database id."""

    url_key = "slug"
    list_display = ("title", "status", "day_number", "time_zone", "your_roles")
    ordering = ("-created_at", "-id")
    fields = ("title", "slug", "ruleset", "status", "day_number", "time_zone", "your_roles")
    search_fields = ("title",)

    def scoped_queryset(self, request):
        return Game.objects.filter(pk__in=staff_game_ids(request))

    @admin.display(description=gettext_lazy("Your roles"))
    def your_roles(self, obj: Game) -> str:
        request = _current_request.get()
        if request is None:
            return ""
        return ", ".join(str(r) for r in staff_roles_of(request) if r.game_id == obj.pk)


# --------------------------------------------------------------------------------------------------------------
# Residents
# --------------------------------------------------------------------------------------------------------------

@admin.register(Resident, site=staff_admin_site)
class StaffResidentAdmin(StaffScopedAdmin):
    """Residents: the whole game for the Procurator, Arbiter and Consigliere, the own city for a Tribune. Alignment,
        commissar and godfather only as the policy lets the viewer know them."""

    list_display = ("name", "city", "status", "public_roles", "alignment_known", "roles_known")
    ordering = ("city__number", "name", "id")
    list_filter = (("game", ScopedRelatedFilter), ("city", ScopedRelatedFilter), "status")
    city_field = "city"
    search_fields = ("name",)
    fields = ("name", "game", "city", "status", "died_at", "public_roles", "alignment_known", "roles_known")
    allowed_lookups = frozenset({
        "game__slug__exact", "game__isnull", "city__public_id__exact", "city__isnull", "status__exact",
        "status__isnull",
    })
    actions = (replace_player, record_death, penalty_ban)
    action_tools = MappingProxyType(
        {"replace_player": "replace_player", "record_death": "record_death", "penalty_ban": "penalty_ban"})

    def offers_action(self, request, name: str) -> bool:
        if name in ("replace_player", "record_death"):
            return bool(role_game_ids(request, HOST_STAFF_KIND))
        if name == "penalty_ban":
            return bool(table_role_game_ids(request, "court_staff_kinds"))
        return True

    def scoped_queryset(self, request):
        scope = Q(pk__in=[])
        for role in staff_roles_of(request):
            if role.city_id is not None:  # a city's staff role (``city_staff_kinds``)
                scope |= Q(game_id=role.game_id, city_id=role.city_id)
            else:
                scope |= Q(game_id=role.game_id)
        return Resident.objects.filter(scope).select_related("game", "city", *seat_state_relations())

    @admin.display(description=gettext_lazy("Position"))
    def public_roles(self, obj: Resident) -> str:
        return ", ".join(str(label) for _key, label in ruleset_of(obj.game).public_seat_roles(obj))

    @admin.display(description=gettext_lazy("Alignment"))
    def alignment_known(self, obj: Resident) -> str:
        alignment = knowledge.visible_alignment(current_viewer(), obj)
        if alignment is None:
            return ""
        return _fact(f"alignment:{alignment}", _("mafia") if alignment == "mafia" else _("honest"))

    @admin.display(description=gettext_lazy("Role"))
    def roles_known(self, obj: Resident) -> str:
        facts = [(role.key, role.label) for role in knowledge.known_seat_roles(current_viewer(), obj)]
        return format_html_join(" ", '<span data-fact="{}">{}</span>', facts)


# --------------------------------------------------------------------------------------------------------------
# Inboxes
# --------------------------------------------------------------------------------------------------------------

@admin.register(Inbox, site=staff_admin_site)
class StaffInboxAdmin(StaffScopedAdmin):
    """Inboxes the user may read (``policies.readable_inboxes``) in the games they host."""

    list_display = ("title", "kind", "city", "organizer", "day_number", "created_at", "killed_at", "member_count")
    list_filter = (("game", ScopedRelatedFilter), ("kind", DeclaredChoicesFilter), ("city", ScopedRelatedFilter))
    city_field = "city"
    declared_choices = MappingProxyType({"kind": attrgetter("inbox_kinds")})
    search_fields = ("title",)
    fields = ("title", "game", "kind", "city", "organizer", "resident", "day_number", "created_at", "killed_at",
              "previous_inbox", "member_count")
    allowed_lookups = frozenset({
        "game__slug__exact", "game__isnull", "kind__exact", "kind__isnull", "city__public_id__exact", "city__isnull",
    })
    actions = (roll_over_inboxes, kill_inboxes)

    def offers_action(self, request, name: str) -> bool:
        if name == "roll_over_inboxes":
            return _may_roll_over_somewhere(request)
        if name == "kill_inboxes":
            return _may_moderate_somewhere(request)
        return True

    def get_ordering(self, request):
        return ("game", "kind", "city__number", "id")

    def scoped_queryset(self, request):
        return (readable_inboxes_for_staff(request).select_related("game", "city", "organizer__city", "resident")
                .annotate(n_members=Count("memberships", filter=~Q(memberships__state=MembershipState.REMOVED))))

    @admin.display(description=gettext_lazy("members"))
    def member_count(self, obj: Inbox) -> int:
        return obj.n_members

    @admin.display(description=gettext_lazy("previous inbox"))
    def previous_inbox(self, obj: Inbox) -> str:
        previous = obj.predecessor
        if previous is None or not policies.can_read_inbox(current_viewer(), previous):
            return ""
        return previous.title


# --------------------------------------------------------------------------------------------------------------
# Memberships, with the moderation actions
# --------------------------------------------------------------------------------------------------------------

class BanForm(forms.Form):
    """The ban's optional end (wall clock, in each inbox's game time zone) and reason."""

    until = WallClockField(label=gettext_lazy("Banned until"), required=False,
                           help_text=gettext_lazy("Time in the game's time zone; empty: until lifted."))
    reason = forms.CharField(label=gettext_lazy("Reason"), max_length=300, required=False)


def _run_service(request, memberships, service, success: str, **kwargs) -> None:
    """Call ``service(inbox, resident, acting_user=request.user, **kwargs)`` for each membership; report each
    success and each refusal (the ``RuleViolation`` message as the service wrote it)."""
    for membership in memberships:
        try:
            service(membership.inbox, membership.resident, acting_user=request.user, **kwargs)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, success % {"name": membership.resident.name, "inbox": membership.inbox.title})


@admin.action(description=gettext_lazy("Ban in the inbox (reads, cannot post)"))
def ban_members(modeladmin, request, queryset):
    """Ask for the ban's end and reason on an intermediate page, then call ``do_ban_member`` for each (the end
    read in each inbox's game time zone)."""
    memberships = list(queryset.select_related("inbox__game", "resident"))
    if not memberships:
        return None
    form = bound_form(request, BanForm)
    if form.is_valid():
        naive = form.cleaned_data["until"]
        for membership in memberships:
            until = None
            if naive is not None:
                try:
                    until = wall_clock_to_utc(naive, ZoneInfo(membership.inbox.game.time_zone))
                except (ValidationError, OverflowError) as exc:
                    messages.error(request, " ".join(getattr(exc, "messages", [str(exc)])))
                    continue
            _run_service(request, [membership], inbox_services.do_ban_member,
                         _("%(name)s is banned in “%(inbox)s”."), until=until, reason=form.cleaned_data["reason"])
        return None
    targets = [(m.pk, f"{m.resident.name} · {m.inbox.title} ({m.inbox.game.time_zone})") for m in memberships]
    return action_page(modeladmin, request, action="ban_members", title=_("Ban members"), targets=targets,
                       form=form, submit=_("Ban"))


@admin.action(description=gettext_lazy("Lift the ban"))
def unban_members(modeladmin, request, queryset):
    _run_service(request, queryset.select_related("inbox__game", "resident"), inbox_services.do_unban_member,
                 _("%(name)s may post again in “%(inbox)s”."))


@admin.action(description=gettext_lazy("Remove from the inbox (sees nothing of it)"))
def remove_members(modeladmin, request, queryset):
    """Remove the selected members after a confirmation page: a removed member no longer sees the inbox."""
    memberships = list(queryset.select_related("inbox__game", "resident"))
    confirm = None if not memberships else confirm_action(
        modeladmin, request, "remove_members", title=_("Remove from the inbox?"),
        consequence=_("These residents will no longer see the inbox at all: %(names)s.")
        % {"names": ", ".join(f"{m.resident.name} ({m.inbox.title})" for m in memberships)},
        confirm_label=_("Remove from the inbox"), undo=_("“Add back to the inbox” undoes it."))
    if confirm is not None:
        return confirm
    _run_service(request, memberships, inbox_services.do_remove_member,
                 _("%(name)s is removed from “%(inbox)s”."))


@admin.action(description=gettext_lazy("Add back to the inbox"))
def add_back_members(modeladmin, request, queryset):
    _run_service(request, queryset.select_related("inbox__game", "resident"), inbox_services.do_add_member,
                 _("%(name)s is a member of “%(inbox)s” again."))


@admin.register(Membership, site=staff_admin_site)
class StaffMembershipAdmin(StaffScopedAdmin):
    """Memberships of the inboxes the user may read; moderation through the inbox services."""

    list_display = ("resident", "inbox", "state", "banned_until", "since", "reason")
    list_filter = ("state", InboxFilter)
    search_fields = ("resident__name", "inbox__title")
    fields = ("resident", "inbox", "state", "since", "banned_until", "reason")
    actions = (ban_members, unban_members, remove_members, add_back_members)
    allowed_lookups = frozenset({
        "state__exact", "state__isnull", "inbox", "inbox__game__slug__exact",
    })

    def scoped_queryset(self, request):
        # The check channel's member is the commissar, secret to the Consigliere; a mafia complaint's members are
        # the mafia, secret to the Procurator (the ruleset's ``secret_member_kinds``, can_see_members).
        return (Membership.objects.filter(inbox__in=readable_inboxes_for_staff(request).values("pk"))
                .exclude(policy_tables.kinds_q("secret_member_kinds", prefix="inbox__")
                         & ~Q(inbox__game__status=GameStatus.FINISHED))
                .select_related("inbox__game", "resident"))

    def get_ordering(self, request):
        return ("inbox__game", "inbox__kind", "inbox__city__number", "inbox_id", "resident__name", "id")


# --------------------------------------------------------------------------------------------------------------
# Messages
# --------------------------------------------------------------------------------------------------------------

@admin.register(Message, site=staff_admin_site)
class StaffMessageAdmin(StaffScopedAdmin):
    """Messages of the inboxes the user may read (``policies.readable_messages``). A hidden message's text is
    shown, and searched, only for the inbox's moderators; the check channel shows roles, never
    names."""

    list_display = ("received", "inbox", "author", "excerpt", "is_hidden")
    list_filter = (InboxFilter, "is_hidden")
    search_fields = ("body",)
    fields = ("inbox", "author", "received", "edited", "is_hidden", "hidden", "text")
    allowed_lookups = frozenset({
        "inbox", "is_hidden__exact", "is_hidden__isnull", "inbox__game__slug__exact",
    })
    actions = (hide_messages,)

    def offers_action(self, request, name: str) -> bool:
        if name == "hide_messages":
            return _may_moderate_somewhere(request)
        return True

    def scoped_queryset(self, request):
        base = Message.objects.filter(inbox__game_id__in=staff_game_ids(request))
        return policies.readable_messages(request.user, base).select_related("inbox__game", "author_staff__city")

    def get_ordering(self, request):
        return ("-received_at", "-id")

    def _time(self, obj: Message, moment) -> str:
        """``moment`` in the viewer's display zone (the game's by default) with the zone's abbreviation."""
        if moment is None:
            return "—"
        request = _current_request.get()
        return time_for(moment, request.user if request is not None else None, obj.inbox.game)

    @admin.display(description=gettext_lazy("received at"), ordering="received_at")
    def received(self, obj: Message) -> str:
        return self._time(obj, obj.received_at)

    @admin.display(description=gettext_lazy("edited at"))
    def edited(self, obj: Message) -> str:
        return self._time(obj, obj.edited_at)

    @admin.display(description=gettext_lazy("hidden at"))
    def hidden(self, obj: Message) -> str:
        return self._time(obj, obj.hidden_at)

    def get_search_results(self, request, queryset, search_term):
        if search_term:
            queryset = queryset.filter(Q(is_hidden=False) | Q(inbox_id__in=_hidden_text_inbox_ids(request)))
        return super().get_search_results(request, queryset, search_term)

    def _shown_text(self, obj: Message) -> str | None:
        request = _current_request.get()
        if request is None or (obj.is_hidden and obj.inbox_id not in _hidden_text_inbox_ids(request)):
            return None
        return obj.body

    @admin.display(description=gettext_lazy("author"))
    def author(self, obj: Message) -> str:
        if obj.inbox.kind in policy_tables.kinds_of(obj.inbox.game, "unnamed_author_kinds"):
            return obj.author_staff.get_kind_display() if obj.author_staff_id else _("commissar")
        if obj.author_staff_id:
            return f"{obj.author_name} ({obj.author_staff.get_kind_display()})"
        return obj.author_name

    @admin.display(description=gettext_lazy("text"))
    def excerpt(self, obj: Message) -> str:
        text = self._shown_text(obj)
        return _("(hidden by a moderator)") if text is None else Truncator(text).chars(80)

    @admin.display(description=gettext_lazy("text"))
    def text(self, obj: Message) -> str:
        shown = self._shown_text(obj)
        if shown is None:
            return _("(hidden by a moderator)")
        return format_html('<div class="message-text">{}</div>', linebreaksbr(shown, autoescape=True))


# --------------------------------------------------------------------------------------------------------------
# The Procurator's stage page and this app's dashboard links (registered on the console, staff.console)
# --------------------------------------------------------------------------------------------------------------

def stage_inbox_view(request, slug: str):
    """The Procurator's page opening a stage inbox in the game of ``slug``: title, speakers,
    audience; calls ``inboxes.services.do_create_stage_inbox``. Anyone but the game's Procurator gets the 404 of
    a missing page, alike for a game that does not exist."""
    game = staff_game(request, slug)
    form = StageInboxForm(request.POST if request.method == "POST" else None, game=game)
    if form.is_valid():
        try:
            inbox = inbox_services.do_create_stage_inbox(
                game, title=form.cleaned_data["title"], speakers=form.cleaned_data["speakers"],
                audience=form.cleaned_data["audience"], acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("The stage “%(title)s” is open.") % {"title": inbox.title})
            return HttpResponseRedirect(reverse("admin:inboxes_inbox_change", args=[inbox.public_id],
                                                current_app=staff_admin_site.name))
    context = {**staff_admin_site.each_context(request), "title": _("Open a stage"), "subtitle": game.title,
               "form": form, "game": game}
    request.current_app = staff_admin_site.name
    return TemplateResponse(request, "staff_admin/stage_inbox.html", context)


@register_urls(tool="stage")
def _urls(site) -> list:
    """The stage page."""
    return [path("games/<slug:slug>/stage/", site.admin_view(stage_inbox_view), name="stage_inbox")]


@register_dashboard_links(order=10)
def _game_links(request, role) -> list[tuple[str, str]]:
    """Residents, inboxes, memberships and messages of the role's game (the changelists apply the role's scope:
    links narrow to the game only)."""
    game_scope = urlencode({"game__slug__exact": role.game.slug})
    inbox_scope = urlencode({"inbox__game__slug__exact": role.game.slug})

    def link(model: str, params: str) -> str:
        return reverse(f"admin:{model}_changelist", current_app=staff_admin_site.name) + "?" + params

    return [
        (_("Residents"), link("cities_resident", game_scope)),
        (_("Inboxes"), link("inboxes_inbox", game_scope)),
        (_("Memberships"), link("inboxes_membership", inbox_scope)),
        (_("Messages"), link("inboxes_message", inbox_scope)),
    ]


@register_dashboard_links(order=40, tool="stage")
def _stage_link(request, role) -> list[tuple[str, str]]:
    """The Procurator opens a stage."""
    if role.kind != HOST_STAFF_KIND:
        return []
    return [(_("Open a stage"), reverse("admin:stage_inbox", args=[role.game.slug], current_app=staff_admin_site.name))]
