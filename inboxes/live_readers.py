"""The access policy's readers of inboxes, for the live polls' versions (``kernel.live.set_inbox_readers``): who
may read an inbox now, as the policy decides it (``inboxes.policies``)."""
from __future__ import annotations

from datetime import datetime

from kernel.live import ALL as LIVE_ALL
from staff.models import StaffStandIn

from .models import Inbox
from .policies import is_disclosed, is_public_now, readers_of_inbox


def live_readers_of_inboxes(inbox_ids: list[int]):
    """The (game id, user id) pairs who may read the inboxes ``inbox_ids`` now (``readers_of_inbox``), for the
    live polls' versions (``kernel.live``); ``kernel.live.ALL`` as the user for an inbox everyone reads
    (``is_disclosed``, ``is_public_now``). A generator; one query per inbox and a few more."""
    for inbox in Inbox.objects.filter(pk__in=inbox_ids).select_related("game"):
        if is_disclosed(inbox) or is_public_now(inbox):
            yield inbox.game_id, LIVE_ALL
        else:
            for user_id in readers_of_inbox(inbox).values_list("pk", flat=True):
                yield inbox.game_id, user_id


def next_access_change(user, game_id: int, now: datetime) -> datetime | None:
    """The next planned time after ``now`` (aware UTC) at which what ``user`` may read in game ``game_id`` changes
    by itself, with no write that would renew a live version: the start or the end of a stand-in period of theirs
    (``policies.standing_in_roles``). A poll token never stands past it (``kernel.live.poll_url``), so that a
    stand-in whose period ended gets the policy's answer at the next poll, whether or not anything was posted. None
    when there is no such time, or for an anonymous user. One query."""
    if not getattr(user, "is_authenticated", False):
        return None
    times = [moment for period in StaffStandIn.objects.filter(
                 stand_in__user=user, stand_in__game_id=game_id, ended_at__isnull=True, ends_at__gt=now,
             ).values_list("starts_at", "ends_at")
             for moment in period if moment > now]
    return min(times, default=None)

