"""The M21 night page (RULES.md M-NIGHT-1, M-MAFIA-1, M-MAFIA-2): a player sees exactly the night actions they may
take now with the legal targets, their own standing submissions, and (the living mafia) the kill-vote tally and the
stash. Each POST is one service call; a refusal re-renders with the reason (400/403/409).

What must never leak: the page shows a player only their own submissions; the tally and stash only to the living
mafia; nothing to anyone else (a spectator or another game's player gets the page without any of it).
"""
from __future__ import annotations

from django.http import Http404
from django.shortcuts import redirect, render

from cities.i18n import activate_game_language
from cities.models import LifeStatus
from cities.selectors import game_get
from inboxes import policies
from kernel.errors import InvalidInput, RuleViolation, page_status

from . import night_services as ns
from .night_forms import NightActionForm, StashForm
from .night_kills import kill_tally
from .night_pages import tally_text, target_refusal
from .roles import MAFIA


def _form_refusal(form: NightActionForm, seats) -> str:
    """Why a posted night action was refused by its form, naming what is wrong (M-NIGHT-1): the action, the target
    (a dead or imprisoned target said as such, ``night_pages.target_refusal``) or the item."""
    if "option" in form.errors:
        return "That action is not open to you tonight."
    if "target" in form.errors:
        return target_refusal(form.data.get("target"), seats)
    return "Choose one of the items offered for this action."


def m21_night_page(request, slug: str):
    """GET: the night page of an M21 game; POST ``form=action`` (submit or withdraw) or ``form=stash``."""
    game = game_get(slug)
    if game.ruleset != "m21":
        raise Http404("No such page.")
    activate_game_language(request, game)
    seat = policies.seat_in(request.user, game)
    if seat is not None and getattr(seat, "m21_seat", None) is None:
        seat = None
    night = ns.open_night(game)
    options = ns.options_for(seat, night) if seat is not None else []
    seats = {s.name: s for s in ns.seats_of(game)} if seat is not None else {}
    me = seats.get(seat.name) if seat is not None else None
    is_mafia = me is not None and me.living and me.alignment == MAFIA
    mafia = [s.name for s in seats.values() if s.living and s.alignment == MAFIA] if is_mafia else []
    stash = ns.stash_items(game) if is_mafia and night is not None else []
    status, error = 200, None
    action_form = NightActionForm(options=options)
    stash_form = StashForm(stash=stash, mafia=mafia)
    if request.method == "POST":
        if not request.user.is_authenticated:
            raise Http404("No such page.")
        kind = request.POST.get("form")
        try:
            if kind == "stash":
                stash_form = StashForm(request.POST, stash=stash, mafia=mafia)
                if not stash_form.is_valid():
                    raise InvalidInput("Choose an item of the stash and a living member of the mafia.")
                ns.do_assign_stash_item(game, item=stash_form.cleaned_data["item"],
                                        holder=stash_form.cleaned_data["holder"], acting_user=request.user)
            else:
                action_form = NightActionForm(request.POST, options=options)
                if not action_form.is_valid():
                    raise InvalidInput(_form_refusal(action_form, seats))
                data = action_form.cleaned_data
                if data["withdraw"]:
                    ns.do_withdraw_night_action(game, option=data["option"], acting_user=request.user)
                else:
                    ns.do_submit_night_action(game, option=data["option"], target=data["target"] or None,
                                              item=data["item"] or None, acting_user=request.user)
        except RuleViolation as exc:
            error, status = str(exc), page_status(exc)
        else:
            return redirect("m21_night_page", slug=game.slug)
    standing = []
    if seat is not None and night is not None:
        for group, row in ns.current_choices(night, seat).items():
            standing.append({"group": group, "row": row})
    tally = None
    if is_mafia and night is not None:
        t = kill_tally(seats, ns.kill_votes(night))
        tally = tally_text(t.counts, t.target, t.carriers, t.tie_broken_by, living_mafia=len(mafia))
    context = {
        "game": game, "night": night, "seat": seat, "options": options, "standing": standing,
        "action_form": action_form, "stash_form": stash_form, "stash": stash, "tally": tally, "error": error,
        "alive": seat is not None and seat.status != LifeStatus.DEAD,
    }
    response = render(request, "m21/night.html", context, status=status)
    response["Cache-Control"] = "private"
    return response
