"""``manage.py send_notifications``: send the due deadline reminders and e-mail digests once (the same work as the
beat entries ``archive.tasks.send_reminders`` / ``send_digests``), for a cron job where Celery beat is not run."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from archive import services


class Command(BaseCommand):
    help = "Send the due deadline reminders and e-mail digests (L-INBOX-20)."

    def add_arguments(self, parser):
        parser.add_argument("--no-digests", action="store_true", help="Send reminders only.")

    def handle(self, *args, **options):
        reminders = services.do_send_reminders(acting_user=None)
        digests = 0 if options["no_digests"] else services.do_send_digests(acting_user=None)
        self.stdout.write(f"reminders sent: {reminders}; digests sent: {digests}")
