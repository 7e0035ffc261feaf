"""The Lepra day in the staff console (RULES.md L-DAY-3, L-VOTE, L-NOM-5/6, L-COURT, L-STAFF-6).

Registered on ``staff.console.staff_admin_site`` by ``rulesets.lepra.staff_admin``. Same conventions as
the rest of the console: read-only, policy-scoped querysets (an object outside the scope behaves like a missing
id), and every write is one ``rulesets.lepra.day.services`` call with ``acting_user=request.user``; the service checks the
persona and the state, writes the ``GameEvent`` audit row, and its ``RuleViolation`` message is shown as is.

Scopes:

* voting sessions: a Tribune's own city; the Procurator and the Arbiter: every city of the games they staff;
* proxy requests and suicide declarations: requests made in a personal inbox, whose content only the resident
  and the city's Tribune may know (L-STAFF-6): the Tribune's own city, nobody else;
* court cases: the Arbiter and the Procurator of the game (the judges are residents and vote on the site).

Actions: the Tribune opens, extends and closes voting, accepts proxies (L-NOM-6), confirms or refuses suicides
before the planned opening (L-NOM-5); the Arbiter puts a closed session's result before the court (L-COURT-1) and closes a case
(L-COURT-3/4), and chooses the court's procedure on a page of its own (L-COURT-3). The Tribune also schedules
today's voting from a page linked on the dashboard (L-DAY-3).
"""
from __future__ import annotations

from zoneinfo import ZoneInfo

from django.contrib import admin, messages
from django.db.models import Q
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from cities.models import City, LifeStatus, Resident
from kernel.errors import RuleViolation
from kernel.form_fields import ObjectChoiceField
from rulesets.lepra.console.clock import pending_events
from rulesets.lepra.court import judge_services
from rulesets.lepra.court import services as court_services
from rulesets.lepra.court.services import court_procedure_of, court_procedure_text, do_set_court_procedure
from rulesets.lepra.day import services
from rulesets.lepra.day.forms import (
    CourtDeadlineForm,
    CourtProcedureForm,
    ElectionProxyForm,
    ExtendVotingForm,
    JudgeElectionForm,
    RecusalForm,
    ScheduleVotingForm,
)
from rulesets.lepra.staff_kinds import StaffKind
from staff.console import (
    ScopedRelatedFilter,
    StaffScopedAdmin,
    action_page,
    bound_form,
    changelist_url,
    city_staff_scope,
    confirm_action,
    register_dashboard_links,
    register_urls,
    role_game_ids,
    staff_admin_site,
    staff_game,
    staff_roles_of,
)
from rulesets.lepra.models import (
    CityJudge,
    CourtCase,
    JudgeElection,
    ProxyRequest,
    RemovalDemand,
    SuicideDeclaration,
    VotingSession,
)


def _tribune_cities(request) -> list[tuple[int, int]]:
    """(game id, city id) of each Tribune role of the request's user."""
    return [(r.game_id, r.city_id) for r in staff_roles_of(request) if r.kind == StaffKind.TRIBUNE]


def _procurator_or_arbiter_games(request) -> set[int]:
    return role_game_ids(request, StaffKind.PROCURATOR) | role_game_ids(request, StaffKind.ARBITER)


_tribune_scope = city_staff_scope


def _local(game, moment) -> str:
    return moment.astimezone(ZoneInfo(game.time_zone)).strftime("%Y-%m-%d %H:%M")


def _each(request, objects, call, success) -> None:
    """``call(obj)`` for each object; report each success (``success(obj)``) and each refusal as the service
    wrote it."""
    for obj in objects:
        try:
            call(obj)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, success(obj))


# --------------------------------------------------------------------------------------------------------------
# Voting sessions
# --------------------------------------------------------------------------------------------------------------

@admin.action(description=gettext_lazy("Open now"))
def open_voting(modeladmin, request, queryset):
    """The Tribune opens voting now (L-VOTE-1): ``do_open_voting``."""
    _each(request, queryset.select_related("city", "game"),
          lambda s: services.do_open_voting(s, acting_user=request.user),
          lambda s: _("Voting in %(city)s is open.") % {"city": s.city.name})


