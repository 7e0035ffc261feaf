"""Game pages: the list of games, a game's public page, a public post, a resident, the Procurator's scheduler."""
from __future__ import annotations

from django.contrib import messages
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
from inboxes import knowledge, policies
from inboxes.selectors import messages_by_resident_for
from kernel.errors import RuleViolation, page_status
from kernel.rulesets import default_ruleset_key, registered_rulesets, ruleset_of
from sanctions.services import play_ban_sentence, running_play_ban_of

from . import selectors, services
from .forms import (
    NewGameForm,
    SchedulePostForm,
)
from .i18n import activate_game_language
from .models import HOST_STAFF_KIND, GameStatus
from .ruleset_pages import check_page_section
from .scheduler import clock_paused
from .services import do_schedule_public_post
from .staff_kinds import host_label

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
    """A game's public page: recruitment and daily posts, city lists, the staff the
    viewer may know, and links to the viewer's inboxes."""
    game = selectors.game_get(slug)
    activate_game_language(request, game)
    spec = ruleset_of(game)  # the sections of this page the game's ruleset has
    staff_roles = policies.staff_roles_in(request.user, game)
    staff = knowledge.visible_staff(request.user, game)
    for role in staff:  # the title the ruleset gives the game's host (a Procurator or a Host, say)
        role.title = spec.text("procurator_title") if role.kind == HOST_STAFF_KIND else role.get_kind_display()
    context = {
        "game": game,
        "ruleset_links": spec.game_page_links(game, is_staff=bool(staff_roles)),
        "has_cities": spec.has_cities,
        "has_scheduled_posts": spec.has_page_section("scheduled_posts"),
        "has_mafia_draw": spec.has_page_section("mafia_draw"),
        "posts": selectors.published_posts(game),
        "cities": selectors.city_list(game),
        "signup_names": selectors.public_signup_names(game),
        "staff": staff,
        "seat": policies.seat_in(request.user, game),
        "is_procurator": policies.holds_role(request.user, game, HOST_STAFF_KIND),
        "signup": selectors.active_signup(request.user, game),
        "signups_open": selectors.signups_open(game),
        "play_ban": _play_ban_notice(request.user, game),
        "is_staff_of_game": bool(staff_roles),
        "known_rosters": selectors.known_rosters(request.user, game) if spec.has_page_section("cities") else [],
        "ruleset_notes": spec.game_page_notes(game),
        "day_page_cities": _day_page_cities(request.user, game) if spec.has_page_section("cities") else set(),
        # The site's clock paused for an upgrade (``manage.py clock pause``): the page says so.
        "clock_pause": clock_paused() if game.status == GameStatus.RUNNING else None,
        "attention": attention_for(request.user, game, timezone.now()),
    }
    return render(request, "cities/game_detail.html", context)


def _play_ban_notice(user, game) -> str | None:
    """What a player under a running play ban is told on the page of a game in recruitment: why and until when; None
        otherwise (nobody else learns of it here)."""
    if not selectors.signups_open(game):
        return None
    ban = running_play_ban_of(user)
    return play_ban_sentence(ban, game.time_zone) if ban is not None else None


def _day_page_cities(user, game) -> set[int]:
    """Numbers of the cities whose day page (``city_day``) the game page links for ``user``: the own city of a
    resident, the city of a Tribune, every city for the Procurator, the Arbiter and the Consigliere.
    The day page itself decides what the viewer sees there."""
    numbers: set[int] = set()
    seat = policies.seat_in(user, game)
    if seat is not None and seat.city_id is not None:
        numbers.add(seat.city.number)
    for role in policies.staff_roles_in(user, game):
        if role.city_id is None:
            numbers |= set(game.cities.values_list("number", flat=True))
        else:
            numbers.add(role.city.number)
    return numbers


def post_detail(request, slug: str, post_id: int):
    """One public post (published: everyone; scheduled: the Procurator only)."""
    game = selectors.game_get(slug)
    activate_game_language(request, game)
    post = selectors.post_get(request.user, game, post_id)
    return render(request, "cities/post_detail.html", {"game": game, "post": post})


def resident_detail(request, slug: str, resident_id: int):
    """A resident's page: only what the viewer may know and the posts they may read."""
    game = selectors.game_get(slug)
    activate_game_language(request, game)
    profile = selectors.resident_profile_for(request.user, game, resident_id)
    spec = ruleset_of(game)  # a game without cities names none; each ruleset words the sides its own way
    context = {
        "game": game,
        "has_cities": spec.has_cities,
        "side_words": {"mafia": spec.wording("side_mafia", _("mafia")),
                       "honest": spec.wording("side_honest", _("honest"))},
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
    check_page_section(game, "scheduled_posts")
    if not policies.holds_role(request.user, game, HOST_STAFF_KIND):
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
    """Any logged-in user creates a game of cities (``NewGameForm``, a game of the default ruleset,
    ``do_create_game``) and becomes its Procurator; then the page its ruleset names (``after_create_url_name``).
    The page also lists every registered ruleset's own "new game" page (``new_game_url_name``)."""
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
                return redirect(ruleset_of(game).after_create_url_name, slug=game.slug)
        else:
            status = 400
    rulesets = [(spec.name, spec.summary, reverse(spec.new_game_url_name), spec.language, key == default_ruleset_key())
                for key, spec in registered_rulesets().items() if spec.new_game_url_name]
    # The game this form creates is of the default ruleset: its host's title and whether it has cities.
    context = {"form": form, "rulesets": rulesets, "host": host_label(default_ruleset_key()),
               "has_cities": registered_rulesets()[default_ruleset_key()].has_cities}
    return render(request, "cities/new_game.html", context, status=status)


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
