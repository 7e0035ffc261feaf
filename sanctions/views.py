"""The players' side of sanctions: complaints of no confidence in the Arbiter or the Consigliere and the public list of
play bans. Thin: the policy gives the seat, one service call."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from cities.i18n import activate_game_language
from cities.models import Alignment, LifeStatus
from cities.ruleset_pages import check_page_section
from cities.selectors import game_get
from inboxes import policies
from kernel.errors import NotAllowed, RuleViolation, WrongState

from . import selectors, services
from .forms import ComplaintForm
from .models import NoConfidenceTarget

_STATUS = {NotAllowed: 403, WrongState: 409}


def _seat_or_404(request, game):
    seat = policies.seat_in(request.user, game)
    if seat is None:
        raise Http404("No such page.")
    return seat


def _page(request, game, seat, *, forms=None, error=None, status=200):
    cases = selectors.no_confidence_cases_for(request.user, game)
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
        "signature": services.mafia_signature(seat.city),
    }
    return render(request, "sanctions/no_confidence.html", context, status=status)


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
        services.check_may_complain(game, target, acting_user=request.user)
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
    return _post(request, slug, "arbiter", lambda game, text: services.do_file_no_confidence_in_arbiter(
        game, text, acting_user=request.user))


@login_required
@require_POST
def complain_about_consigliere(request, slug: str):
    """File the mafia's complaint of no confidence in the Consigliere, or write in the open one of the viewer's
    city (``do_file_no_confidence_in_consigliere`` / ``do_write_in_mafia_complaint``): signed "the mafia of
    city C"."""
    def call(game, text):
        case = next((c for c in selectors.no_confidence_cases_for(request.user, game)
                     if c.target == NoConfidenceTarget.CONSIGLIERE and c.ruled_at is None), None)
        if case is None:
            return services.do_file_no_confidence_in_consigliere(game, text, acting_user=request.user)
        return services.do_write_in_mafia_complaint(case, text, acting_user=request.user)
    return _post(request, slug, "mafia", call)


def play_bans(request):
    """The public list of running play bans: the player's name, the offence kind, from when and
    until when (or for life). Never the description or the evidence."""
    bans = list(services.running_play_bans(timezone.now()))
    return render(request, "sanctions/play_bans.html", {"bans": bans})
