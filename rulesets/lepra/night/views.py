"""Lepra's night page (RULES.md L-NIGHT): godfathers and their elections, the night's decisions, touring, commissar
checks and gifts, and the Procurator's early end of the game (L-WIN-3). Each button posts its own
form to its own URL; each action view parses it, makes one service call (the service decides who may) and redirects
back, or shows the page again with the reason (400/403/409)."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy
from django.views.decorators.http import require_http_methods, require_POST

from cities.i18n import activate_game_language
from cities.models import Alignment, GameStatus, LifeStatus
from cities.ruleset_pages import check_page_section
from cities.selectors import game_get
from inboxes import access, knowledge, policies
from kernel.confirm import confirmation_page
from kernel.errors import InvalidInput, RuleViolation, WrongState, page_status
from kernel.rulesets import ruleset_of
from rulesets.lepra.models import NightActionKind
from rulesets.lepra import game_end_services, seats
from rulesets.lepra.night import services as night_services
from rulesets.lepra.staff_kinds import StaffKind

from . import selectors
from .forms import EndGameForm, GiftForm, NightActionForm, NightTargetForm

# --------------------------------------------------------------------------------------------------------------
# The night page : godfathers, decisions, touring, checks, gifts; the early end (L-WIN-3)
# --------------------------------------------------------------------------------------------------------------

def _night_panels(user, game):
    """Per city the night business ``user`` may see (``knowledge.knows_night_of``): godfather, open election with
    its votes, tonight's decisions, the targets the godfather may choose. Nothing for anyone else."""
    night = night_services.current_night(game)
    touring = night_services.touring_city_for(game, night)
    residents = selectors.living_residents(game)
    panels = []
    for city in selectors.cities_in_order(game):
        if not knowledge.knows_night_of(user, city):
            continue
        election = night_services.open_godfather_election(city)
        godfather = night_services.living_godfather(city)
        votes = list(election.votes.select_related("voter", "candidate")) if election else []
        mafia = [r for r in residents if r.city_id == city.pk and r.alignment == Alignment.MAFIA]
        panels.append({
            "city": city,
            "godfather": godfather,
            "may_decide": knowledge.may_enter_night_decision(user, city, godfather),
            "election": election,
            "votes": votes,
            "mafia": mafia,
            "kill": night_services.last_decision(city, night, NightActionKind.KILL),
            "tour": night_services.last_decision(city, night, NightActionKind.TOUR),
            "kill_targets": [r for r in residents if r.city_id == city.pk and r.alignment == Alignment.HONEST],
            "is_touring": touring is not None and touring.pk == city.pk,
            "tour_targets": [r for r in residents if r.city_id != city.pk and not seats.is_judge(r)],
        })
    return panels


@require_http_methods(["GET", "HEAD"])
def night_page(request, slug: str):
    """The night page (L-NIGHT): the public touring rotation for everyone; for the living mafia of a city and the
    Consigliere, that city's godfather election and night decision (``knowledge.knows_night_of``); for a living
    commissar, the check form and their own checks; for the Consigliere, gifts and fish. Each button posts its
    own form to its own URL (the action views below)."""
    game = _night_game(request, slug)
    return _night_page(request, game, _night_state(request.user, game))


def _night_game(request, slug: str):
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "touring")
    return game


def _night_state(user, game) -> dict:
    """Everything the night page shows ``user``: their seat and roles, the panels of the cities whose night they
    know (``_night_panels``), the pickers (``_night_pickers``) and which of them the page shows (``shown``)."""
    seat = policies.seat_in(user, game)
    is_commissar = seat is not None and seats.is_commissar(seat) and seat.status == LifeStatus.ALIVE
    is_consigliere = policies.holds_role(user, game, StaffKind.CONSIGLIERE)
    checks, check_targets, channel = [], [], None
    if seat is not None and seats.is_commissar(seat):
        checks = selectors.own_checks(seat)
        check_targets = selectors.check_targets(seat)
        channel = night_services.check_channel_of(seat.city)
    cities = selectors.cities_in_order(game)
    toured = night_services.toured_cities(game) if is_consigliere else []
    panels = _night_panels(user, game)
    night = night_services.current_night(game)
    actions_open = night >= ruleset_of(game).first_action_night  # L-DAY-5: night 1 elects the godfathers only
    return {
        "seat": seat, "is_commissar": is_commissar, "is_consigliere": is_consigliere, "checks": checks,
        "channel": channel, "toured": toured, "panels": panels, "night": night, "actions_open": actions_open,
        "pickers": _night_pickers(user, game, panels, check_targets, cities, toured),
        "shown": _shown_pickers(panels, actions_open, is_consigliere=is_consigliere,
                                may_check=is_commissar and actions_open),
    }


