"""Game pages: the list of games, a game's public page, a public post, a resident, the Procurator's scheduler."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from inboxes import policies
from inboxes.selectors import messages_by_resident_for

from . import selectors
from .errors import RuleViolation
from .forms import SchedulePostForm
from .i18n import activate_game_language
from .models import StaffKind
from .services import do_schedule_public_post



def healthz(request):
    """Liveness probe for docker-compose: 200 "ok" when the app and its database answer."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


def home(request):
    """The list of games."""
    return render(request, "cities/home.html", {"games": selectors.game_list()})


def game_detail(request, slug: str):
    """A game's public page: recruitment and daily posts, city lists (L-CITY-4, L-INBOX-16), the staff the
    viewer may know (L-STAFF-6), and links to the viewer's inboxes."""
    game = selectors.game_get(slug)
    activate_game_language(request, game)
    context = {
        "game": game,
        "posts": selectors.published_posts(game),
        "cities": selectors.city_list(game),
        "staff": policies.visible_staff(request.user, game),
        "seat": policies.seat_in(request.user, game),
        "is_procurator": policies.holds_role(request.user, game, StaffKind.PROCURATOR),
        "is_game_staff": bool(policies.staff_roles_in(request.user, game)),
    }
    return render(request, "cities/game_detail.html", context)


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
                return redirect("post_detail", slug=game.slug, post_id=post.pk)
        else:
            status = 400
    return render(request, "cities/schedule_post.html", {"game": game, "form": form}, status=status)
