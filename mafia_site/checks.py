"""System checks that reject impossible setting combinations at start-up (DESIGN.md "Settings and services")."""
from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register


@register(Tags.security, deploy=False)
def check_mafia_settings(app_configs, **kwargs):
    """Return errors for tunables that cannot work: a demo game in a non-debug site, non-positive limits."""
    errors = []
    if settings.MAFIA_ALLOW_DEMO and not settings.DEBUG and not getattr(settings, "TESTING", False):
        errors.append(
            Error(
                "MAFIA_ALLOW_DEMO is on while DEBUG is off: the demo game (shared password) must never run in production.",
                id="mafia.E001",
            )
        )
    for name in ("MAFIA_DISPATCH_INTERVAL_SECONDS", "MAFIA_DISPATCH_BATCH", "MAFIA_MESSAGE_MAX_LENGTH",
                 "MAFIA_MESSAGES_PER_PAGE", "MAFIA_EVENT_RETRY_MAX_SECONDS", "MAFIA_EVENT_CRASH_RETRY_SECONDS",
                 "MAFIA_DAILY_POST_EDIT_MINUTES", "CELERY_TASK_SOFT_TIME_LIMIT", "CELERY_TASK_TIME_LIMIT"):
        if getattr(settings, name) <= 0:
            errors.append(Error(f"{name} must be positive.", id="mafia.E002"))
    if settings.CELERY_TASK_TIME_LIMIT <= settings.CELERY_TASK_SOFT_TIME_LIMIT:
        errors.append(Error("CELERY_TASK_TIME_LIMIT must be longer than CELERY_TASK_SOFT_TIME_LIMIT.", id="mafia.E003"))
    return errors
