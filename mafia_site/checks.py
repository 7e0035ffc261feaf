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
                 "MAFIA_DAILY_POST_EDIT_MINUTES", "CELERY_TASK_SOFT_TIME_LIMIT", "CELERY_TASK_TIME_LIMIT",
                 "MAFIA_LIVE_TOKEN_SECONDS"):
        if getattr(settings, name) <= 0:
            errors.append(Error(f"{name} must be positive.", id="mafia.E002"))
    if settings.CELERY_TASK_TIME_LIMIT <= settings.CELERY_TASK_SOFT_TIME_LIMIT:
        errors.append(Error("CELERY_TASK_TIME_LIMIT must be longer than CELERY_TASK_SOFT_TIME_LIMIT.", id="mafia.E003"))
    backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
    if settings.MAFIA_LIVE_SHORTCUT and backend in _PER_PROCESS_CACHES:
        errors.append(Error(
            f"MAFIA_LIVE_SHORTCUT is on with a cache of one process ({backend}): a post written by another process "
            "(a worker, another web node) would not renew what this one reads, and its open pages would miss it.",
            hint="Set REDIS_URL (the cache every process shares) or MAFIA_LIVE_SHORTCUT=0.", id="mafia.E004"))
    return errors


#: Cache backends whose entries live in one process: the live shortcut cannot rest on them (kernel/live.py).
_PER_PROCESS_CACHES = {"LocMemCache", "DummyCache"}
