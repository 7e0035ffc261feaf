from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SanctionsConfig(AppConfig):
    """Complaints of no confidence (L-IMPEACH-3) and play bans (L-SANCTION-1/2)."""

    name = "sanctions"
    verbose_name = _("Sanctions")

    def ready(self) -> None:
        from . import services  # noqa: F401 - registers the play_ban_end scheduled event
