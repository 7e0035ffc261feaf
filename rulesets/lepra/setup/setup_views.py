"""The Procurator's setup page of a Lepra game (L-STAFF-1, L-CITY, L-ASSIGN, L-COMM): each step in order
(recruitment post, sign-ups, cities, staff, lists, the mafia draw, the commissar draw), one URL per step. Thin:
parse, one service call, back to the page; a refusal re-renders the page with the reason."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from cities import recruitment_services
from cities import services as city_services
from cities.forms import AppointStaffForm, FormCitiesForm, MoveSignupForm, RecruitmentPostForm
from cities.i18n import activate_game_language
from cities.ruleset_pages import check_page_section
from cities.selectors import game_get
from cities.staff_kinds import staff_labels
from inboxes import access, knowledge, policies
from kernel.errors import InvalidInput, RuleViolation, page_status
from rulesets.lepra.staff_kinds import StaffKind

from . import services
from .selectors import setup_state


def _setup_game(request, slug: str):
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "lepra_setup")
    if not policies.holds_role(request.user, game, StaffKind.PROCURATOR):
        raise Http404("No such page.")
    return game


def _setup_context(request, game) -> dict:
    """What the Procurator's setup page shows: nothing he may not know (L-STAFF-1, L-STAFF-6): names, the
    numbers he named, offers with "declined" but never a reason, and never the notary lists or alignments."""
    setup = setup_state(game)
    return {
        "game": game,
        "setup": setup,
        "post_form": RecruitmentPostForm(),
        "cities_form": FormCitiesForm(),
        "staff_form": _appoint_form(request, game),
        "move_form": _move_signup_form(request, game, setup=setup),
        "staff": knowledge.visible_staff(request.user, game),
    }


def _move_signup_form(request, game, data=None, setup=None) -> MoveSignupForm:
    """The setup page's "move a player" form over the game's sign-ups and cities, ids through the access policy."""
    setup = setup or setup_state(game)
    return MoveSignupForm(
        data, signups=setup.signups, cities=[c.city for c in setup.cities], auto_id="id_move_%s",
        signup_access=lambda pk: access.access_signup_by_id(request.user, pk, game=game),
        city_access=lambda pk: access.access_city_by_id(request.user, pk, game=game))


def _appoint_form(request, game, data=None) -> AppointStaffForm:
    """The setup page's staff appointment form; the Tribune's city one of the game's, through the access policy."""
    kinds = [(kind.value, kind.label) for kind in (StaffKind.TRIBUNE, StaffKind.ARBITER, StaffKind.CONSIGLIERE)]
    return AppointStaffForm(data, kinds=kinds, cities=list(game.cities.order_by("number")),
                            city_access=lambda pk: access.access_city_by_id(request.user, pk, game=game),
                            city_roles=staff_labels(game, "city_staff_kinds"))


@login_required
def game_setup(request, slug: str):
    """The Procurator's setup page: each setup step in order (signups, cities, lists, draws), buttons only where the step applies."""
    game = _setup_game(request, slug)
    return render(request, "lepra/setup/setup.html", _setup_context(request, game))


def _valid_or_refused(form):
    """``form`` when valid; else ``InvalidInput`` with its errors (bad input changes nothing: a field that fails
    its checks, a NUL byte say, is never read as empty)."""
    if not form.is_valid():
        raise InvalidInput(" ".join(str(e) for errors in form.errors.values() for e in errors))
    return form


def _step_recruitment_post(request, game):
    form = _valid_or_refused(RecruitmentPostForm(request.POST))
    recruitment_services.do_publish_recruitment_post(game, acting_user=request.user, title=form.cleaned_data.get("title", ""),
                                         body=form.cleaned_data.get("body", ""))


def _step_form_cities(request, game):
    form = _valid_or_refused(FormCitiesForm(request.POST))
    cities = recruitment_services.do_form_cities(game, acting_user=request.user,
                                                 names=form.cleaned_data.get("names", "").splitlines())
    for _user, reason in cities.left_out:  # the Procurator is told who was left out and why (L-SANCTION-2)
        messages.warning(request, reason)


def _step_move_signup(request, game):
    form = _move_signup_form(request, game, request.POST)
    try:
        valid = form.is_valid()
    except Http404:  # an id that is no sign-up or city of this game
        valid = False
    if not valid:
        raise InvalidInput(_("Choose a player and a city."))
    signup = access.access_signup_by_id(request.user, form.cleaned_data["signup"], game=game)
    city = access.access_city_by_id(request.user, form.cleaned_data["city"], game=game)
    recruitment_services.do_move_signup(signup, city, acting_user=request.user)


def _step_appoint(request, game):
    form = _appoint_form(request, game, request.POST)
    try:
        valid = form.is_valid()
    except Http404:
        raise InvalidInput(_("This city is not a city of this game.")) from None
    if not valid:
        raise InvalidInput(_("Choose a role and an account."))
    user = get_user_model().objects.filter(username=form.cleaned_data["username"].strip()).first()
    if user is None:
        raise InvalidInput(_("No account with this user name."))
    city = None
    if form.cleaned_data["city"]:
        try:
            city = access.access_city_by_id(request.user, form.cleaned_data["city"], game=game)
        except Http404:
            raise InvalidInput(_("This city is not a city of this game.")) from None
    city_services.do_appoint_staff(game, user, form.cleaned_data["kind"], city=city, acting_user=request.user)


def _step_offer(request, game):
    try:
        city = access.access_city_by_id(request.user, request.POST.get("city"), game=game)
    except Http404:
        raise InvalidInput(_("This city is not a city of this game.")) from None
    services.do_offer_commissar(city, acting_user=request.user)


def _step_add_city(request, game):
    city_services.do_add_city(game, name=request.POST.get("name", ""), acting_user=request.user)


SETUP_STEPS = {
    "add-city": _step_add_city,
    "recruitment-post": _step_recruitment_post,
    "close-signups": lambda request, game: recruitment_services.do_close_signups(game, acting_user=request.user),
    "form-cities": _step_form_cities,
    "move-signup": _step_move_signup,
    "appoint": _step_appoint,
    "publish-lists": lambda request, game: recruitment_services.do_publish_city_lists(game, acting_user=request.user),
    "start-draw": lambda request, game: services.do_start_mafia_draw(game, acting_user=request.user),
    "site-numbers": lambda request, game: services.do_name_mafia_numbers(game, None, acting_user=request.user),
    "offer-commissar": _step_offer,
}


@login_required
@require_POST
def game_setup_step(request, slug: str, step: str):
    """One step of the setup (POST): parse, one service call, back to the setup page; a refusal re-renders the
    setup page with the reason and 400/403/409."""
    game = _setup_game(request, slug)
    handler = SETUP_STEPS.get(step)
    if handler is None:
        raise Http404("No such step.")
    try:
        handler(request, game)
    except RuleViolation as exc:
        game.refresh_from_db()
        context = _setup_context(request, game) | {"error": str(exc)}
        return render(request, "lepra/setup/setup.html", context, status=page_status(exc))
    return redirect("game_setup", slug=game.slug)