@admin.action(description=gettext_lazy("Close now"))
def close_voting(modeladmin, request, queryset):
    """The Tribune closes voting now (L-VOTE-6): ``do_close_voting``, after a confirmation page."""
    sessions = list(queryset.select_related("city", "game"))
    confirm = None if not sessions else confirm_action(
        modeladmin, request, "close_voting", title=_("Close the voting now?"),
        consequence=_("Voting closes at once in: %(cities)s. No vote is accepted after this moment and the result "
                      "is posted.") % {"cities": ", ".join(s.city.name for s in sessions)},
        confirm_label=_("Close voting now"))
    if confirm is not None:
        return confirm
    _each(request, sessions,
          lambda s: services.do_close_voting(s, acting_user=request.user),
          lambda s: _("Voting in %(city)s is closed.") % {"city": s.city.name})


def _one_session(request, queryset) -> VotingSession | None:
    sessions = list(queryset.select_related("city", "game")[:2])
    if len(sessions) > 1:
        messages.error(request, _("Choose one voting session at a time."))
        return None
    return sessions[0] if sessions else None


def _session_target(session: VotingSession) -> list[tuple[int, str]]:
    return [(session.pk, _("%(city)s, day %(day)d") % {"city": session.city.name, "day": session.day})]


@admin.action(description=gettext_lazy("Extend"))
def extend_voting(modeladmin, request, queryset):
    """The Tribune moves the close of open voting (L-DAY-3): the new time in the game's zone, then
    ``do_extend_voting``."""
    session = _one_session(request, queryset)
    if session is None:
        return None
    form = bound_form(request, ExtendVotingForm, time_zone=session.game.time_zone)
    if form.is_valid():
        closes_at = form.cleaned_data["closes_at"]
        _each(request, [session], lambda s: services.do_extend_voting(s, closes_at, acting_user=request.user),
              lambda s: _("Voting in %(city)s now closes at %(time)s (%(tz)s).")
              % {"city": s.city.name, "time": _local(s.game, closes_at), "tz": s.game.time_zone})
        return None
    return action_page(modeladmin, request, action="extend_voting", title=_("Extend voting"),
                        targets=_session_target(session), form=form, submit=_("Extend"))


@admin.action(description=gettext_lazy("Put before the court"))
def put_before_court(modeladmin, request, queryset):
    """The Arbiter puts a closed session's result before the Supreme Court until a deadline in the game's zone
    (L-COURT-1): ``do_put_before_court``."""
    session = _one_session(request, queryset)
    if session is None:
        return None
    form = bound_form(request, CourtDeadlineForm, time_zone=session.game.time_zone)
    if form.is_valid():
        deadline = form.cleaned_data["deadline"]
        _each(request, [session], lambda s: court_services.do_put_before_court(s, deadline, acting_user=request.user),
              lambda s: _("The result of %(city)s is before the court until %(time)s (%(tz)s).")
              % {"city": s.city.name, "time": _local(s.game, deadline), "tz": s.game.time_zone})
        return None
    return action_page(modeladmin, request, action="put_before_court", title=_("Put before the court"),
                        targets=_session_target(session), form=form, submit=_("Put before the court"))


@admin.register(VotingSession, site=staff_admin_site)
class StaffVotingSessionAdmin(StaffScopedAdmin):
    """Execution voting sessions: the Tribune's own city; every city for the Procurator and the Arbiter."""
    console_tool = "voting"

    list_display = ("city", "day", "opens_at", "closes_at", "opened_at", "closed_at")
    list_filter = (("game", ScopedRelatedFilter), ("city", ScopedRelatedFilter), "day")
    fields = ("game", "city", "day", "opens_at", "closes_at", "opened_at", "closed_at")
    allowed_lookups = frozenset({"game__slug__exact", "game__isnull", "city__public_id__exact", "city__isnull", "day",
                                 "day__isnull"})
    actions = (open_voting, extend_voting, close_voting, put_before_court)

    def has_module_permission(self, request) -> bool:
        return bool(_tribune_cities(request) or _procurator_or_arbiter_games(request))

    def get_ordering(self, request):
        return ("-day", "city__number", "id")

    def offers_action(self, request, name: str) -> bool:
        if name in ("open_voting", "extend_voting", "close_voting"):
            return bool(_tribune_cities(request))
        if name == "put_before_court":
            return bool(role_game_ids(request, StaffKind.ARBITER))
        return True

    def scoped_queryset(self, request):
        games = _procurator_or_arbiter_games(request)
        return VotingSession.objects.filter(Q(game_id__in=games) | _tribune_scope(request)).select_related(
            "game", "city")


