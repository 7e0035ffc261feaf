"""Celery tasks of notifications. Thin: each calls one service."""
from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="archive.tasks.send_notifications", ignore_result=True)
def send_notifications() -> int:
    """Beat: collect the notifications and send the e-mails that are due (``services.do_send_notifications``);
    returns the number of e-mails sent."""
    return services.do_send_notifications(acting_user=None)


@shared_task(name="archive.tasks.send_digests", ignore_result=True)
def send_digests() -> int:
    """The older beat entry (a worker of the previous release may still send it): ``send_notifications``."""
    return services.do_send_notifications(acting_user=None)


@shared_task(name="archive.tasks.send_reminders", ignore_result=True)
def send_reminders() -> int:
    """The older beat entry (a worker of the previous release may still send it): ``send_notifications``."""
    return services.do_send_notifications(acting_user=None)
