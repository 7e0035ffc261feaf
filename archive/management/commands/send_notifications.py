"""``manage.py send_notifications``: collect the notifications due and send the e-mails due once (the same work as
the beat entry ``archive.tasks.send_notifications``), for a cron job where Celery beat is not run."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from archive import services


class Command(BaseCommand):
    help = "Collect the notifications and send the e-mails that are due."

    def handle(self, *args, **options):
        sent = services.do_send_notifications(acting_user=None)
        self.stdout.write(f"notifications e-mailed: {sent}")
