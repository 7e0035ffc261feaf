from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InboxesConfig(AppConfig):
    """Permissioned message threads and THE access policy (DESIGN.md)."""

    name = "inboxes"
    verbose_name = _("Inboxes")
