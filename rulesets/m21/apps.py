"""The M21 ruleset as a Django app (label ``m21``): registers its spec, its scheduler handlers and its post hooks
when Django is ready."""
from django.apps import AppConfig


class M21Config(AppConfig):
    """M21 (RULES.md Part 2): registers ``M21Ruleset`` with ``kernel.rulesets`` and the game thread's clock."""

    name = "rulesets.m21"
    label = "m21"
    verbose_name = "M21"

    def ready(self) -> None:
        # Imported here: the spec and the handlers import models, which Django allows only once the registry is ready.
        from kernel.rulesets import register_ruleset

        from . import handlers, hooks, night_hooks, spectator_services  # noqa: F401  (register the scheduler handlers, the post hooks, the night's resolver and the spectators' sign-up guard)
        from .ruleset import M21Ruleset

        register_ruleset(M21Ruleset())