# --------------------------------------------------------------------------------------------------------------
# Proxy requests and suicide declarations (the Tribune's inbox, L-STAFF-6)
# --------------------------------------------------------------------------------------------------------------

@admin.action(description=gettext_lazy("Accept"))
def accept_proxies(modeladmin, request, queryset):
    """The Tribune accepts proxy votes (L-NOM-6): ``do_accept_proxy`` for each."""
    _each(request, queryset.select_related("resident", "nominee"),
          lambda p: services.do_accept_proxy(p, acting_user=request.user),
          lambda p: _("The proxy vote of %(name)s for %(nominee)s is accepted.")
          % {"name": p.resident.name, "nominee": p.nominee.name})


@admin.register(ProxyRequest, site=staff_admin_site)
class StaffProxyRequestAdmin(StaffScopedAdmin):
    """Proxy vote requests (L-NOM-6) of the Tribune's own city: personal inbox content (L-STAFF-6)."""
    console_tool = "voting"

    list_display = ("resident", "nominee", "day", "state", "requested_at", "accepted_at")
    list_filter = (("city", ScopedRelatedFilter), "state", "day")
    fields = ("game", "city", "day", "resident", "nominee", "state", "requested_at", "accepted_at")
    allowed_lookups = frozenset({"game__slug__exact", "city__public_id__exact", "city__isnull", "state__exact",
                                 "state__isnull", "day", "day__isnull"})
    actions = (accept_proxies,)

    def has_module_permission(self, request) -> bool:
        return bool(_tribune_cities(request))

    def get_ordering(self, request):
        return ("-day", "requested_at", "id")

    def offers_action(self, request, name: str) -> bool:
        return bool(_tribune_cities(request))

    def scoped_queryset(self, request):
        return ProxyRequest.objects.filter(_tribune_scope(request)).select_related("game", "city", "resident",
                                                                                   "nominee")


@admin.action(description=gettext_lazy("Confirm"))
def confirm_suicides(modeladmin, request, queryset):
    """The Tribune confirms suicides before the planned opening of the voting (L-NOM-5): ``do_confirm_suicide``
    for each."""
    _each(request, queryset.select_related("resident"),
          lambda d: services.do_confirm_suicide(d, acting_user=request.user),
          lambda d: _("The suicide of %(name)s is confirmed.") % {"name": d.resident.name})


@admin.action(description=gettext_lazy("Refuse"))
def refuse_suicides(modeladmin, request, queryset):
    """The Tribune refuses suicide declarations before the planned opening of the voting (L-NOM-5):
    ``do_refuse_suicide`` for each; a declaration not refused by then is confirmed at the opening."""
    _each(request, queryset.select_related("resident"),
          lambda d: services.do_refuse_suicide(d, acting_user=request.user),
          lambda d: _("The suicide declaration of %(name)s is refused.") % {"name": d.resident.name})


@admin.register(SuicideDeclaration, site=staff_admin_site)
class StaffSuicideDeclarationAdmin(StaffScopedAdmin):
    """Suicide declarations (L-NOM-5) of the Tribune's own city: personal inbox content (L-STAFF-6)."""
    console_tool = "voting"

    list_display = ("resident", "day", "declared_at", "confirmed_at", "refused_at", "applied_at")
    list_filter = (("city", ScopedRelatedFilter), "day")
    fields = ("game", "city", "day", "resident", "declared_at", "confirmed_at", "refused_at", "applied_at")
    allowed_lookups = frozenset({"game__slug__exact", "city__public_id__exact", "city__isnull", "day", "day__isnull"})
    actions = (confirm_suicides, refuse_suicides)

    def has_module_permission(self, request) -> bool:
        return bool(_tribune_cities(request))

    def get_ordering(self, request):
        return ("-day", "declared_at", "id")

    def offers_action(self, request, name: str) -> bool:
        return bool(_tribune_cities(request))

    def scoped_queryset(self, request):
        return SuicideDeclaration.objects.filter(_tribune_scope(request)).select_related("game", "city",
                                                                                         "resident")


