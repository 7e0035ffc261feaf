from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InboxesConfig(AppConfig):
    """Permissioned message threads and THE access policy (DESIGN.md)."""

    name = "inboxes"
    verbose_name = _("Inboxes")

    def ready(self):
        """Tell the live polls (``kernel.live``) who reads an inbox: the access policy's readers."""
        from kernel import live

        live.set_inbox_readers(inbox_readers)


def inbox_readers(inbox_ids: list[int]):
    """The (game id, user id) pairs who may read the inboxes ``inbox_ids`` now, by the access policy
    (``policies.readers_of_inbox``); ``kernel.live.ALL`` as the user for an inbox everyone reads (disclosed after
    the game, or public while it runs)."""
    from kernel.live import ALL

    from .models import Inbox
    from .policies import is_disclosed, is_public_now, readers_of_inbox

    for inbox in Inbox.objects.filter(pk__in=inbox_ids).select_related("game"):
        if is_disclosed(inbox) or is_public_now(inbox):
            yield inbox.game_id, ALL
        else:
            for user_id in readers_of_inbox(inbox).values_list("pk", flat=True):
                yield inbox.game_id, user_id
