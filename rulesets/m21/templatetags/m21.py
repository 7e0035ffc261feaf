"""Template tags of the M21 game thread: the live vote count above the thread (M-VOTE-8)."""
from __future__ import annotations

from django import template
from django.utils import timezone

from rulesets.m21 import selectors

register = template.Library()


@register.inclusion_tag("m21/_vote_count.html", takes_context=True)
def m21_vote_count(context, inbox):
    """The live vote count of ``inbox``'s game for the request's user, who reads the thread (the view checked it
    through the policy; ``day_view`` checks again). The deadline is shown in the user's display zone, so the
    template gets ``user`` too (an inclusion tag's template sees only what it returns)."""
    user = context["request"].user
    return {"view": selectors.day_view(user, inbox.game, timezone.now()), "game": inbox.game, "user": user}
