"""The M21 night page (RULES.md M-NIGHT-1, M-MAFIA-1, M-MAFIA-2): a player sees exactly the night actions they may
take now with the legal targets, their own standing submissions, and (the living mafia) the kill-vote tally and the
stash. Each POST is one service call; a refusal re-renders with the reason (400/403/409).

What must never leak: the page shows a player only their own submissions; the tally and stash only to the living
mafia; nothing to anyone else (a spectator or another game's player gets the page without any of it).
"""
from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render

from cities.i18n import activate_game_language
from cities.models import LifeStatus
from cities.selectors import game_get
from inboxes import policies
from kernel.errors import InvalidInput, RuleViolation, WrongState, page_status

from . import night_services as ns
from .night_forms import NightActionForm, StashForm, WithdrawForm
from .night_pages import target_refusal
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
    """GET: the night page of an M21 game; POST ``form=action`` (submit, or with ``withdraw`` take back) or
    ``form=stash`` (M-MAFIA-2: the page confirms the assignment, says what it replaced, and shows it selected)."""
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
    partners = [n for n in mafia if n != seat.name] if is_mafia else []
    stash = ns.stash_items(game) if is_mafia and night is not None else []
    assignment = ns.stash_assignment(night) if is_mafia else None
    current = (assignment.item, assignment.holder.name) if assignment is not None else None
    standing_rows = ns.current_choices(night, seat) if seat is not None and night is not None else {}
    status, error = 200, None
    action_form = NightActionForm(options=options, partners=partners)
    stash_form = StashForm(stash=stash, mafia=mafia, current=current)
    if request.method == "POST":
        if not request.user.is_authenticated:
            raise Http404("No such page.")
        kind = request.POST.get("form")
        try:
            if kind == "stash":
                stash_form = StashForm(request.POST, stash=stash, mafia=mafia, current=current)
                if not stash_form.is_valid():
                    raise InvalidInput("Choose an item of the stash and a living member of the mafia.")
                row = ns.do_assign_stash_item(game, item=stash_form.cleaned_data["item"],
                                              holder=stash_form.cleaned_data["holder"], acting_user=request.user)
                done = f"Assigned {ns.stash_assignment_text(row)}, collected at the end of the night."
                messages.success(request, done + (f" It replaces {row.replaced}." if row.replaced else ""))
            elif request.POST.get("withdraw"):
                withdraw_form = WithdrawForm(request.POST, standing=list(standing_rows))
                if not withdraw_form.is_valid():
                    raise WrongState("You have no such action standing tonight.")
                ns.do_withdraw_night_action(game, option=withdraw_form.cleaned_data["option"],
                                            acting_user=request.user)
            else:
                action_form = NightActionForm(request.POST, options=options, partners=partners)
                if not action_form.is_valid():
                    raise InvalidInput(_form_refusal(action_form, seats))
                data = action_form.cleaned_data
                ns.do_submit_night_action(game, option=data["option"], target=data["target"] or None,
                                          item=data.get("item") or None, acting_user=request.user)
        except RuleViolation as exc:
            error, status = str(exc), page_status(exc)
        else:
            return redirect("m21_night_page", slug=game.slug)
    standing = [{"group": group, "row": row, "text": ns.standing_text(seat, row)}
                for group, row in standing_rows.items()]
    tally = ns.live_tally_text(night) if is_mafia and night is not None else None
    context = {
        "game": game, "night": night, "seat": seat, "options": options, "standing": standing,
        "action_form": action_form, "stash_form": stash_form, "stash": stash, "tally": tally, "error": error,
        "stash_assignment": ns.stash_assignment_text(assignment) if assignment is not None else "",
        "alive": seat is not None and seat.status != LifeStatus.DEAD,
    }
    response = render(request, "m21/night.html", context, status=status)
    response["Cache-Control"] = "private"
    return response
