"""Pages of Lepra's setup draws: the Procurator's numbers (L-ASSIGN-2), the candidate's answer to a commissar offer
(L-COMM-2) and the draw verification after the game (L-ASSIGN-3). Thin: parse, one service call, render."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from cities.i18n import activate_game_language
from cities.ruleset_pages import check_page_section
from cities.selectors import game_get
from inboxes import policies
from kernel.errors import RuleViolation, page_status
from roles import draw
from rulesets.lepra.night import selectors
from rulesets.lepra.setup import draw as setup_draw
from rulesets.lepra.setup import services
from rulesets.lepra.staff_kinds import StaffKind

from .forms import AnswerOfferForm, MafiaNumbersForm


def _cities_with_counts(game, mafia_draw):
    cities = selectors.cities_in_order(game)
    for city in cities:
        city.population = len(mafia_draw.lists[str(city.number)])
        city.mafia_count = setup_draw.mafia_count(city.population)
    return cities


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def mafia_numbers(request, slug: str):
    """The Procurator names the mafia numbers of each city (L-ASSIGN-2), reached from the setup page and the bar.
    Shows only counts and ranges, never the notary lists. 404 for everyone else."""
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "lepra_setup")
    if not policies.holds_role(request.user, game, StaffKind.PROCURATOR):
        raise Http404("No such page.")
    mafia_draw = services.mafia_draw_of(game)
    if mafia_draw is None:
        raise Http404("No draw yet.")
    cities = _cities_with_counts(game, mafia_draw)
    form = MafiaNumbersForm(request.POST or None, cities=cities)
    status = 200
    error = None
    if request.method == "POST" and mafia_draw.numbers is None:
        if form.is_valid():
            try:
                numbers = {c.number: services.parse_numbers(form.cleaned_data[f"city_{c.number}"]) for c in cities}
                services.do_name_mafia_numbers(game, numbers, acting_user=request.user)
            except RuleViolation as exc:
                error = str(exc)
                status = page_status(exc)
            else:
                return redirect("game_setup", slug=game.slug)
        else:
            status = 400
    elif request.method == "POST":
        error, status = _("The numbers are already named."), 409
    context = {"game": game, "form": form, "draw": mafia_draw, "cities": cities, "error": error}
    return render(request, "lepra/setup/numbers.html", context, status=status)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def commissar_offer(request, slug: str, offer_id: str):
    """The candidate's answer page (L-COMM-2): an honest candidate sees "accept" and "decline", a mafioso only
    "decline"; an acceptance by a mafioso is refused by the service whatever is posted. 404 for anyone who is not
    the candidate, but the Procurator's GET (the link in the offer inbox he reads) goes to his setup page's
    commissar step, where he follows the offer."""
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "lepra_setup")
    offer = services.offer_for_candidate(request.user, game, offer_id)
    if offer is None:
        if request.method in ("GET", "HEAD") and policies.holds_role(request.user, game, StaffKind.PROCURATOR):
            return redirect(reverse("game_setup", args=[game.slug]) + "#step-commissars")
        raise Http404("No such offer.")
    form = AnswerOfferForm(request.POST or None)
    status = 200
    error = None
    if request.method == "POST":
        if form.is_valid():
            try:
                services.do_answer_commissar_offer(offer, accept=form.cleaned_data["answer"] == "accept",
                                                   reason=form.cleaned_data["reason"], acting_user=request.user)
            except RuleViolation as exc:
                error = str(exc)
                status = page_status(exc)
            else:
                return redirect("commissar_offer", slug=game.slug, offer_id=offer.public_id)
        else:
            error = "; ".join(str(e) for errs in form.errors.values() for e in errs)
            status = 400
        offer.refresh_from_db()
    context = {"game": game, "offer": offer, "form": form, "may_accept": services.may_accept(offer), "error": error}
    return render(request, "lepra/setup/offer.html", context, status=status)


def draw_verification(request, slug: str):
    """After the game: the lists, the salt, the numbers, the published commitment and its recomputation
    (L-ASSIGN-3, L-ARCH-3). Before the game is finished this page is a 404 for everyone (lists + numbers name
    the mafia)."""
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "mafia_draw")
    try:
        mafia_draw = services.draw_for_verification(game)
    except RuleViolation:
        raise Http404("No such page.") from None
    recomputed = draw.commitment(mafia_draw.lists, mafia_draw.salt)
    cities = []
    for city in selectors.cities_in_order(game):
        numbers = set(mafia_draw.numbers.get(str(city.number), []))
        rows = [(i, name, i in numbers) for i, name in enumerate(mafia_draw.lists[str(city.number)], 1)]
        cities.append({"city": city, "rows": rows, "numbers": sorted(numbers)})
    context = {
        "game": game, "draw": mafia_draw, "cities": cities, "recomputed": recomputed,
        "matches": draw.verify_commitment(mafia_draw.lists, mafia_draw.salt, mafia_draw.commitment),
        "canonical": draw.canonical_bytes(mafia_draw.lists, mafia_draw.salt).decode("utf-8"),
        "problems": services.verification_problems(mafia_draw),
    }
    return render(request, "lepra/setup/verify.html", context)
