"""The Celery app. Beat runs one entry, the scheduler tick ``dispatch_due_events`` (DESIGN.md "The clock")."""
from __future__ import annotations

import os
from pathlib import Path

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mafia_site.settings.dev")

app = Celery("mafia_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["mafia_site", "archive"])


@app.on_after_finalize.connect
def _setup_periodic_tasks(sender, **kwargs):
    """Register the scheduler tick and make sure the filesystem broker's folders exist."""
    from django.conf import settings

    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
            Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS[key]).mkdir(parents=True, exist_ok=True)
    # A tick not picked up within one interval expires in the broker: while a worker is busy or down, ticks
    # never pile up (the next one does the same work).
    sender.add_periodic_task(
        settings.MAFIA_DISPATCH_INTERVAL_SECONDS,
        sender.signature("mafia_site.tasks.dispatch_due_events",
                         options={"expires": settings.MAFIA_DISPATCH_TICK_EXPIRES_SECONDS}),
        name="dispatch due scheduled events",
    )
    # Notifications (archive app): collected and e-mailed every minute ("at once"); each person's hourly and daily
    # digests go out when their hour or day has passed.
    sender.add_periodic_task(60.0, sender.signature("archive.tasks.send_notifications", options={"expires": 60.0}),
                             name="notifications")