# --------------------------------------------------------------------------------------------------------------
# Court cases (the Arbiter; the Procurator reads)
# --------------------------------------------------------------------------------------------------------------

@admin.action(description=gettext_lazy("Close at the deadline now"))
def close_court_cases(modeladmin, request, queryset):
    """The Arbiter closes cases now (L-COURT-3/4): ``do_close_court_case`` for each."""
    def success(case):
        case.refresh_from_db()
        return _("The court case of %(city)s is closed: %(name)s is executed.") % {
            "city": case.city.name, "name": case.sentenced.name}

    _each(request, queryset.select_related("city", "game"),
          lambda c: court_services.do_close_court_case(c, acting_user=request.user), success)


@admin.register(CourtCase, site=staff_admin_site)
class StaffCourtCaseAdmin(StaffScopedAdmin):
    """Supreme Court cases (L-COURT) of the games where the user is the Arbiter or the Procurator."""
    console_tool = "court"

    list_display = ("city", "day", "leader", "deadline", "opened_at", "decided_at", "sentenced", "fallback")
    list_filter = (("game", ScopedRelatedFilter), ("city", ScopedRelatedFilter), "day")
    fields = ("game", "city", "day", "leader", "deadline", "opened_at", "decided_at", "sentenced", "fallback")
    allowed_lookups = frozenset({"game__slug__exact", "game__isnull", "city__public_id__exact", "city__isnull", "day",
                                 "day__isnull"})
    actions = (close_court_cases,)

    def get_ordering(self, request):
        return ("-day", "city__number", "id")

    def offers_action(self, request, name: str) -> bool:
        return bool(role_game_ids(request, StaffKind.ARBITER))

    def scoped_queryset(self, request):
        return CourtCase.objects.filter(game_id__in=_procurator_or_arbiter_games(request)).select_related(
            "game", "city", "leader", "sentenced")

    def has_module_permission(self, request) -> bool:
        return bool(_procurator_or_arbiter_games(request))


# --------------------------------------------------------------------------------------------------------------
# The Tribune's "Schedule voting" page (L-DAY-3)
# --------------------------------------------------------------------------------------------------------------

def schedule_voting_view(request, city_id: str):
    """The Tribune of the city of public id ``city_id`` sets today's voting (times in the game's zone):
    ``do_schedule_voting``; a refusal (L-DAY-3) is shown in the form and changes nothing; after a change the page
    comes back listing the city's pending scheduled events at their new times. Anyone else gets the 404 of a
    missing page, alike for a city that does not exist."""
    role = next((r for r in staff_roles_of(request)
                 if r.kind == StaffKind.TRIBUNE and r.city is not None and r.city.public_id == city_id), None)
    if role is None:
        raise Http404
    city = City.objects.select_related("game").get(pk=role.city_id)
    form = ScheduleVotingForm(request.POST if request.method == "POST" else None, time_zone=city.game.time_zone)
    if form.is_valid():
        opens_at, closes_at = form.cleaned_data["opens_at"], form.cleaned_data["closes_at"]
        try:
            services.do_schedule_voting(city, opens_at, closes_at, acting_user=request.user)
        except RuleViolation as exc:
            form.add_error(None, str(exc))  # shown in the form ; nothing changed
        else:
            messages.success(request, _("Voting in %(city)s is scheduled from %(opens)s to %(closes)s (%(tz)s).") % {
                "city": city.name, "opens": _local(city.game, opens_at), "closes": _local(city.game, closes_at),
                "tz": city.game.time_zone})
            return HttpResponseRedirect(reverse("admin:schedule_voting", args=[city.public_id],
                                                current_app=staff_admin_site.name))
    context = {**staff_admin_site.each_context(request), "title": _("Schedule voting"),
               "subtitle": f"{city.game.title} · {city.name}", "form": form, "city": city, "game": city.game,
               "events": pending_events(city.game, city=city)}
    request.current_app = staff_admin_site.name
    return TemplateResponse(request, "lepra/console/schedule_voting.html", context)


