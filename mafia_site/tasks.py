"""Celery tasks. Thin: each calls one service or scheduler function."""
from __future__ import annotations

from celery import shared_task

from cities.scheduler import clock_session_limits
from cities.scheduler import dispatch_due_events as _dispatch


@shared_task(name="mafia_site.tasks.dispatch_due_events", ignore_result=True, acks_late=False)
def dispatch_due_events() -> int:
    """The beat tick: run every scheduled event that is due, one transaction each.

    Returns the number of events run. Safe to run concurrently and repeatedly (``try_run_one_due_event``). Acked
    on receipt: a tick lost with a killed worker is not redelivered (the next beat tick does its work, and the
    attempt it had recorded is retried after the crash back-off). Bounded by ``CELERY_TASK_SOFT_TIME_LIMIT`` /
    ``CELERY_TASK_TIME_LIMIT``; a tick older than one interval expires in the broker (``mafia_site.celery``), and
    its database session by the clock's own lock, statement and idle timeouts (``clock_session_limits``).
    """
    with clock_session_limits():
        return _dispatch()
