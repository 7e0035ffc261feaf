"""The residents' side of impeachment: a living resident of a city starts or signs the
demand to impeach the city's Tribune. Thin: the policy gives the seat, one service call."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from cities.i18n import activate_game_language
from cities.models import Alignment
from cities.ruleset_pages import check_page_section
from cities.selectors import game_get
from inboxes import policies
from kernel.errors import RuleViolation

from . import selectors, services


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def impeachment(request, slug: str):
    """The open demand of the viewer's city (how many living residents signed, of how many, and whether the
    viewer did), with a button to start or sign it. Anyone without a seat in the game gets the 404 of a missing
    page. Names of the signers are not shown (the Procurator's to know)."""
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "lepra_staff")
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


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def mafia_role(request, slug: str):
    """A mafioso acknowledges their role here (POST); the Consigliere sees, per city, who has and who
    has not, and confirms to the Procurator in the bar that everyone has (POST), naming nobody. Everyone else
    gets the 404 of a missing page (the page must not tell who is mafia)."""
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "lepra_staff")
    seat = policies.seat_in(request.user, game)
    is_consigliere = policies.holds_role_of(request.user, game, "night_staff_kinds")
    if not is_consigliere and (seat is None or seat.alignment != Alignment.MAFIA):
        raise Http404("No such page.")
    status, error = 200, None
    if request.method == "POST":
        try:
            if is_consigliere:
                services.do_confirm_mafia_acknowledged(game, acting_user=request.user)
                messages.success(request, _("The Procurator is told that every mafioso has acknowledged their role."))
            else:
                services.do_acknowledge_mafia_role(game, acting_user=request.user)
                messages.success(request, _("Your acknowledgement is recorded."))
        except RuleViolation as exc:
            error, status = str(exc), 400
        else:
            return redirect("mafia_role", slug=slug)
    context = {"game": game, "seat": seat, "is_consigliere": is_consigliere, "error": error,
               "rows": services.mafia_acknowledgements(game) if is_consigliere else None,
               "confirmed_at": services.mafia_confirmed_at(game) if is_consigliere else None,
               "acknowledged": seat is not None and selectors.has_acknowledged_role(seat)}
    return render(request, "staff/mafia_role.html", context, status=status)
