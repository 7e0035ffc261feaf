"""The residents' side of impeachment (RULES.md L-IMPEACH-1): a living resident of a city starts or signs the
demand to impeach the city's Tribune. Thin: the policy gives the seat, one service call."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from cities.errors import RuleViolation
from cities.i18n import activate_game_language
from cities.selectors import game_get
from inboxes import policies

from . import selectors, services


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def impeachment(request, slug: str):
    """The open demand of the viewer's city (how many living residents signed, of how many, and whether the
    viewer did), with a button to start or sign it. Anyone without a seat in the game gets the 404 of a missing
    page. Names of the signers are not shown (the Procurator's to know)."""
    game = game_get(slug)
    activate_game_language(request, game)
    seat = policies.seat_in(request.user, game)
    if seat is None:
        raise Http404("No such page.")
    demand = selectors.open_impeachment_demand_of(seat)
    status, error = 200, None
    if request.method == "POST":
        try:
            if demand is None:
                services.do_demand_impeachment(game, acting_user=request.user)
            else:
                services.do_sign_impeachment_demand(demand, acting_user=request.user)
        except RuleViolation as exc:
            error, status = str(exc), 400
        else:
            messages.success(request, _("Your signature is recorded."))
            return redirect("impeachment", slug=slug)
    context = {"game": game, "seat": seat, "demand": demand, "error": error,
               "signed": demand is not None and demand.signatures.filter(resident=seat).exists(),
               "counts": services.living_signatures(demand) if demand is not None else None}
    return render(request, "staff/impeachment.html", context, status=status)
