"""The Celery app for ``test_clock_chaos_processes.py`` (test-only): ``mafia_site.celery.app`` whose handlers can be
made to hang once, inside their transaction and after their writes, so that the test can kill the worker or drop
its database connection right there.

``CHAOS_DIR``: a directory; a file ``hang-<kind>`` (or ``hang-<kind>-<n>`` for ``night_end`` of night n) asks the next
such handler to hang; the worker writes ``hung-...`` when it does (once per request) and prints ``CHAOS HANG ...``.
While it hangs it queries the database every 0.2 s, so that a terminated connection ends the handler with an error.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from celery import signals

from mafia_site.celery import app  # noqa: F401 - the app this module stands for (``celery -A``)

CHAOS_DIR = Path(os.environ.get("CHAOS_DIR") or "/nonexistent")


def _hang_names(event) -> list[str]:
    names = [f"hang-{event.kind}"]
    if event.kind == "night_end":
        names.insert(0, f"hang-night_end-{event.payload['night']}")
    return names


def _chaotic(real):
    def handler(event, now):
        from django.db import connection

        detail = real(event, now)
        for name in _hang_names(event):
            done = CHAOS_DIR / name.replace("hang-", "hung-", 1)
            if (CHAOS_DIR / name).exists() and not done.exists():
                done.touch()
                print(f"CHAOS HANG {name[5:]}", flush=True)
                deadline = time.monotonic() + 600
                while time.monotonic() < deadline:
                    time.sleep(0.2)
                    with connection.cursor() as cursor:
                        cursor.execute("SELECT 1")
        return detail
    return handler


@signals.worker_ready.connect
def _install(**kwargs):
    from cities import scheduler

    for kind in ("voting_close", "night_end"):
        scheduler.HANDLERS[kind] = _chaotic(scheduler.HANDLERS[kind])
    print("CHAOS handlers installed", flush=True)
