"""Celery tasks of notifications. Thin: each calls one service."""
from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="archive.tasks.send_digests", ignore_result=True)
def send_digests() -> int:
    """Beat: send the e-mail digests that are due (``services.do_send_digests``); returns the number sent."""
    return services.do_send_digests(acting_user=None)


@shared_task(name="archive.tasks.send_reminders", ignore_result=True)
def send_reminders() -> int:
    """Beat: send the deadline reminders that are due (``services.do_send_reminders``); returns the number sent."""
    return services.do_send_reminders(acting_user=None)
