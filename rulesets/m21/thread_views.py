"""The reading tools of the M21 game thread (``thread_tools``): ISO and the activity of each day. GET only; the
policy decides (a reader who may not read the thread gets a 404)."""
from __future__ import annotations

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_safe

from .thread_tools import IsoForm, day_activity, days_of, iso_page, readable_thread
from .views import _m21_game


@require_safe
def iso(request, slug: str):
    """ISO: the game thread filtered to the chosen players' posts, with their receipts (GET form, paginated)."""
    game = _m21_game(slug, request)
    thread = readable_thread(request.user, game)
    form = IsoForm(request.GET or None, game=game)
    page = None
    if form.is_bound and form.is_valid():
        page = iso_page(request.user, thread, list(form.cleaned_data["players"]), request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "m21/iso.html", {"game": game, "thread": thread, "form": form, "iso": page,
                                            "query": query.urlencode()},
                  status=400 if form.is_bound and not form.is_valid() else 200)


@require_safe
def activity(request, slug: str, number: int | None = None):
    """The activity of a day (M-VOTE-5): posts and votes per player; the latest day by default."""
    game = _m21_game(slug, request)
    thread = readable_thread(request.user, game)
    days = days_of(game)
    if not days:
        day = None
    elif number is None:
        day = days[-1]
    else:
        day = next((d for d in days if d.number == number), None)
        if day is None:
            raise Http404("No such day.")
    return render(request, "m21/activity.html", {"game": game, "thread": thread, "days": days, "day": day,
                                                 "rows": day_activity(day) if day else []})
