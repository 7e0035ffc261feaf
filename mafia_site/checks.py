"""System checks that reject impossible setting combinations at start-up (DESIGN.md "Settings and services")."""
from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register

from cities.staff_kinds import staff_kind_problems
from kernel.events import event_kind_problems


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
                 "MAFIA_BUSY_RETRY_AFTER_SECONDS", "MAFIA_CLOCK_LOCK_TIMEOUT_MS", "MAFIA_CLOCK_STATEMENT_TIMEOUT_MS",
                 "MAFIA_CLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS", "MAFIA_LIVE_TOKEN_SECONDS"):
        if getattr(settings, name) <= 0:
            errors.append(Error(f"{name} must be positive.", id="mafia.E002"))
    if settings.CELERY_TASK_TIME_LIMIT <= settings.CELERY_TASK_SOFT_TIME_LIMIT:
        errors.append(Error("CELERY_TASK_TIME_LIMIT must be longer than CELERY_TASK_SOFT_TIME_LIMIT.", id="mafia.E003"))
    errors.extend(_database_timeout_errors())
    errors.extend(Error(f"Staff kinds: {problem}.", id="mafia.E009") for problem in staff_kind_problems())
    errors.extend(Error(f"Event kinds: {problem}.", id="mafia.E010") for problem in event_kind_problems())
    backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
    if settings.MAFIA_LIVE_SHORTCUT and backend in _PER_PROCESS_CACHES:
        errors.append(Error(
            f"MAFIA_LIVE_SHORTCUT is on with a cache of one process ({backend}): a post written by another process "
            "(a worker, another web node) would not renew what this one reads, and its open pages would miss it.",
            hint="Set REDIS_URL (the cache every process shares) or MAFIA_LIVE_SHORTCUT=0.", id="mafia.E008"))
    return errors


def _database_timeout_errors() -> list[Error]:
    """The database timeouts (milliseconds; 0 turns a session's own off) that cannot work together: a negative one;
    a lock timeout that the statement timeout always beats (a request would wait the statement's whole time for a
    lock); a clock bound that the Celery task's soft time limit beats (a hung handler would keep its locks until
    the task is cut)."""
    errors = []
    site = ("DATABASE_STATEMENT_TIMEOUT_MS", "DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS", "DATABASE_LOCK_TIMEOUT_MS")
    for name in site:
        if getattr(settings, name) < 0:
            errors.append(Error(f"{name} must be 0 (off) or positive.", id="mafia.E004"))
    lock, statement = settings.DATABASE_LOCK_TIMEOUT_MS, settings.DATABASE_STATEMENT_TIMEOUT_MS
    if statement > 0 and (lock == 0 or lock >= statement):
        errors.append(Error("DATABASE_LOCK_TIMEOUT_MS must be on and shorter than DATABASE_STATEMENT_TIMEOUT_MS: a "
                            "request waits that long for a row another transaction holds, then answers busy.",
                            id="mafia.E005"))
    if settings.MAFIA_CLOCK_LOCK_TIMEOUT_MS >= settings.MAFIA_CLOCK_STATEMENT_TIMEOUT_MS:
        errors.append(Error("MAFIA_CLOCK_LOCK_TIMEOUT_MS must be shorter than MAFIA_CLOCK_STATEMENT_TIMEOUT_MS.",
                            id="mafia.E006"))
    soft_ms = settings.CELERY_TASK_SOFT_TIME_LIMIT * 1000
    for name in ("MAFIA_CLOCK_STATEMENT_TIMEOUT_MS", "MAFIA_CLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS"):
        if getattr(settings, name) >= soft_ms:
            errors.append(Error(f"{name} must be shorter than CELERY_TASK_SOFT_TIME_LIMIT (in ms): a hung handler is "
                                "cut by the database before the task's time limit.", id="mafia.E007"))
    return errors


#: Cache backends whose entries live in one process: the live shortcut cannot rest on them (kernel/live.py).
_PER_PROCESS_CACHES = {"LocMemCache", "DummyCache"}
