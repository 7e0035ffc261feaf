"""A dispatcher process for ``test_clock_processes.py`` (test-only): ``dispatch_due_events()`` at the real time, with
the test-only ``night_end`` handler of ``tests/cities/clock_helpers.py`` standing in for the night resolution.

With ``CLOCK_CHAOS_DIE_AT_NIGHT=<n>`` the night handler of night ``n`` does its work (a kill, the audit row), prints
``MID-NIGHT <n>`` and sleeps inside the open transaction, so that the test can kill the process right there.
"""
from __future__ import annotations

import os
import sys
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mafia_site.settings.test")
django.setup()

from cities import scheduler
from tests.cities.clock_helpers import fake_night_end

DIE_AT = int(os.environ.get("CLOCK_CHAOS_DIE_AT_NIGHT") or 0)


def night_end(event, now):
    detail = fake_night_end(event, now)
    if event.payload["night"] == DIE_AT:
        print(f"MID-NIGHT {DIE_AT}", flush=True)
        time.sleep(300)
    return detail


scheduler.HANDLERS["night_end"] = night_end
print(f"Ran {scheduler.dispatch_due_events()} due event(s).", flush=True)
sys.exit(0)
