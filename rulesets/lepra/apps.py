"""The Lepra ruleset as a Django app: registers its spec when Django is ready."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LepraConfig(AppConfig):
    """Lepra (RULES.md L-*): registers ``LepraRuleset`` with ``kernel.rulesets``."""

    name = "rulesets.lepra"
    label = "lepra"
    verbose_name = _("Lepra")

    def ready(self) -> None:
        # Imported here, not at the top: the spec's modules import models, which Django allows only once the app
        # registry is ready.
        from django.db.models.signals import post_migrate

        from kernel.rulesets import register_ruleset  # the registry the engine reads (kernel is below rulesets)

        from . import handlers, hooks  # noqa: F401  (register the scheduler handlers and the post hooks)
        from .clock import handlers as clock_handlers  # noqa: F401  (registers the phase plan's handlers)
        from .night import handlers as night_handlers  # noqa: F401  (registers the night_end handler)
        from .ruleset import LepraRuleset

        register_ruleset(LepraRuleset())
        # Lepra's rules on the shared inbox table stand again after a migrate that made or remade it.
        from .inbox_constraints import ensure_after_migrate

        post_migrate.connect(ensure_after_migrate, sender=self, dispatch_uid="lepra_inbox_constraints")
