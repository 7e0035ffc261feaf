"""The Procurator's sanctions in the staff console (``/staff/``): play bans. Same conventions as
``staff.staff_admin``: read-only, policy-scoped querysets, a whitelist of URL lookups, every write one service call
with ``acting_user=request.user``.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import Resolver404, path, resolve, reverse
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from cities.forms import WallClockField, wall_clock_to_utc
from cities.models import HOST_STAFF_KIND, Game
from inboxes import policies
from inboxes.models import Message
from inboxes.selectors import message_at_position
from kernel.errors import RuleViolation
from kernel.form_fields import ObjectChoiceField
from staff.console import (
    ScopedRelatedFilter,
    StaffScopedAdmin,
    action_page,
    bound_form,
    changelist_url,
    current_viewer,
    register_dashboard_links,
    register_urls,
    role_game_ids,
    staff_admin_site,
    staff_game,
)

from . import services
from .models import PlayBan, PlayBanOffence

_changelist = changelist_url


# --------------------------------------------------------------------------------------------------------------
# Play bans
# --------------------------------------------------------------------------------------------------------------

def message_url(message: Message) -> str:
    """The link to ``message`` on its thread page (its page and its ``#n<position>`` anchor)."""
    before = Q(received_at__lt=message.received_at) | Q(received_at=message.received_at, pk__lt=message.pk)
    position = Message.objects.filter(inbox_id=message.inbox_id).filter(before).count() + 1
    page = (position - 1) // settings.MAFIA_MESSAGES_PER_PAGE + 1
    return f"{reverse('inbox_thread', args=[message.inbox.public_id])}?page={page}#n{position}"


_ANCHOR = re.compile(r"^n(\d+)$")


def message_from_link(user, link: str) -> Message:
    """The message a thread link points at (``/inboxes/<id>/?page=P#nK`` or ``/inboxes/<id>/nK/edit/``), when
    ``user`` may read its inbox (``policies.access_inbox_by_id``). Raises ``ValidationError`` otherwise, the same
    for a missing and a forbidden message."""
    error = ValidationError(_("Not a link to a message you may read: %(link)s") % {"link": link[:200]})
    parts = urlsplit(link.strip())
    try:
        match = resolve(parts.path or "/")
    except Resolver404:
        raise error from None
    position = match.kwargs.get("position")
    if match.url_name == "inbox_thread":
        anchor = _ANCHOR.match(parts.fragment or "")
        position = int(anchor.group(1)) if anchor else None
    elif match.url_name not in ("message_edit", "message_hide"):
        raise error
    ids = [v for k, v in match.kwargs.items() if k != "position"]
    if position is None or len(ids) != 1:
        raise error
    try:
        inbox = policies.access_inbox_by_id(user, ids[0])
        return message_at_position(inbox, position)
    except Http404:
        raise error from None


class PlayBanForm(forms.Form):
    """The Procurator's play ban: the player, the offence and what happened, until when (wall clock
    in the game's zone) or for life, and links to the messages that prove it (one per line). The service checks
    everything again."""

    player = ObjectChoiceField(label=gettext_lazy("Player"), queryset=None)
    offence = forms.ChoiceField(label=gettext_lazy("Offence"), choices=PlayBanOffence.choices)
    description = forms.CharField(label=gettext_lazy("What happened"), widget=forms.Textarea(attrs={"rows": 3}),
                                  max_length=services.MAX_TEXT_LENGTH)
    until = WallClockField(label=gettext_lazy("Banned until"), required=False)
    for_life = forms.BooleanField(label=gettext_lazy("For life"), required=False)
    evidence = forms.CharField(label=gettext_lazy("Evidence: links to messages, one per line"),
                               widget=forms.Textarea(attrs={"rows": 4}))

    def __init__(self, *args, game: Game, viewer, **kwargs):
        super().__init__(*args, **kwargs)
        self.viewer = viewer
        self.zone = ZoneInfo(game.time_zone)
        self.fields["player"].queryset = services.players_of(game).order_by("display_name", "username")
        self.fields["player"].label_from_instance = lambda u: u.public_name
        self.fields["until"].help_text = _("Time in the game's time zone (%(tz)s).") % {"tz": self.zone.key}

    def clean_evidence(self):
        lines = [line for line in self.cleaned_data["evidence"].splitlines() if line.strip()]
        found, errors = [], []
        for line in lines:
            try:
                found.append(message_from_link(self.viewer, line))
            except ValidationError as exc:
                errors.extend(exc.messages)
        if errors:
            raise ValidationError(errors)
        return found

    def clean(self):
        data = super().clean()
        until, for_life = data.get("until"), data.get("for_life")
        if for_life and until is not None:
            self.add_error("until", _("Give an end date or “for life”, not both."))
        elif not for_life and until is None and "until" not in self.errors:
            self.add_error("until", _("Give an end date or “for life”."))
        elif until is not None:
            try:
                data["until"] = wall_clock_to_utc(until, self.zone)
            except (ValidationError, OverflowError):
                self.add_error("until", _("This date is out of range."))
        return data



def record_play_ban_view(request, slug: str):
    """The Procurator's page recording a play ban in his game (of ``slug``: ``do_record_play_ban``); a 404 for
    anyone else."""
    game = staff_game(request, slug, services.PLAY_BAN_RECORDERS)
    form = PlayBanForm(request.POST if request.method == "POST" else None, game=game, viewer=request.user)
    if form.is_valid():
        data = form.cleaned_data
        try:
            ban = services.do_record_play_ban(game, data["player"], data["offence"], data["description"],
                                              ends_at=None if data["for_life"] else data["until"],
                                              evidence=data["evidence"], acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("%(name)s is banned from playing.") % {"name": ban.user.public_name})
            return HttpResponseRedirect(_changelist("sanctions_playban", game=game))
    context = {**staff_admin_site.each_context(request), "title": _("Record a play ban"), "subtitle": game.title,
               "form": form, "submit_label": _("Ban from playing")}
    request.current_app = staff_admin_site.name
    return TemplateResponse(request, "staff_admin/staff_form.html", context)


class LiftPlayBanForm(forms.Form):
    """Why a play ban is lifted early."""

    reason = forms.CharField(label=gettext_lazy("Reason"), widget=forms.Textarea(attrs={"rows": 3}),
                             max_length=services.MAX_TEXT_LENGTH)


@admin.action(description=gettext_lazy("Lift early"))
def lift_play_ban(modeladmin, request, queryset):
    """The Procurator lifts one running play ban of his game early, with a reason (``do_lift_play_ban``)."""
    bans = list(queryset.select_related("user")[:2])
    if len(bans) != 1:
        if bans:
            messages.error(request, _("Choose one play ban at a time."))
        return None
    ban = bans[0]
    form = bound_form(request, LiftPlayBanForm)
    if form.is_valid():
        try:
            services.do_lift_play_ban(ban, reason=form.cleaned_data["reason"], acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("The play ban of %(name)s is lifted.") % {"name": ban.user.public_name})
        return None
    return action_page(modeladmin, request, action="lift_play_ban", title=_("Lift the play ban early"),
                        targets=[(ban.pk, ban.user.public_name)], form=form, submit=_("Lift the play ban"))


@admin.register(PlayBan, site=staff_admin_site)
class StaffPlayBanAdmin(StaffScopedAdmin):
    """Play bans recorded in the games where the user is the Procurator, with their evidence: links to the
    messages, shown only while he may read them."""
    console_tool = "play_bans"

    list_display = ("user_name", "offence", "starts_at", "ends_shown", "ended_at", "lifted_at")
    list_filter = (("game", ScopedRelatedFilter), "offence")
    fields = ("game", "user_name", "offence", "description", "starts_at", "ends_shown", "ended_at", "lifted_at",
              "lift_reason", "evidence_links")
    allowed_lookups = frozenset({"game__slug__exact", "offence__exact"})
    actions = (lift_play_ban,)

    def has_module_permission(self, request) -> bool:
        return bool(role_game_ids(request, HOST_STAFF_KIND))

    def get_ordering(self, request):
        return ("-starts_at", "-id")

    def scoped_queryset(self, request):
        return PlayBan.objects.filter(game_id__in=role_game_ids(request, HOST_STAFF_KIND)).select_related(
            "game", "user")

    @admin.display(description=gettext_lazy("player"))
    def user_name(self, obj: PlayBan) -> str:
        return obj.user.public_name

    @admin.display(description=gettext_lazy("until"))
    def ends_shown(self, obj: PlayBan):
        return obj.ends_at if obj.ends_at is not None else _("for life")

    @admin.display(description=gettext_lazy("evidence"))
    def evidence_links(self, obj: PlayBan) -> str:
        ids = list(obj.evidence.values_list("message_id", flat=True))
        shown = policies.readable_messages(current_viewer(), Message.objects.filter(pk__in=ids)).select_related(
            "inbox").order_by("received_at", "pk")
        return format_html_join(mark_safe("<br>"), '<a href="{}">{} · {}</a>',
                                ((message_url(m), m.inbox.title, m.author_name) for m in shown))


@register_dashboard_links(order=61, tool="play_bans")
def _procurator_links(request, role) -> list[tuple[str, str]]:
    if role.kind != HOST_STAFF_KIND:
        return []
    return [(_("Play bans"), _changelist("sanctions_playban", game=role.game)),
            (_("Record a play ban"), reverse("admin:record_play_ban", args=[role.game.slug],
                                             current_app=staff_admin_site.name))]



@register_urls(tool="play_bans")
def extra_urls(site) -> list:
    """The pages this app adds to the staff site (mounted by ``GameStaffAdminSite.get_urls``)."""
    return [path("games/<slug:slug>/play-ban/", site.admin_view(record_play_ban_view), name="record_play_ban")]


__all__ = ["extra_urls", "message_from_link", "message_url"]