# --------------------------------------------------------------------------------------------------------------
# The Arbiter's "Court procedure" page (L-COURT-3)
# --------------------------------------------------------------------------------------------------------------

def court_procedure_view(request, slug: str):
    """The Arbiter of the game of ``slug`` chooses how the court confirms a sentence (``do_set_court_procedure``,
    L-COURT-3); the page shows the procedure in force, a refusal (the court has sat) is shown in the form and
    changes nothing. Anyone but the game's Arbiter gets the 404 of a missing page."""
    game = staff_game(request, slug, kinds=(StaffKind.ARBITER,))
    current = court_procedure_of(game)
    form = CourtProcedureForm(request.POST if request.method == "POST" else None, initial={"procedure": current})
    if form.is_valid():
        try:
            do_set_court_procedure(game, form.cleaned_data["procedure"], acting_user=request.user)
        except RuleViolation as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, _("The court's procedure is set and announced in the court's inbox."))
            return HttpResponseRedirect(reverse("admin:court_procedure", args=[game.slug],
                                                current_app=staff_admin_site.name))
    context = {**staff_admin_site.each_context(request), "title": _("The court's procedure"),
               "subtitle": game.title, "form": form, "game": game,
               "current": court_procedure_text(game, current), "submit_label": _("Set the procedure")}
    request.current_app = staff_admin_site.name
    return TemplateResponse(request, "lepra/console/court_procedure.html", context)


# --------------------------------------------------------------------------------------------------------------
# Judges: the Arbiter's elections, removals and recusals; the Tribune passes the candidates
# --------------------------------------------------------------------------------------------------------------

def _arbiter_games(request) -> set[int]:
    return role_game_ids(request, StaffKind.ARBITER)


def _one(request, queryset, what: str):
    objects = list(queryset[:2])
    if len(objects) > 1:
        messages.error(request, _("Choose one %(what)s at a time.") % {"what": what})
        return None
    return objects[0] if objects else None


class ElectionScheduleForm(JudgeElectionForm):
    """The Arbiter's schedule page form: the city, then the election's times in the game's zone."""

    def __init__(self, *args, cities, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields = {"city": ObjectChoiceField(label=gettext_lazy("City"), queryset=cities),
                       **self.fields}


def schedule_election_view(request, slug: str):
    """The Arbiter's "Schedule" page of the game of ``slug`` (L-DAY-4, L-JUDGE): a city's judge election times through
    ``do_schedule_judge_election``; a refusal is shown in the form and changes nothing; the page lists the game's
    pending election events in the game's zone. Anyone but the game's Arbiter gets a 404."""
    game = staff_game(request, slug, kinds=(StaffKind.ARBITER,))
    cities = City.objects.filter(game=game).order_by("number")
    form = ElectionScheduleForm(request.POST if request.method == "POST" else None, time_zone=game.time_zone,
                                cities=cities)
    if form.is_valid():
        city = form.cleaned_data["city"]
        opens_at, closes_at = form.cleaned_data["opens_at"], form.cleaned_data["closes_at"]
        try:
            judge_services.do_schedule_judge_election(city, opens_at, closes_at, acting_user=request.user)
        except RuleViolation as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, _("The judge election of %(city)s is scheduled from %(opens)s to %(closes)s "
                                        "(%(tz)s).") % {"city": city.name, "opens": _local(game, opens_at),
                                                        "closes": _local(game, closes_at), "tz": game.time_zone})
            return HttpResponseRedirect(reverse("admin:schedule_election", args=[game.slug],
                                                current_app=staff_admin_site.name))
    context = {**staff_admin_site.each_context(request), "title": _("Schedule the judge election"),
               "subtitle": game.title, "form": form, "game": game,
               "events": pending_events(game, kinds=("election_open", "election_close"))}
    request.current_app = staff_admin_site.name
    return TemplateResponse(request, "lepra/console/schedule_voting.html", context)


