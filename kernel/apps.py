"""The kernel as a Django app: loads the rulesets of the installed apps when Django is ready."""
from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class KernelConfig(AppConfig):
    """The bottom layer. ``ready`` imports the ``ruleset`` module of every installed app that has one, so that a
    ruleset package registering itself at import time is known (apps registering in their own ``ready`` need
    nothing from here)."""

    name = "kernel"
    verbose_name = "Kernel"

    def ready(self) -> None:
        autodiscover_modules("ruleset")
