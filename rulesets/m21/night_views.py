"""The M21 night page (RULES.md M-NIGHT-1, M-MAFIA-1, M-MAFIA-2): a player sees exactly the night actions they may
take now with the legal targets, their own standing submissions, and (the living mafia) the kill-vote tally and the
stash.

What must never leak: the page shows a player only their own submissions; the tally and stash only to the living
mafia; nothing to anyone else (a spectator or another game's player gets the page without any of it).

Each button posts its own form to its own URL; each view parses it, makes one service call (the service decides
who may) and redirects back, or shows the page again with the reason.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from cities.i18n import activate_game_language
from cities.models import LifeStatus
from cities.selectors import game_get
from inboxes import policies
from kernel.errors import RuleViolation, page_status

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


@require_http_methods(["GET", "HEAD"])
def m21_night_page(request, slug: str):
    """GET: the night page of an M21 game. Its buttons post each to its own URL: a night action
    (``m21_night_submit``), taking one back (``m21_night_withdraw``), the stash (``m21_night_stash``)."""
    game = _night_game(request, slug)
    return _night_page(request, game, _night_state(request.user, game))


def _night_game(request, slug: str):
    """The M21 game ``slug`` (``Http404`` for another ruleset's game), its pages in the game's language."""
    game = game_get(slug)
    if game.ruleset != "m21":
        raise Http404("No such page.")
    activate_game_language(request, game)
    return game


def _night_state(user, game) -> dict:
    """What the night page knows of ``user``: their seat (None for a spectator or a stranger), tonight, their
    options and standing submissions and, for the living mafia, their partners, the stash and its assignment."""
    seat = policies.seat_in(user, game)
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
    return {"seat": seat, "night": night, "options": options, "seats": seats, "is_mafia": is_mafia, "mafia": mafia,
            "partners": partners, "stash": stash, "assignment": assignment, "current": current,
            "standing_rows": standing_rows}


def _night_page(request, game, state: dict, *, status: int = 200, error: str | None = None, action_form=None,
                stash_form=None):
    """The night page of ``state``; ``action_form`` / ``stash_form``: a refused bound form in place of the blank."""
    seat, night = state["seat"], state["night"]
    standing = [{"group": group, "row": row, "text": ns.standing_text(seat, row)}
                for group, row in state["standing_rows"].items()]
    tally = ns.live_tally_text(night) if state["is_mafia"] and night is not None else None
    assignment = state["assignment"]
    context = {
        "game": game, "night": night, "seat": seat, "options": state["options"], "standing": standing,
        "action_form": action_form or NightActionForm(options=state["options"], partners=state["partners"]),
        "stash_form": stash_form or StashForm(stash=state["stash"], mafia=state["mafia"], current=state["current"]),
        "stash": state["stash"], "tally": tally, "error": error,
        "stash_assignment": ns.stash_assignment_text(assignment) if assignment is not None else "",
        "alive": seat is not None and seat.status != LifeStatus.DEAD,
    }
    response = render(request, "m21/night.html", context, status=status)
    response["Cache-Control"] = "private"
    return response


def _night_call(request, game, state: dict, call, **forms):
    """Make the one service call of a night page button (``call()``, raising ``RuleViolation``): back to the page,
    or the page again with the reason (400/403/409) and the posted ``forms`` (``_night_page``'s)."""
    try:
        call()
    except RuleViolation as exc:
        return _night_page(request, game, state, status=page_status(exc), error=str(exc), **forms)
    return redirect("m21_night_page", slug=game.slug)


@require_POST
@login_required
def submit_night_action(request, slug: str):
    """Submit one night action (M-NIGHT-1): ``NightActionForm`` over the seat's options, then
    ``do_submit_night_action``."""
    game = _night_game(request, slug)
    state = _night_state(request.user, game)
    form = NightActionForm(request.POST, options=state["options"], partners=state["partners"])
    if not form.is_valid():
        return _night_page(request, game, state, status=400, error=_form_refusal(form, state["seats"]),
                           action_form=form)
    data = form.cleaned_data
    return _night_call(request, game, state, lambda: ns.do_submit_night_action(
        game, option=data["option"], target=data["target"] or None, item=data.get("item") or None,
        acting_user=request.user), action_form=form)


@require_POST
@login_required
def withdraw_night_action(request, slug: str):
    """Take back one standing submission of tonight (M-NIGHT-1): ``WithdrawForm`` over the seat's standing
    submissions, then ``do_withdraw_night_action``."""
    game = _night_game(request, slug)
    state = _night_state(request.user, game)
    form = WithdrawForm(request.POST, standing=list(state["standing_rows"]))
    if not form.is_valid():
        return _night_page(request, game, state, status=409, error="You have no such action standing tonight.")
    return _night_call(request, game, state, lambda: ns.do_withdraw_night_action(
        game, option=form.cleaned_data["option"], acting_user=request.user))


@require_POST
@login_required
def assign_stash_item(request, slug: str):
    """The living mafia assign tonight's stash item (M-MAFIA-2): ``StashForm``, then ``do_assign_stash_item``; the
    page confirms the assignment and says what it replaced."""
    game = _night_game(request, slug)
    state = _night_state(request.user, game)
    form = StashForm(request.POST, stash=state["stash"], mafia=state["mafia"], current=state["current"])
    if not form.is_valid():
        return _night_page(request, game, state, status=400, stash_form=form,
                           error="Choose an item of the stash and a living member of the mafia.")

    def assign():
        row = ns.do_assign_stash_item(game, item=form.cleaned_data["item"], holder=form.cleaned_data["holder"],
                                      acting_user=request.user)
        done = f"Assigned {ns.stash_assignment_text(row)}, collected at the end of the night."
        messages.success(request, done + (f" It replaces {row.replaced}." if row.replaced else ""))

    return _night_call(request, game, state, assign, stash_form=form)
