"""Game pages: the list of games, a game's public page, a public post, a resident, the Procurator's scheduler."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_http_methods, require_POST

from archive.notifications import attention_everywhere, attention_for
from cities import recruitment_services
from inboxes import access, knowledge, policies
from inboxes.selectors import messages_by_resident_for
from kernel.errors import InvalidInput, RuleViolation, page_status
from kernel.rulesets import default_ruleset_key, registered_rulesets, ruleset_of
from rulesets.lepra.night.services import touring_rotation_list
from rulesets.lepra.setup import services as role_services
from sanctions.services import play_ban_sentence, running_play_ban_of

from . import selectors, services
from .forms import (
    AppointStaffForm,
    FormCitiesForm,
    MoveSignupForm,
    NewGameForm,
    RecruitmentPostForm,
    SchedulePostForm,
)
from .i18n import activate_game_language
from .models import GameStatus, StaffKind
from .ruleset_pages import check_page_section
from .scheduler import clock_paused
from .services import do_schedule_public_post

#: HTTP status of a refused request, by error class (400 bad input, 403 not allowed, 409 wrong state).



def healthz(request):
    """Liveness probe for docker-compose: 200 "ok" when the app and its database answer."""

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


def home(request):
    """The list of games."""
    return render(request, "cities/home.html", {"games": selectors.game_list(),
                                                "attention": attention_everywhere(request.user, timezone.now())})


def game_detail(request, slug: str):
    """A game's public page: recruitment and daily posts, city lists (L-CITY-4, L-INBOX-16), the staff the
    viewer may know (L-STAFF-6), and links to the viewer's inboxes."""
    game = selectors.game_get(slug)
    activate_game_language(request, game)
    spec = ruleset_of(game)  # the sections of this page the game's ruleset has
    staff_roles = policies.staff_roles_in(request.user, game)
    staff = knowledge.visible_staff(request.user, game)
    for role in staff:  # the title the ruleset gives the game's Procurator (an M21 game's Host)
        role.title = spec.text("procurator_title") if role.kind == StaffKind.PROCURATOR else role.get_kind_display()
    context = {
        "game": game,
        "ruleset_links": spec.game_page_links(game, is_staff=bool(staff_roles)),
        "has_cities": spec.has_page_section("cities"),
        "has_lepra_setup": spec.has_page_section("lepra_setup"),
        "has_mafia_draw": spec.has_page_section("mafia_draw"),
        "posts": selectors.published_posts(game),
        "cities": selectors.city_list(game),
        "signup_names": selectors.public_signup_names(game),
        "staff": staff,
        "seat": policies.seat_in(request.user, game),
        "is_procurator": policies.holds_role(request.user, game, StaffKind.PROCURATOR),
        "signup": selectors.active_signup(request.user, game),
        "signups_open": selectors.signups_open(game),
        "play_ban": _play_ban_notice(request.user, game),
        "is_staff_of_game": bool(staff_roles),
        "known_rosters": selectors.known_rosters(request.user, game) if spec.has_page_section("cities") else [],
        "touring_rotation": _touring_rotation(game) if spec.has_page_section("touring") else [],
        "day_page_cities": _day_page_cities(request.user, game) if spec.has_page_section("cities") else set(),
        # The site's clock paused for an upgrade (``manage.py clock pause``): the page says so.
        "clock_pause": clock_paused() if game.status == GameStatus.RUNNING else None,
        "attention": attention_for(request.user, game, timezone.now()),
    }
    return render(request, "cities/game_detail.html", context)


def _play_ban_notice(user, game) -> str | None:
    """What a player under a running play ban is told on the page of a game in recruitment: why and until when
    (L-SANCTION-2); None otherwise (nobody else learns of it here)."""
    if not selectors.signups_open(game):
        return None
    ban = running_play_ban_of(user)
    return play_ban_sentence(ban, game.time_zone) if ban is not None else None


def _day_page_cities(user, game) -> set[int]:
    """Numbers of the cities whose day page (``city_day``) the game page links for ``user``: the own city of a
    resident, the city of a Tribune, every city for the Procurator, the Arbiter and the Consigliere (L-STAFF-2).
    The day page itself decides what the viewer sees there."""
    numbers: set[int] = set()
    seat = policies.seat_in(user, game)
    if seat is not None:
        numbers.add(seat.city.number)
    for role in policies.staff_roles_in(user, game):
        if role.city_id is None:
            numbers |= set(game.cities.values_list("number", flat=True))
        else:
            numbers.add(role.city.number)
    return numbers


def _touring_rotation(game):
    """The public touring rotation (L-NIGHT-4): [(night, city)] from tonight on (``rulesets.lepra.setup.services``)."""
    return touring_rotation_list(game)


def post_detail(request, slug: str, post_id: int):
    """One public post (published: everyone; scheduled: the Procurator only)."""
    game = selectors.game_get(slug)
    activate_game_language(request, game)
    post = selectors.post_get(request.user, game, post_id)
    return render(request, "cities/post_detail.html", {"game": game, "post": post})


def resident_detail(request, slug: str, resident_id: int):
    """A resident's page: only what the viewer may know (L-STAFF-6) and the posts they may read (L-INBOX-20)."""
    game = selectors.game_get(slug)
    activate_game_language(request, game)
    profile = selectors.resident_profile_for(request.user, game, resident_id)
    context = {
        "game": game,
        "profile": profile,
        "resident": profile.resident,
        "recent": list(messages_by_resident_for(request.user, profile.resident)),
    }
    return render(request, "cities/resident_detail.html", context)


