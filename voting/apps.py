from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class VotingConfig(AppConfig):
    """Turning messages into counted votes and results: the tallies, voting sessions, court cases, elections."""

    name = "voting"
    verbose_name = _("Lepra day: voting and court")
