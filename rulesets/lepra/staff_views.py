"""Lepra's player pages about its staff (page section "lepra_staff"): a living resident of a city starts or signs the
demand to impeach the city's Tribune (L-IMPEACH); a mafioso acknowledges their role and the Consigliere confirms it
(L-ASSIGN); players complain of no confidence in the Supreme Arbiter or the Consigliere (L-IMPEACH-3). Thin: the
policy gives the seat, one service call of ``staff_services`` or ``no_confidence_services``."""
from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from cities.i18n import activate_game_language
from cities.models import Alignment, LifeStatus
from cities.ruleset_pages import check_page_section
from cities.selectors import game_get
from inboxes import policies
from kernel.errors import NotAllowed, RuleViolation, WrongState
from rulesets.lepra.staff_kinds import StaffKind

from . import no_confidence_services, staff_services
from .models import NoConfidenceTarget

_STATUS = {NotAllowed: 403, WrongState: 409}


class ComplaintForm(forms.Form):
    """The text of a complaint, or of a message in the mafia's complaint (Markdown)."""

    text = forms.CharField(label=gettext_lazy("Your complaint"), widget=forms.Textarea(attrs={"rows": 5}),
                           max_length=settings.MAFIA_MESSAGE_MAX_LENGTH)


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
    demand = staff_services.open_impeachment_demand_of(seat)
    status, error = 200, None
    if request.method == "POST":
        try:
            if demand is None:
                staff_services.do_demand_impeachment(game, acting_user=request.user)
            else:
                staff_services.do_sign_impeachment_demand(demand, acting_user=request.user)
        except RuleViolation as exc:
            error, status = str(exc), 400
        else:
            messages.success(request, _("Your signature is recorded."))
            return redirect("impeachment", slug=slug)
    context = {"game": game, "seat": seat, "demand": demand, "error": error,
               "signed": demand is not None and demand.signatures.filter(resident=seat).exists(),
               "counts": staff_services.living_signatures(demand) if demand is not None else None}
    return render(request, "lepra/staff/impeachment.html", context, status=status)


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
    is_consigliere = policies.holds_role(request.user, game, StaffKind.CONSIGLIERE)
    if not is_consigliere and (seat is None or seat.alignment != Alignment.MAFIA):
        raise Http404("No such page.")
    status, error = 200, None
    if request.method == "POST":
        try:
            if is_consigliere:
                staff_services.do_confirm_mafia_acknowledged(game, acting_user=request.user)
                messages.success(request, _("The Procurator is told that every mafioso has acknowledged their role."))
            else:
                staff_services.do_acknowledge_mafia_role(game, acting_user=request.user)
                messages.success(request, _("Your acknowledgement is recorded."))
        except RuleViolation as exc:
            error, status = str(exc), 400
        else:
            return redirect("mafia_role", slug=slug)
    context = {"game": game, "seat": seat, "is_consigliere": is_consigliere, "error": error,
               "rows": staff_services.mafia_acknowledgements(game) if is_consigliere else None,
               "confirmed_at": staff_services.mafia_confirmed_at(game) if is_consigliere else None,
               "acknowledged": seat is not None and staff_services.has_acknowledged_role(seat)}
    return render(request, "lepra/staff/mafia_role.html", context, status=status)


def _seat_or_404(request, game):
    seat = policies.seat_in(request.user, game)
    if seat is None:
        raise Http404("No such page.")
    return seat


def _page(request, game, seat, *, forms=None, error=None, status=200):
    cases = no_confidence_services.no_confidence_cases_for(request.user, game)
    living = seat.status == LifeStatus.ALIVE and game.status == "running"
    is_mafioso = living and seat.alignment == Alignment.MAFIA
    open_mafia_case = next((c for c in cases if c.target == NoConfidenceTarget.CONSIGLIERE and c.ruled_at is None),
                           None)
    forms = forms or {}
    context = {
        "game": game, "seat": seat, "cases": cases, "error": error, "living": living,
        "is_mafioso": is_mafioso, "open_mafia_case": open_mafia_case,
        "arbiter_form": forms.get("arbiter", ComplaintForm(prefix="arbiter")),
        "mafia_form": forms.get("mafia", ComplaintForm(prefix="mafia")),
        "signature": no_confidence_services.mafia_signature(seat.city),
    }
    return render(request, "lepra/staff/no_confidence.html", context, status=status)


@login_required
@require_http_methods(["GET", "HEAD"])
def no_confidence(request, slug: str):
    """The viewer's complaints of no confidence: their own about the Supreme Arbiter, and their
    city's mafia's about the Consigliere (mafia only), each with its inbox and ruling; forms to complain. Anyone
    without a seat in the game gets the 404 of a missing page."""
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "lepra_staff")
    return _page(request, game, _seat_or_404(request, game))


def _post(request, slug: str, key: str, call):
    game = game_get(slug)
    activate_game_language(request, game)
    seat = _seat_or_404(request, game)
    form = ComplaintForm(request.POST, prefix=key)
    target = NoConfidenceTarget.ARBITER if key == "arbiter" else NoConfidenceTarget.CONSIGLIERE
    try:  # who may complain first: the page shows no form to those who may not, so a form error would be lost
        no_confidence_services.check_may_complain(game, target, acting_user=request.user)
    except RuleViolation as exc:
        return _page(request, game, seat, error=str(exc), status=_STATUS.get(type(exc), 400))
    if not form.is_valid():
        return _page(request, game, seat, forms={key: form}, status=400)
    try:
        call(game, form.cleaned_data["text"])
    except RuleViolation as exc:
        return _page(request, game, seat, forms={key: form}, error=str(exc), status=_STATUS.get(type(exc), 400))
    messages.success(request, _("Your complaint is before the Procurator."))
    return redirect("no_confidence", slug=slug)


@login_required
@require_POST
def complain_about_arbiter(request, slug: str):
    """File a complaint of no confidence in the Supreme Arbiter (``do_file_no_confidence_in_arbiter``)."""
    return _post(request, slug, "arbiter", lambda game, text: no_confidence_services.do_file_no_confidence_in_arbiter(
        game, text, acting_user=request.user))


@login_required
@require_POST
def complain_about_consigliere(request, slug: str):
    """File the mafia's complaint of no confidence in the Consigliere, or write in the open one of the viewer's
    city (``do_file_no_confidence_in_consigliere`` / ``do_write_in_mafia_complaint``): signed "the mafia of
    city C"."""
    def call(game, text):
        case = next((c for c in no_confidence_services.no_confidence_cases_for(request.user, game)
                     if c.target == NoConfidenceTarget.CONSIGLIERE and c.ruled_at is None), None)
        if case is None:
            return no_confidence_services.do_file_no_confidence_in_consigliere(game, text, acting_user=request.user)
        return no_confidence_services.do_write_in_mafia_complaint(case, text, acting_user=request.user)
    return _post(request, slug, "mafia", call)