@admin.action(description=gettext_lazy("Schedule the judge election"))
def schedule_judge_election(modeladmin, request, queryset):
    """The Arbiter schedules a city's judge election (L-DAY-4): times in the game's zone, then
    ``do_schedule_judge_election``."""
    city = _one(request, queryset.select_related("game"), _("city"))
    if city is None:
        return None
    form = bound_form(request, JudgeElectionForm, time_zone=city.game.time_zone)
    if form.is_valid():
        opens_at, closes_at = form.cleaned_data["opens_at"], form.cleaned_data["closes_at"]
        _each(request, [city],
              lambda c: judge_services.do_schedule_judge_election(c, opens_at, closes_at, acting_user=request.user),
              lambda c: _("The judge election of %(city)s is scheduled from %(opens)s to %(closes)s (%(tz)s).") % {
                  "city": c.name, "opens": _local(c.game, opens_at), "closes": _local(c.game, closes_at),
                  "tz": c.game.time_zone})
        return None
    return action_page(modeladmin, request, action="schedule_judge_election", title=_("Schedule the judge election"),
                        targets=[(city.pk, city.name)], form=form, submit=_("Schedule"))


@admin.action(description=gettext_lazy("Record the judge's recusal"))
def record_recusal(modeladmin, request, queryset):
    """The Arbiter records the resignation of a city's judge with the time it was received (L-JUDGE-9):
    ``do_recuse_judge``."""
    city = _one(request, queryset.select_related("game"), _("city"))
    if city is None:
        return None
    judge = judge_services.sitting_judge_of(city)
    if judge is None:
        messages.error(request, _("%(city)s has no sitting judge.") % {"city": city.name})
        return None
    form = bound_form(request, RecusalForm, time_zone=city.game.time_zone)
    if form.is_valid():
        received_at = form.cleaned_data["received_at"]
        _each(request, [judge], lambda j: judge_services.do_recuse_judge(j, acting_user=request.user, received_at=received_at),
              lambda j: _("Judge %(name)s has resigned.") % {"name": j.name})
        return None
    return action_page(modeladmin, request, action="record_recusal", title=_("Record the judge's recusal"),
                        targets=[(city.pk, f"{city.name} · {judge.name}")], form=form, submit=_("Record"))


@admin.register(CityJudge, site=staff_admin_site)
class StaffCityJudgeAdmin(StaffScopedAdmin):
    """Cities with their sitting judge (public, L-JUDGE-1) and whether an election is needed (L-JUDGE-2), for the
    Arbiter and the Procurator of the game."""
    console_tool = "judges"

    list_display = ("name", "game", "judge", "needs_election")
    list_filter = (("game", ScopedRelatedFilter),)
    fields = ("game", "number", "name")
    allowed_lookups = frozenset({"game__slug__exact", "game__isnull"})
    actions = (schedule_judge_election, record_recusal)

    @admin.display(description=gettext_lazy("Judge"))
    def judge(self, obj):
        judge = judge_services.sitting_judge_of(obj)
        return judge.name if judge else "—"

    @admin.display(description=gettext_lazy("Needs an election"), boolean=True)
    def needs_election(self, obj):
        return judge_services.city_needs_judge_election(obj)

    def get_ordering(self, request):
        return ("game", "number")

    def offers_action(self, request, name: str) -> bool:
        return bool(_arbiter_games(request))

    def has_module_permission(self, request) -> bool:
        return bool(_procurator_or_arbiter_games(request))

    def scoped_queryset(self, request):
        return CityJudge.objects.filter(game_id__in=_procurator_or_arbiter_games(request)).select_related("game")


@admin.action(description=gettext_lazy("Pass the candidates to the Arbiter"))
def pass_candidates(modeladmin, request, queryset):
    """The Tribune passes the list of candidates (L-JUDGE-3): ``do_pass_candidates``."""
    _each(request, queryset.select_related("city", "game"),
          lambda e: judge_services.do_pass_candidates(e, acting_user=request.user),
          lambda e: _("The candidates of %(city)s are passed to the Arbiter.") % {"city": e.city.name})


@admin.action(description=gettext_lazy("Open the election now"))
def open_election(modeladmin, request, queryset):
    """The Arbiter opens the precincts now (L-JUDGE-4): ``do_open_election``."""
    _each(request, queryset.select_related("city", "game"),
          lambda e: judge_services.do_open_election(e, acting_user=request.user),
          lambda e: _("The judge election of %(city)s is open.") % {"city": e.city.name})


