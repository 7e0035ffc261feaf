from django.apps import AppConfig


class InboxesConfig(AppConfig):
    """Permissioned message threads and THE access policy (DESIGN.md)."""

    name = "inboxes"
    verbose_name = "Inboxes"