def _night_page(request, game, state: dict, *, status: int = 200, error: str | None = None):
    """Render the night page of ``state`` (``_night_state``; a refused picker already bound in its place)."""
    seat, pickers = state["seat"], state["pickers"]
    for panel in state["panels"]:
        panel["forms"] = pickers.get(panel["city"].number, {})
    context = {
        "game": game, "night": state["night"], "error": error, "actions_open": state["actions_open"],
        "shows_checks": seat is not None and seats.is_commissar(seat),
        "may_check": state["is_commissar"] and state["actions_open"],
        "rotation": night_services.touring_rotation_list(game),
        "panels": state["panels"],
        "seat": seat, "is_commissar": state["is_commissar"], "is_consigliere": state["is_consigliere"],
        "checks": state["checks"], "channel": state["channel"],
        "check_form": pickers[None].get("check"), "gift_form": pickers[None].get("gift"),
        "toured": state["toured"],
        "may_end_game": (policies.holds_role(request.user, game, StaffKind.PROCURATOR)
                         and game.status == GameStatus.RUNNING),
    }
    response = render(request, "lepra/night/night.html", context, status=status)
    response["Cache-Control"] = "private"
    return response


#: The night page's pickers by their action: (key in a city's panel, label, "no kill" allowed).
_PANEL_PICKERS = {
    "vote_godfather": ("mafia", _lazy("Godfather"), False),
    "appoint_godfather": ("mafia", _lazy("Godfather"), False),
    "decide": ("kill_targets", _lazy("Kill"), True),
    "tour": ("tour_targets", _lazy("Touring"), True),
}


def _night_pickers(user, game, panels, check_targets, cities, toured, data=None) -> dict:
    """The forms of the night page, unbound: per city number, one ``NightTargetForm`` per action of
    ``_PANEL_PICKERS`` over that panel's legal targets; under the key None, the commissar's check and the
    Consigliere's gift. Ids are resolved through the access policy (``access_resident_by_id``); each form's
    element ids are its own (several pickers share the field name ``target``)."""
    def resident(resident_id):
        return access.access_resident_by_id(user, resident_id, game=game)

    pickers: dict = {None: {}}
    for panel in panels:
        number = panel["city"].number
        pickers[number] = {
            action: NightTargetForm(data, label=label, choices=panel[key], access=resident,
                                    none_label=_("no kill") if may_skip else None, with_city=action == "tour",
                                    auto_id=f"id_{action}_{number}_%s")
            for action, (key, label, may_skip) in _PANEL_PICKERS.items()}
    pickers[None]["check"] = NightTargetForm(data, label=_("Check"), choices=check_targets, access=resident,
                                             auto_id="id_check_%s")
    if toured:
        pickers[None]["gift"] = GiftForm(data, cities=cities, toured=toured, auto_id="id_gift_%s")
    return pickers


def _shown_pickers(panels, actions_open: bool, *, is_consigliere: bool, may_check: bool) -> set:
    """The pickers the night page shows, as (city number or None, action) pairs, as ``lepra/night/night.html`` decides:
    only a shown form can hold its errors; a night action posted from elsewhere is left to its service."""
    shown = set()
    for p in panels:
        number = p["city"].number
        if p["election"] and not is_consigliere:
            shown.add((number, "vote_godfather"))
        if is_consigliere:
            shown.add((number, "appoint_godfather"))
        if actions_open and p["may_decide"]:
            shown.add((number, "decide"))
            if p["is_touring"]:
                shown.add((number, "tour"))
    if may_check:
        shown.add((None, "check"))
    if is_consigliere:
        shown.add((None, "gift"))
    return shown


