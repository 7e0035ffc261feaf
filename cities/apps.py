from django.apps import AppConfig


class CitiesConfig(AppConfig):
    """Games, cities, residents, staff, the day schedule, public posts and the audit log."""

    name = "cities"
    verbose_name = "Games and cities"

    def ready(self) -> None:
        from mafia_site import checks  # noqa: F401  (registers the system checks)
