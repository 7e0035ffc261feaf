"""Celery tasks. Thin: each calls one service or scheduler function."""
from __future__ import annotations

from celery import shared_task

from cities.scheduler import dispatch_due_events as _dispatch


@shared_task(name="mafia_site.tasks.dispatch_due_events", ignore_result=True)
def dispatch_due_events() -> int:
    """The beat tick: run every scheduled event that is due, one transaction each.

    Returns the number of events run. Safe to run concurrently and repeatedly (``try_run_one_due_event``).
    """
    return _dispatch()