@login_required
def schedule_post(request, slug: str):
    """The Procurator schedules a public announcement for a given time (published by the scheduler)."""
    game = selectors.game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "lepra_setup")
    if not policies.holds_role(request.user, game, StaffKind.PROCURATOR):
        raise Http404("No such page.")
    form = SchedulePostForm(request.POST or None, time_zone=game.time_zone)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                post = do_schedule_public_post(game, acting_user=request.user, **form.cleaned_data)
            except RuleViolation as exc:
                form.add_error(None, str(exc))
                status = 400
            else:
                messages.success(request, _("The post is scheduled."))
                return redirect("post_detail", slug=game.slug, post_id=post.public_id)
        else:
            status = 400
    return render(request, "cities/schedule_post.html", {"game": game, "form": form}, status=status)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def new_game(request):
    """Any logged-in user creates a Lepra game and becomes its Procurator (L-STAFF-1); then the setup page."""
    form = NewGameForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                game = services.do_create_game(acting_user=request.user, **form.cleaned_data)
            except RuleViolation as exc:
                form.add_error(None, str(exc))
                status = page_status(exc)
            else:
                return redirect("game_setup", slug=game.slug)
        else:
            status = 400
    rulesets = [(spec.name, spec.summary, reverse(spec.new_game_url_name), spec.language, key == default_ruleset_key())
                for key, spec in registered_rulesets().items() if spec.new_game_url_name]
    return render(request, "cities/new_game.html", {"form": form, "rulesets": rulesets}, status=status)


def _signup_action(request, slug: str, service, done: str):
    """A one-click sign-up action of the public game page: a visitor is sent to log in; otherwise one call of
    ``service(game, acting_user=...)``, then back to the game page with ``done``; a refusal is the error page with
    the service's reason (400/403/409) and changes nothing."""
    game = selectors.game_get(slug)
    if not request.user.is_authenticated:
        return redirect(f"{reverse('account_login')}?next={reverse('game_detail', args=[slug])}")
    activate_game_language(request, game)
    try:
        service(game, acting_user=request.user)
    except RuleViolation as exc:
        context = {"game": game, "error": str(exc)}
        return render(request, "cities/error.html", context, status=page_status(exc))
    messages.success(request, _(done))
    return redirect("game_detail", slug=game.slug)


@require_POST
def sign_up(request, slug: str):
    """The public game page's "Sign up to play" (POST): ``do_sign_up``, which decides who may."""
    return _signup_action(request, slug, recruitment_services.do_sign_up, gettext_noop("You are signed up."))


@require_POST
def withdraw_signup(request, slug: str):
    """The public game page's "Withdraw" (POST): ``do_withdraw_signup``, which decides who may."""
    return _signup_action(request, slug, recruitment_services.do_withdraw_signup,
                          gettext_noop("Your sign-up is withdrawn."))


def _setup_game(request, slug: str):
    game = selectors.game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "lepra_setup")
    if not policies.holds_role(request.user, game, StaffKind.PROCURATOR):
        raise Http404("No such page.")
    return game


def _setup_context(request, game) -> dict:
    """What the Procurator's setup page shows: nothing he may not know (L-STAFF-1, L-STAFF-6): names, the
    numbers he named, offers with "declined" but never a reason, and never the notary lists or alignments."""
    setup = selectors.setup_state(game)
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
    setup = setup or selectors.setup_state(game)
    return MoveSignupForm(
        data, signups=setup.signups, cities=[c.city for c in setup.cities], auto_id="id_move_%s",
        signup_access=lambda pk: access.access_signup_by_id(request.user, pk, game=game),
        city_access=lambda pk: access.access_city_by_id(request.user, pk, game=game))


def _appoint_form(request, game, data=None) -> AppointStaffForm:
    """The setup page's staff appointment form; the Tribune's city one of the game's, through the access policy."""
    return AppointStaffForm(data, cities=list(game.cities.order_by("number")),
                            city_access=lambda pk: access.access_city_by_id(request.user, pk, game=game))


@login_required
def game_setup(request, slug: str):
    """The Procurator's setup page: each setup step in order (signups, cities, lists, draws), buttons only where the step applies."""
    game = _setup_game(request, slug)
    return render(request, "cities/setup.html", _setup_context(request, game))


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
    services.do_appoint_staff(game, user, form.cleaned_data["kind"], city=city, acting_user=request.user)


def _step_offer(request, game):
    try:
        city = access.access_city_by_id(request.user, request.POST.get("city"), game=game)
    except Http404:
        raise InvalidInput(_("This city is not a city of this game.")) from None
    role_services.do_offer_commissar(city, acting_user=request.user)


def _step_add_city(request, game):
    services.do_add_city(game, name=request.POST.get("name", ""), acting_user=request.user)


SETUP_STEPS = {
    "add-city": _step_add_city,
    "recruitment-post": _step_recruitment_post,
    "close-signups": lambda request, game: recruitment_services.do_close_signups(game, acting_user=request.user),
    "form-cities": _step_form_cities,
    "move-signup": _step_move_signup,
    "appoint": _step_appoint,
    "publish-lists": lambda request, game: recruitment_services.do_publish_city_lists(game, acting_user=request.user),
    "start-draw": lambda request, game: role_services.do_start_mafia_draw(game, acting_user=request.user),
    "site-numbers": lambda request, game: role_services.do_name_mafia_numbers(game, None, acting_user=request.user),
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
        return render(request, "cities/setup.html", context, status=page_status(exc))
    return redirect("game_setup", slug=game.slug)
