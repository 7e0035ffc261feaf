"""Template tags of the M21 game thread: the live vote count above the thread (M-VOTE-8)."""
from __future__ import annotations

from django import template
from django.utils import timezone

from rulesets.m21 import selectors
from rulesets.m21.service_common import wall_text
from rulesets.m21.thread_tools import living_names

register = template.Library()


@register.inclusion_tag("m21/_vote_count.html", takes_context=True)
def m21_vote_count(context, inbox):
    """The live vote count of ``inbox``'s game for the request's user, who reads the thread (the view checked it
    through the policy; ``day_view`` checks again). The deadline is shown in the user's display zone, so the
    template gets ``user`` too (an inclusion tag's template sees only what it returns). A reader who may post
    while the day is open gets a vote button per living player (``living``): it fills the post box."""
    user = context["request"].user
    view = selectors.day_view(user, inbox.game, timezone.now())
    can_post = bool(context.get("can_post")) and view.day is not None and view.day.status == "open"
    return {"view": view, "game": inbox.game, "user": user, "thread": inbox, "can_post": can_post,
            "living": living_names(inbox.game) if can_post else []}


@register.filter
def m21_when(moment, zone: str) -> str:
    """``moment`` (aware) as every M21 page writes a time, in ``zone`` (an IANA name, e.g. the viewer's display
    zone): "Tue 8 Dec 2026, 04:30 GMT" (``rulesets.m21.service_common.wall_text``). Empty for None."""
    return wall_text(moment, zone) if moment else ""
