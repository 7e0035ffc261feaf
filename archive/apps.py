from django.apps import AppConfig


class ArchiveConfig(AppConfig):
    """After the game: disclosure consents, open-on-request log, archive pages; notifications."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "archive"
