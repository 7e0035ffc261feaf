"""The day actions of roles and items on the M21 game page (RULES.md M-ROLE reporter, item cop, coroner,
jailbreaker; M-ITEM-1, M-MAFIA-2): fire a gun, publish the reporter's extra, confiscate a found item, conduct the
post mortem, send the Jailbreaker the busted-out prisoner's message. Each POST parses one form and calls one
service of ``rulesets.m21.role_services``, which decides who may; a refusal comes back with its reason."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from inboxes import policies
from kernel.confirm import confirmation_page

from . import role_services as rs
from .forms import DayActionForm, day_pick_forms
from .role_services import day_actions_for
from .views import _act, _back, _m21_game

#: action key -> (the service call, the success message or "" for the service's own answer).
ACTIONS = {
    "gun": (lambda game, data, user: rs.do_fire_gun(game, target=data["target"], acting_user=user),
            "You fired your gun."),
    "extra": (lambda game, data, user: rs.do_publish_extra(game, text=data["text"], acting_user=user),
              "Your extra is published in the game thread."),
    "confiscate": (lambda game, data, user: rs.do_confiscate_item(game, target=data["target"], item=data["item"],
                                                                 acting_user=user),
                   "The item is in the evidence safe."),
    "post_mortem": (lambda game, data, user: rs.do_post_mortem(game, target=data["target"], acting_user=user),
                    "The post mortem is done: the answer is in your role PM."),
    "bust_out_message": (lambda game, data, user: rs.do_send_bust_out_message(game, text=data["text"],
                                                                             acting_user=user),
                         "Your message is on its way to the Jailbreaker."),
}


#: The actions whose target (and item) is picked among the legal choices of the game page (``day_pick_forms``).
PICK_ACTIONS = frozenset({"gun", "confiscate", "post_mortem"})


@require_POST
@login_required
def day_action(request, slug: str, action: str):
    """POST one day action ``action`` (a key of ``ACTIONS``; another is a 404) for the logged-in player."""
    game = _m21_game(slug, request)
    if action not in ACTIONS:
        raise Http404("No such action.")
    form = DayActionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(str(e) for errs in form.errors.values() for e in errs))
        return _back(request, game, 400)
    if action in PICK_ACTIONS:  # a target (and item) among the legal choices the page offered
        offers = day_actions_for(policies.seat_in(request.user, game), timezone.now())
        picks = day_pick_forms(offers, request.POST).get(action)
        if isinstance(picks, list):
            picks = dict(picks).get(request.POST.get("target", ""))
        if picks is not None and not picks.is_valid():  # not offered at all: the service says why (its status)
            messages.error(request, "; ".join(str(e) for errs in picks.errors.values() for e in errs))
            return _back(request, game, 400)
    if action == "gun":  # a shot cannot be taken back: the player confirms it first
        asked = confirmation_page(
            request, title="Fire your gun?", confirm_label="Fire", game=game,
            cancel_url=reverse("m21_game", args=[game.slug]),
            consequence=f"You shoot {form.cleaned_data['target']} now. Your gun has one shot, and the game thread "
                        "hears it.")
        if asked is not None:
            return asked
    call, success = ACTIONS[action]
    _, status = _act(request, game, lambda: call(game, form.cleaned_data, request.user), success)
    return _back(request, game, status)
