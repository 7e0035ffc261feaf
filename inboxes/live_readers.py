"""The access policy's readers of inboxes, for the live polls' versions (``kernel.live.set_inbox_readers``): who
may read an inbox now, as the policy decides it (``inboxes.policies``)."""
from __future__ import annotations

from kernel.live import ALL as LIVE_ALL

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
