"""``manage.py clock pause [--reason TEXT] | resume | status``: hold the site's scheduler during an upgrade or a
restore (README "Upgrading a live site"). While paused no scheduled event runs; the pages say so; on resume the
due events run in order with their planned cut-offs."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from cities.models import ScheduledEvent
from cities.scheduler import clock_paused, do_pause_clock, do_resume_clock


class Command(BaseCommand):
    help = "Pause or resume the game clock (the scheduler), or show its status."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["pause", "resume", "status"])
        parser.add_argument("--reason", default="", help="Shown on the clock pages while paused (pause only).")

    def handle(self, *args, **options):
        action = options["action"]
        if action == "pause":
            pause = do_pause_clock(reason=options["reason"])
            self.stdout.write(f"Clock paused since {pause.paused_at.isoformat()}. A handler already running "
                              "finishes; nothing else runs until `manage.py clock resume`.")
        elif action == "resume":
            if do_resume_clock():
                self.stdout.write("Clock resumed: due events run at the next tick, in order.")
            else:
                self.stdout.write("The clock was not paused.")
        else:
            pause = clock_paused()
            running = ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True,
                                                    started_at__isnull=False).count()
            state = f"paused since {pause.paused_at.isoformat()} ({pause.reason or 'no reason given'})" if pause \
                else "running"
            self.stdout.write(f"Clock {state}; attempts started and not finished: {running}.")
