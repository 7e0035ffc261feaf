from django.apps import AppConfig


class ArchiveConfig(AppConfig):
    """After the game (L-ARCH): disclosure consents, open-on-request log, archive pages; notifications (L-INBOX-20)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "archive"