@admin.action(description=gettext_lazy("Close the election now"))
def close_election(modeladmin, request, queryset):
    """The Arbiter closes the election now (L-JUDGE-5): ``do_close_election``."""
    _each(request, queryset.select_related("city", "game"),
          lambda e: judge_services.do_close_election(e, acting_user=request.user),
          lambda e: _("The judge election of %(city)s is closed.") % {"city": e.city.name})


@admin.action(description=gettext_lazy("Record a proxy ballot"))
def record_election_proxy(modeladmin, request, queryset):
    """The Arbiter records a proxy ballot cast at the opening (L-JUDGE-6): ``do_record_election_proxy``."""
    election = _one(request, queryset.select_related("city", "game"), _("election"))
    if election is None:
        return None
    candidates = Resident.objects.filter(pk__in=[c.pk for c in judge_services.candidates_of(election)])
    form = bound_form(request, ElectionProxyForm, candidates=candidates,
                       voters=Resident.objects.filter(city=election.city, status=LifeStatus.ALIVE))
    if form.is_valid():
        data = form.cleaned_data
        _each(request, [election],
              lambda e: judge_services.do_record_election_proxy(e, data["voter"], data["candidate"], data["ballot"],
                                                          acting_user=request.user),
              lambda e: _("The proxy ballot of %(name)s is recorded.") % {"name": data["voter"].name})
        return None
    return action_page(modeladmin, request, action="record_election_proxy", title=_("Record a proxy ballot"),
                        targets=[(election.pk, str(election))], form=form, submit=_("Record"))


@admin.register(JudgeElection, site=staff_admin_site)
class StaffJudgeElectionAdmin(StaffScopedAdmin):
    """Judge elections (L-JUDGE-2..6): the Arbiter's and the Procurator's games; a Tribune's own city (the Tribune
    collects the candidates, L-JUDGE-3). Everything shown here is public (announced in the city inbox)."""
    console_tool = "judges"

    list_display = ("city", "day", "reason", "opens_at", "closes_at", "candidate_names", "opened_at", "closed_at",
                    "winner")
    list_filter = (("game", ScopedRelatedFilter), ("city", ScopedRelatedFilter), "day")
    fields = ("game", "city", "day", "reason", "announced_at", "opens_at", "closes_at", "candidates_passed_at",
              "opened_at", "closed_at", "winner")
    allowed_lookups = frozenset({"game__slug__exact", "game__isnull", "city__public_id__exact", "city__isnull", "day",
                                 "day__isnull"})
    actions = (pass_candidates, record_election_proxy, open_election, close_election)

    @admin.display(description=gettext_lazy("Candidates"))
    def candidate_names(self, obj):
        return ", ".join(c.name for c in judge_services.candidates_of(obj)) or "—"

    def get_ordering(self, request):
        return ("-opens_at", "city__number", "id")

    def offers_action(self, request, name: str) -> bool:
        if name == "pass_candidates":
            return bool(_tribune_cities(request))
        return bool(_arbiter_games(request))

    def has_module_permission(self, request) -> bool:
        return bool(_tribune_cities(request) or _procurator_or_arbiter_games(request))

    def scoped_queryset(self, request):
        return JudgeElection.objects.filter(Q(game_id__in=_procurator_or_arbiter_games(request))
                                            | _tribune_scope(request)).select_related("game", "city", "winner")


@admin.action(description=gettext_lazy("Announce the removal"))
def remove_judge(modeladmin, request, queryset):
    """The Arbiter announces the removal demanded by a valid demand (L-JUDGE-8): ``do_remove_judge``; the
    election is then scheduled from the city judges list."""
    _each(request, queryset.select_related("judge", "city", "game"),
          lambda d: judge_services.do_remove_judge(d, acting_user=request.user),
          lambda d: _("Judge %(name)s is removed.") % {"name": d.judge.name})