def _bind_picker(state: dict, number: int | None, action: str, data):
    """The picker of ``action`` (of the city numbered ``number``; None for the check and the gift) bound to
    ``data`` and put in its place in ``state``'s pickers (so that its errors show inside it); None when the
    page does not show that picker to the viewer (``state["shown"]``), e.g. for a city whose panel the viewer
    does not see: the service then refuses the action and the page says why above the forms."""
    if (number, action) not in state["shown"]:
        return None
    forms_of_city = state["pickers"].get(number)
    unbound = forms_of_city.get(action) if forms_of_city is not None else None
    if unbound is None:
        return None
    if isinstance(unbound, GiftForm):
        bound = GiftForm(data, cities=[], toured=[], auto_id=unbound.auto_id)
    else:
        bound = type(unbound)(data, label="", choices=[], access=None, auto_id=unbound.auto_id)
    bound.fields = unbound.fields
    forms_of_city[action] = bound
    return bound


def _named(access_function, *args, **kwargs):
    """The object a form names through its access function, or None when it names none (or none such): the
    action then says what it needs (a city, a resident)."""
    try:
        return access_function(*args, **kwargs)
    except Http404:
        return None


def _night_action(request, slug: str, action: str, call, *, number: int | None = None):
    """One action of the night page: the page's own picker of ``action`` when the page shows it to the viewer
    (its choices are the legal targets), else the loose ``NightActionForm`` (the service then refuses what the
    viewer may not do); then ``call(city, target, data)``, the one service call, where ``city`` is the city of
    the URL (``number``; ``Http404`` for none such), ``target`` the named resident or None, ``data`` the form's
    cleaned data. Back to the page on success; the page again with the reason (400/403/409) otherwise."""
    game = _night_game(request, slug)
    city = access.access_city_by_number(request.user, game, number) if number is not None else None
    state = _night_state(request.user, game)
    picker = _bind_picker(state, number, action, request.POST)
    form = picker or NightActionForm(request.POST)
    try:
        valid = form.is_valid()
    except Http404:  # a resident id that names nobody the viewer may see: as an empty choice
        form.add_error(None, _("Choose a resident."))
        valid = False
    if not valid:
        error = None if picker is not None else "; ".join(str(e) for errs in form.errors.values() for e in errs)
        return _night_page(request, game, state, status=400, error=error)
    target = _named(access.access_resident_by_id, request.user, form.cleaned_data.get("target"), game=game)
    try:
        call(city, target, form.cleaned_data)
    except RuleViolation as exc:
        if picker is None:
            return _night_page(request, game, state, status=page_status(exc), error=str(exc))
        picker.add_error(None, str(exc))  # the refusal inside the form it refuses
        return _night_page(request, game, state, status=page_status(exc))
    return redirect("night_page", slug=game.slug)


def _open_election_of(user, city):
    """The open godfather election of ``city`` as ``user`` may know it (``knowledge.knows_night_of``);
    ``WrongState`` when none is open or the user may not know of one."""
    election = night_services.open_godfather_election(city)
    if election is None or not knowledge.knows_night_of(user, city):
        raise WrongState(_("No godfather election is open."))
    return election


def _named_target(target):
    """``target``, or ``InvalidInput`` when the form named nobody."""
    if target is None:
        raise InvalidInput(_("Choose a resident."))
    return target


@require_POST
@login_required
def open_godfather_election(request, slug: str, number: int):
    """The Consigliere opens, or the city's mafia demand, a godfather election (L-NIGHT-3)."""
    def call(city, _target, _data):
        night_services.do_open_godfather_election(city, acting_user=request.user)
    return _night_action(request, slug, "open_election", call, number=number)


