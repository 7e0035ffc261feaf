from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InboxesConfig(AppConfig):
    """Permissioned message threads and THE access policy (DESIGN.md)."""

    name = "inboxes"
    verbose_name = _("Inboxes")

    def ready(self):
        """Tell the live polls (``kernel.live``) who reads an inbox: the access policy's readers; register the
        system check that every ruleset's inbox kind fits ``Inbox.kind`` (``inboxes.checks``)."""
        # Imported once the models are loaded: the policy reads them.
        from kernel import live

        from . import checks  # noqa: F401  (registers the check)
        from .live_readers import live_readers_of_inboxes

        live.set_inbox_readers(live_readers_of_inboxes)
