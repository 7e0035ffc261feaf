"""The M21 pages: a new game, the host's setup page, and the game page with the day (the live vote count, the
host's extension and vote-count post, the Judge's powers). Each view parses a form, calls one service or selector
and renders; access goes through the policy and the services' checks."""
from __future__ import annotations

from zoneinfo import ZoneInfo

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone, translation
from django.urls import reverse
from django.views.decorators.http import require_POST

from cities.forms import wall_clock_to_utc
from cities.i18n import activate_game_language
from cities.models import Game
from cities.recruitment_services import do_close_signups
from cities.selectors import game_get
from inboxes import policies
from inboxes.access import access_resident_by_id
from kernel.confirm import confirmation_page
from kernel.errors import InvalidInput, RuleViolation, page_status

from . import host_tool_services as host_tools
from . import selectors, services
from .forms import (
    NO_LYNCH,
    CastingVoteForm,
    CohostForm,
    DealForm,
    DrawSetupForm,
    ExtendForm,
    NewM21GameForm,
    SetupTableForm,
    TimingForm,
    day_pick_forms,
)
from .role_services import day_actions_for
from .roles import ROLES
from .ruleset import M21Ruleset
from .setup import M21Setup
from .spectator_services import may_join_as_spectator


def _m21_game(slug: str, request=None) -> Game:
    """The M21 game ``slug`` (``Http404`` for another ruleset's game); with ``request``, the rest of the request
    renders in the game's language (English), form errors and refusals included."""
    game = game_get(slug)
    if game.ruleset != services.RULESET:
        raise Http404("No such M21 game.")
    if request is not None:
        activate_game_language(request, game)
    return game


@login_required
def new_game(request):
    """Any logged-in user creates an M21 game and becomes its host (M-SETUP-4); then the setup page. The page, its
    form errors and refusals are in M21's language (English)."""
    translation.activate(M21Ruleset.language)
    request.LANGUAGE_CODE = M21Ruleset.language
    form = NewM21GameForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                game = services.do_create_m21_game(acting_user=request.user, **form.cleaned_data)
            except RuleViolation as exc:
                form.add_error(None, str(exc))
                status = page_status(exc)
            else:
                return redirect("m21_setup", slug=game.slug)
        else:
            status = 400
    return render(request, "m21/new_game.html", {"form": form}, status=status)


def game_page(request, slug: str):
    """The M21 game page: the phase and deadline, the live vote count (to those who read the game thread), the
    viewer's inboxes, and the controls the viewer has: the hosts' extension and vote count, the Judge's powers."""
    game = _m21_game(slug)
    activate_game_language(request, game)
    now = timezone.now()
    judge = selectors.judge_seat_of(request.user, game)
    is_host = services.is_host(request.user, game)
    view = selectors.day_view(request.user, game, now)
    day_actions = day_actions_for(policies.seat_in(request.user, game), now)
    context = {
        "game": game, "settings": selectors.settings_of(game), "view": view, "is_host": is_host,
        "judge": judge, "role_name": selectors.own_role(request.user, game),
        # The policy's query form: a visitor gets the game thread while it is public (M-SETUP-6).
        "inboxes": selectors.game_inboxes(request.user, game),
        "extend_form": ExtendForm() if is_host else None,
        "casting_form": CastingVoteForm(game=game, user=request.user,
                                        candidates=selectors.living_players(game)) if judge else None,
        "zone": ZoneInfo(game.time_zone),
        "deal": selectors.deal_check(game),
        "day_actions": day_actions,
        "day_picks": day_pick_forms(day_actions),
        "spectating": policies.spectator_of(request.user, game),
        "may_spectate": may_join_as_spectator(request.user, game),
        "volunteering": host_tools.is_volunteer(request.user, game),
        "may_volunteer": host_tools.volunteer_refusal(request.user, game) is None,
    }
    return render(request, "m21/game.html", context)


