from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CitiesConfig(AppConfig):
    """Games, cities, residents, staff, the day schedule, public posts and the audit log."""

    name = "cities"
    verbose_name = _("Games and cities")

    def ready(self) -> None:
        from mafia_site import checks  # noqa: F401  (registers the system checks)
