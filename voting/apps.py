from django.apps import AppConfig


class VotingConfig(AppConfig):
    name = "voting"

    def ready(self) -> None:
        from . import handlers  # noqa: F401 - registers the voting_open / voting_close scheduled events
