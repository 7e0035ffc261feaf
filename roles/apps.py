from django.apps import AppConfig


class RolesConfig(AppConfig):
    name = "roles"

    def ready(self) -> None:
        from . import handlers  # noqa: F401 - registers the night_end scheduled event