@require_POST
@login_required
def vote_godfather(request, slug: str, number: int):
    """A living mafioso of the city votes in its open godfather election (L-NIGHT-3)."""
    def call(city, target, _data):
        night_services.do_vote_godfather(_open_election_of(request.user, city), _named_target(target),
                                         acting_user=request.user)
    return _night_action(request, slug, "vote_godfather", call, number=number)


@require_POST
@login_required
def close_godfather_election(request, slug: str, number: int):
    """The Consigliere closes the city's open godfather election (L-NIGHT-3)."""
    def call(city, _target, _data):
        night_services.do_close_godfather_election(_open_election_of(request.user, city), acting_user=request.user)
    return _night_action(request, slug, "close_election", call, number=number)


@require_POST
@login_required
def appoint_godfather(request, slug: str, number: int):
    """The Consigliere appoints the city's godfather (L-NIGHT-3)."""
    def call(city, target, _data):
        night_services.do_appoint_godfather(city, _named_target(target), acting_user=request.user)
    return _night_action(request, slug, "appoint_godfather", call, number=number)


@require_POST
@login_required
def decide_kill(request, slug: str, number: int):
    """The city's godfather (or the Consigliere) decides tonight's kill; an empty target is "no kill"
    (L-NIGHT-1)."""
    def call(city, target, _data):
        night_services.do_submit_night_decision(city, target, kind=NightActionKind.KILL, acting_user=request.user)
    return _night_action(request, slug, "decide", call, number=number)


@require_POST
@login_required
def decide_touring(request, slug: str, number: int):
    """The touring city's godfather (or the Consigliere) decides the touring kill; an empty target is "no kill"
    (L-NIGHT-4)."""
    def call(city, target, _data):
        night_services.do_submit_night_decision(city, target, kind=NightActionKind.TOUR, acting_user=request.user)
    return _night_action(request, slug, "tour", call, number=number)


@require_POST
@login_required
def check_resident(request, slug: str):
    """A living commissar checks a resident (L-NIGHT-5)."""
    def call(_city, target, _data):
        night_services.do_check_resident(_named_target(target), acting_user=request.user)
    return _night_action(request, slug, "check", call)


@require_POST
@login_required
def send_gift(request, slug: str):
    """The Consigliere sends a gift or a fish from one city's mafia to the touring city (L-NIGHT-7)."""
    def call(_city, _target, data):
        game = game_get(slug)
        from_city = _named(access.access_city_by_number, request.user, game, data.get("city"))
        to_city = _named(access.access_city_by_number, request.user, game, data.get("to_city"))
        if from_city is None or to_city is None:
            raise InvalidInput(_("Choose a city."))
        night_services.do_send_gift(from_city, to_city, data.get("kind") or "", data.get("text") or "",
                                    acting_user=request.user)
    return _night_action(request, slug, "gift", call)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def end_game(request, slug: str):
    """The Procurator ends the game early with a reason (L-WIN-3), after a confirmation page (the game cannot be
    resumed). 404 for everyone else."""
    game = game_get(slug)
    activate_game_language(request, game)
    if not policies.holds_role(request.user, game, StaffKind.PROCURATOR):
        raise Http404("No such page.")
    form = EndGameForm(request.POST or None)
    status, error = 200, None
    if request.method == "POST":
        if form.is_valid():
            confirm = confirmation_page(
                request, title=_("End the game early?"), game=game,
                consequence=_("“%(title)s” ends now, without a winner by the rules: %(reason)s")
                % {"title": game.title, "reason": form.cleaned_data["reason"]},
                confirm_label=_("End the game"), cancel_url=reverse("end_game", args=[game.slug]))
            if confirm is not None:
                return confirm
            try:
                game_end_services.do_end_game_early(game, reason=form.cleaned_data["reason"], acting_user=request.user)
            except RuleViolation as exc:
                error, status = str(exc), page_status(exc)
            else:
                return redirect("game_detail", slug=game.slug)
        else:
            error, status = "; ".join(str(e) for errs in form.errors.values() for e in errs), 400
    return render(request, "lepra/night/end_game.html", {"game": game, "form": form, "error": error}, status=status)
