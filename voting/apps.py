from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class VotingConfig(AppConfig):
    """The ruleset-neutral forum vote toolkit: the ``##`` command parser, the forum day tally, its exports and replays."""

    name = "voting"
    verbose_name = _("Voting")
