from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class VotingConfig(AppConfig):
    name = "voting"
    verbose_name = _("Lepra day: voting and court")

    def ready(self) -> None:
        from . import handlers  # noqa: F401 - registers the voting_open / voting_close scheduled events
