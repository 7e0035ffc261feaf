"""The roles app: the role catalogue, the draws, the night pipeline and victory; `ready` registers its clock handler."""
from django.apps import AppConfig


class RolesConfig(AppConfig):
    name = "roles"

    def ready(self) -> None:
        from . import handlers  # noqa: F401 - registers the night_end scheduled event