def _act(request, game: Game, action, success: str):
    try:
        result = action()
    except RuleViolation as exc:
        messages.error(request, str(exc))
        return None, page_status(exc)
    messages.success(request, success if success else str(result))
    return result, 200


def _back(request, game: Game, status: int, where: str = "m21_game"):
    response = redirect(where, slug=game.slug)
    if status != 200 and request.headers.get("HX-Request"):
        response.status_code = status
    return response


@require_POST
@login_required
def extend(request, slug: str):
    """The host extends the current phase (M-SETUP-2)."""
    game = _m21_game(slug, request)
    form = ExtendForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Extend by 1 to 72 hours.")
        return _back(request, game, 400)
    _, status = _act(request, game, lambda: services.do_extend_m21_phase(
        game, form.cleaned_data["hours"], acting_user=request.user), "The phase is extended.")
    return _back(request, game, status)


@require_POST
@login_required
def spectate(request, slug: str):
    """Join the game as a spectator (M-SETUP-3): ``do_join_as_spectator``, which decides who may."""
    game = _m21_game(slug, request)
    _, status = _act(request, game, lambda: services.do_join_as_spectator(game, acting_user=request.user),
                     "You watch this game as a spectator: you read the game thread and talk in the "
                     "spectators' thread. You can never play in this game.")
    return _back(request, game, status)


@require_POST
@login_required
def stop_spectating(request, slug: str):
    """Leave the game's spectators (M-SETUP-3): ``do_leave_as_spectator``, which decides who may."""
    game = _m21_game(slug, request)
    _, status = _act(request, game, lambda: services.do_leave_as_spectator(game, acting_user=request.user),
                     "You no longer watch this game.")
    return _back(request, game, status)


@require_POST
@login_required
def volunteer(request, slug: str):
    """Go on the game's replacement list (L-REPLACE-1): ``do_volunteer_to_replace``, which decides who may."""
    game = _m21_game(slug, request)
    _, status = _act(request, game, lambda: host_tools.do_volunteer_to_replace(game, acting_user=request.user),
                     "You are on the replacement list: the host may give you a seat.")
    return _back(request, game, status)


@require_POST
@login_required
def withdraw_volunteering(request, slug: str):
    """Leave the game's replacement list (L-REPLACE-1): ``do_withdraw_volunteering``, which decides who may."""
    game = _m21_game(slug, request)
    _, status = _act(request, game, lambda: host_tools.do_withdraw_volunteering(game, acting_user=request.user),
                     "You are no longer on the replacement list.")
    return _back(request, game, status)


@require_POST
@login_required
def post_vote_count(request, slug: str):
    """The host posts the live vote count in the game thread (M-VOTE-8)."""
    game = _m21_game(slug, request)
    _, status = _act(request, game, lambda: services.do_post_vote_count(game, acting_user=request.user),
                     "The vote count is posted in the game thread.")
    return _back(request, game, status)


@require_POST
@login_required
def judge_close(request, slug: str):
    """The Judge closes proceedings (M-ROLE judge), after a confirmation page: the power is once per game and ends
    the day on the count as it stands."""
    game = _m21_game(slug, request)
    asked = confirmation_page(
        request, title="Close proceedings now?", confirm_label="Close proceedings", game=game,
        cancel_url=reverse("m21_game", args=[game.slug]),
        consequence="The day ends now on the vote count as it stands, if a majority of the living have a vote in "
                    "place. You can close proceedings once per game.")
    if asked is not None:
        return asked
    _, status = _act(request, game, lambda: services.do_close_proceedings(game, acting_user=request.user), "")
    return _back(request, game, status)


@require_POST
@login_required
def judge_cast(request, slug: str):
    """The Judge's casting vote, in advance or on a tie within 15 minutes (M-ROLE judge)."""
    game = _m21_game(slug, request)
    form = CastingVoteForm(request.POST, game=game, user=request.user, candidates=selectors.living_players(game))
    if not form.is_valid():
        messages.error(request, "Choose a candidate.")
        return _back(request, game, 400)
    value = form.cleaned_data["target"]
    target = None if value == NO_LYNCH else access_resident_by_id(request.user, value, game=game)
    _, status = _act(request, game, lambda: services.do_cast_judge_vote(game, target, acting_user=request.user), "")
    return _back(request, game, status)


