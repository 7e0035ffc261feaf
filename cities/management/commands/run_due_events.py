"""``manage.py run_due_events [--dry-run]``: run (or preview) every scheduled event that is due now."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from cities.scheduler import clock_session_limits, dispatch_due_events, preview_due_events


class Command(BaseCommand):
    help = "Run the scheduled events that are due (the same work as the beat tick); --dry-run changes nothing."

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true",
                            help="Run the handlers inside a transaction that is rolled back and print the outcome.")

    def handle(self, *args, **options):
        if options["dry_run"]:
            with clock_session_limits():
                results = preview_due_events()
            if not results:
                self.stdout.write("Nothing is due.")
            for r in results:
                status = "would run" if r.ok else "would FAIL"
                self.stdout.write(f"[dry run] event {r.event_id} {r.kind} (game {r.game_id}): {status}: {r.detail}")
            return
        with clock_session_limits():  # the beat tick's bounds (a hung handler cut well before a minute)
            count = dispatch_due_events()
        self.stdout.write(f"Ran {count} due event(s).")
