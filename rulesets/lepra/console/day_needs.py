"""Lepra on the staff console's dashboards, and its speech requests (RULES.md L-NOM, L-VOTE-4, L-COMM, L-COURT,
L-STAFF): the "what needs me now" lines (``staff.console.register_dashboard_needs``) of the Tribune (proxy requests to
accept, suicide declarations to confirm, confrontation and last-word requests, own city and stand-in cities), the
Procurator (speech requests, commissar offers awaiting an answer) and the Arbiter (court cases awaiting a decision);
and the speech requests' pages, for the Procurator and the city's Tribune (``day_policy.can_see_speech_requests``).
The other day pages are ``console.day``'s."""
from __future__ import annotations

from django.contrib import admin
from django.db.models import Exists, OuterRef, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from cities.models import LifeStatus, StaffRole
from rulesets.lepra.models import (
    CommissarOffer,
    CourtCase,
    ProxyRequest,
    ProxyState,
    SpeechRequest,
    SuicideDeclaration,
    VotingSession,
)
from staff.console import (
    Need,
    ScopedRelatedFilter,
    StaffScopedAdmin,
    changelist_url,
    city_staff_scope,
    game_provides,
    register_dashboard_needs,
    role_game_ids,
    staff_admin_site,
    staff_roles_of,
)
from rulesets.lepra.staff_kinds import StaffKind

_changelist = changelist_url
_tribune_scope = city_staff_scope


def _scoped(request, model):
    return staff_admin_site._registry[model].get_queryset(request)


@register_dashboard_needs(tool="voting")
def _tribune_needs(request, role: StaffRole) -> list[Need]:
    if role.kind != StaffKind.TRIBUNE:
        return []
    game, city = role.game, role.city
    proxies = _scoped(request, ProxyRequest).filter(game=game, city=city, day=game.day_number,
                                                    state=ProxyState.REQUESTED).count()
    opened = VotingSession.objects.filter(Q(opened_at__isnull=False) | Q(opens_at__lte=timezone.now()),
                                          city_id=OuterRef("city_id"), day=OuterRef("day"))
    suicides = _scoped(request, SuicideDeclaration).filter(  # only those the Tribune can still decide
        game=game, city=city, day=game.day_number, confirmed_at__isnull=True, refused_at__isnull=True,
        resident__status=LifeStatus.ALIVE,
    ).exclude(Exists(opened)).count()
    speeches = _scoped(request, SpeechRequest).filter(game=game, city=city, day=game.day_number).count()
    return [
        Need("proxy", _("Proxy requests to accept"), proxies,
             _changelist("lepra_proxyrequest", city=city, state__exact=ProxyState.REQUESTED,
                         day=game.day_number)),
        Need("suicide", _("Suicide declarations to confirm"), suicides,
             _changelist("lepra_suicidedeclaration", city=city, day=game.day_number)),
        Need("speech", _("Confrontation and last-word requests"), speeches,
             _changelist("lepra_speechrequest", city=city, day=game.day_number)),
    ]


@register_dashboard_needs
def _procurator_needs(request, role: StaffRole) -> list[Need]:
    if role.kind != StaffKind.PROCURATOR:
        return []
    game = role.game
    needs = []
    if game_provides(game, "voting"):
        speeches = _scoped(request, SpeechRequest).filter(game=game, day=game.day_number).count()
        needs.append(Need("speech", _("Confrontation and last-word requests"), speeches,
                          _changelist("lepra_speechrequest", game=game, day=game.day_number)))
    if game_provides(game, "commissar_offers"):
        offers = CommissarOffer.objects.filter(game=game, answered_at__isnull=True).count()
        needs.append(Need("commissar", _("Commissar offers awaiting an answer"), offers,
                          reverse("game_setup", args=[game.slug])))
    return needs


@register_dashboard_needs(tool="court")
def _arbiter_needs(request, role: StaffRole) -> list[Need]:
    if role.kind != StaffKind.ARBITER:
        return []
    cases = _scoped(request, CourtCase).filter(game=role.game, decided_at__isnull=True).count()
    return [Need("court", _("Court cases awaiting a decision"), cases,
                 _changelist("lepra_courtcase", game=role.game))]


@admin.register(SpeechRequest, site=staff_admin_site)
class StaffSpeechRequestAdmin(StaffScopedAdmin):
    """Confrontation and last-word requests: the city's Tribune and the Procurator."""
    console_tool = "voting"

    list_display = ("resident", "kind", "other", "note", "day", "at")
    list_filter = (("game", ScopedRelatedFilter), ("city", ScopedRelatedFilter), "kind", "day")
    city_field = "city"
    fields = ("game", "city", "day", "resident", "kind", "other", "note", "at")
    allowed_lookups = frozenset({"game__slug__exact", "city__public_id__exact", "city__isnull", "kind__exact", "day",
                                 "day__isnull"})

    def has_module_permission(self, request) -> bool:
        return bool(role_game_ids(request, StaffKind.PROCURATOR) or
                    any(r.kind == StaffKind.TRIBUNE for r in staff_roles_of(request)))

    def get_ordering(self, request):
        return ("-day", "at", "id")

    def scoped_queryset(self, request):
        scope = Q(game_id__in=role_game_ids(request, StaffKind.PROCURATOR)) | _tribune_scope(request)
        return SpeechRequest.objects.filter(scope).select_related("game", "city", "resident", "other")
