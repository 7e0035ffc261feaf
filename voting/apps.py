from django.apps import AppConfig


class VotingConfig(AppConfig):
    name = "voting"
