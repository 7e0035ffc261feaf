from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SanctionsConfig(AppConfig):
    """Play bans."""

    name = "sanctions"
    verbose_name = _("Sanctions")

    def ready(self) -> None:
        """Register the scheduler's ``play_ban_end`` handler and the sign-up and seating guards of play bans."""
        from cities.recruitment_services import (  # the guards' registries: filled once the apps are loaded
            SEATING_GUARDS,
            SIGNUP_GUARDS,
        )
        from cities.scheduler import handler  # the clock's registry: registered once the apps are loaded

        from .services import check_may_sign_up, play_ban_end_handler, play_ban_seating_refusal

        handler("play_ban_end")(play_ban_end_handler)
        if check_may_sign_up not in SIGNUP_GUARDS:
            SIGNUP_GUARDS.append(check_may_sign_up)
        if play_ban_seating_refusal not in SEATING_GUARDS:
            SEATING_GUARDS.append(play_ban_seating_refusal)