@login_required
def setup_page(request, slug: str):
    """The hosts' setup page: co-hosts, timing, sign-ups, the setup table or the site's draw, and the deal."""
    game = _m21_game(slug)
    if not services.is_host(request.user, game):
        raise Http404("No such page.")
    activate_game_language(request, game)
    settings = selectors.settings_of(game)
    setup = M21Setup.from_dict(settings.setup) if settings.setup else None
    initial = {f"role_{k}": n for k, n in (setup.counts.items() if setup else ())}
    if setup:
        initial["cop_insanity_percent"] = int(setup.cop_insanity * 100)
    context = {
        "game": game, "settings": settings, "setup": setup,
        "setup_rows": [(ROLES[k], n) for k, n in setup.counts.items()] if setup else [],
        "signups": selectors.active_signups(game),
        "cohost_form": CohostForm(), "timing_form": TimingForm(initial={
            "day_hours": settings.day_hours, "night_hours": settings.night_hours, "phase_shift": settings.phase_shift}),
        "table_form": SetupTableForm(initial=initial), "draw_form": DrawSetupForm(), "deal_form": DealForm(),
    }
    return render(request, "m21/setup.html", context)


def _setup_action(request, slug: str, form_class, action, success: str):
    game = _m21_game(slug, request)
    form = form_class(request.POST) if form_class else None
    if form is not None and not form.is_valid():
        errors = "; ".join(e for errs in form.errors.values() for e in errs)
        messages.error(request, errors)
        return _back(request, game, 400, "m21_setup")
    _, status = _act(request, game, lambda: action(game, form), success)
    return _back(request, game, status, "m21_setup")


@require_POST
@login_required
def setup_cohost(request, slug: str):
    return _setup_action(request, slug, CohostForm, lambda game, form: services.do_add_cohost(
        game, form.cleaned_data["name"], acting_user=request.user), "The co-host is added.")


@require_POST
@login_required
def setup_timing(request, slug: str):
    return _setup_action(request, slug, TimingForm, lambda game, form: services.do_set_m21_timing(
        game, acting_user=request.user, **form.cleaned_data), "The timing is saved.")


@require_POST
@login_required
def setup_close_signups(request, slug: str):
    """The host (the Procurator) closes the sign-ups (``cities.recruitment_services.do_close_signups``)."""
    return _setup_action(request, slug, None, lambda game, _form: do_close_signups(game, acting_user=request.user),
                         "Sign-ups are closed.")


@require_POST
@login_required
def setup_table(request, slug: str):
    return _setup_action(request, slug, SetupTableForm, lambda game, form: services.do_choose_m21_setup(
        game, form.counts(), cop_insanity=f"{form.cleaned_data['cop_insanity_percent']}/100",
        acting_user=request.user), "The setup is saved.")


@require_POST
@login_required
def setup_draw(request, slug: str):
    return _setup_action(request, slug, DrawSetupForm, lambda game, form: services.do_draw_m21_setup(
        game, cop_insanity=f"{form.cleaned_data['cop_insanity_percent']}/100", acting_user=request.user),
        "The site drew a setup.")


@require_POST
@login_required
def setup_deal(request, slug: str):
    """The host deals the roles; day 1 starts at the wall-clock time typed, read in the game's zone (M-SETUP-2)."""
    def deal(game, form):
        try:
            moment = wall_clock_to_utc(form.cleaned_data["first_day_starts_at"], ZoneInfo(game.time_zone))
        except ValidationError as exc:
            raise InvalidInput(" ".join(exc.messages), rule="M-SETUP-2") from None
        return services.do_deal_m21_roles(game, first_day_starts_at=moment, acting_user=request.user)
    return _setup_action(request, slug, DealForm, deal, "The roles are dealt; the setup post is published.")