@admin.register(RemovalDemand, site=staff_admin_site)
class StaffRemovalDemandAdmin(StaffScopedAdmin):
    """Judge removal demands (L-JUDGE-8, L-INBOX-11): the Procurator reads them all (his grant on removal inboxes);
    the Arbiter only the valid ones (he is added on validity)."""
    console_tool = "judges"

    list_display = ("city", "day", "judge", "organizer", "opened_at", "considered", "valid_at", "removed_at")
    list_filter = (("game", ScopedRelatedFilter), ("city", ScopedRelatedFilter), "day")
    fields = ("game", "city", "day", "judge", "organizer", "opened_at", "deadline", "considered", "valid_at",
              "removed_at")
    allowed_lookups = frozenset({"game__slug__exact", "game__isnull", "city__public_id__exact", "city__isnull", "day",
                                 "day__isnull"})
    actions = (remove_judge,)

    def get_ordering(self, request):
        return ("-day", "opened_at", "id")

    def offers_action(self, request, name: str) -> bool:
        return bool(_arbiter_games(request))

    def has_module_permission(self, request) -> bool:
        return bool(_procurator_or_arbiter_games(request))

    def scoped_queryset(self, request):
        return RemovalDemand.objects.filter(
            Q(game_id__in=role_game_ids(request, StaffKind.PROCURATOR))
            | Q(game_id__in=_arbiter_games(request), valid_at__isnull=False)).select_related(
                "game", "city", "judge", "organizer")


# --------------------------------------------------------------------------------------------------------------
# This app's pages and dashboard links on the console (staff.console)
# --------------------------------------------------------------------------------------------------------------

@register_urls(tool="voting")
def _urls(site) -> list:
    """The Tribune's voting times (L-DAY-3)."""
    return [path("cities/<pid:city_id>/schedule-voting/", site.admin_view(schedule_voting_view),
                 name="schedule_voting")]


@register_urls(tool="judges")
def _judge_urls(site) -> list:
    """The Arbiter's election times (L-JUDGE-4)."""
    return [path("games/<slug:slug>/schedule-election/", site.admin_view(schedule_election_view),
                 name="schedule_election")]


@register_urls(tool="court")
def _court_urls(site) -> list:
    """The Arbiter's court procedure (L-COURT-3)."""
    return [path("games/<slug:slug>/court-procedure/", site.admin_view(court_procedure_view),
                 name="court_procedure")]


@register_dashboard_links(order=0, tool="voting")
def _schedule_links(request, role) -> list[tuple[str, str]]:
    """The "Schedule" entry of the Tribune (voting times) and of the Arbiter (election times)."""
    target = {StaffKind.TRIBUNE: ("admin:schedule_voting", role.city.public_id if role.city else None),
              StaffKind.ARBITER: ("admin:schedule_election", role.game.slug)}.get(role.kind)
    if target is None:
        return []
    return [(_("Schedule: times and pending events"), reverse(target[0], args=[target[1]],
                                                               current_app=staff_admin_site.name))]


def _changelist(model: str, game) -> str:
    return changelist_url(model, game=game)


@register_dashboard_links(order=20, tool="voting")
def _day_links(request, role) -> list[tuple[str, str]]:
    """Voting sessions (not the Consigliere's), the Tribune's proxy requests and suicide declarations."""
    links = []
    if role.kind != StaffKind.CONSIGLIERE:
        links.append((_("Voting sessions"), _changelist("lepra_votingsession", role.game)))
    if role.kind == StaffKind.TRIBUNE:
        links += [(_("Proxy requests"), _changelist("lepra_proxyrequest", role.game)),
                  (_("Suicide declarations"), _changelist("lepra_suicidedeclaration", role.game))]
    return links


@register_dashboard_links(order=30, tool="court")
def _court_links(request, role) -> list[tuple[str, str]]:
    """Court cases, for the Procurator and the Arbiter (L-COURT); the court's procedure, for the Arbiter
    (L-COURT-3)."""
    if role.kind not in (StaffKind.PROCURATOR, StaffKind.ARBITER):
        return []
    links = [(_("Court cases"), _changelist("lepra_courtcase", role.game))]
    if role.kind == StaffKind.ARBITER:
        links.append((_("The court's procedure"), reverse("admin:court_procedure", args=[role.game.slug],
                                                          current_app=staff_admin_site.name)))
    return links
