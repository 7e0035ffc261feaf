"""The M21 game's clock (DESIGN.md "The clock"): the scheduler handlers of its phase events. Each runs in the
clock's transaction and changes state only through ``rulesets.m21.services``; each uses the event's planned time
(``due_at``), never the time the handler happens to run."""
from __future__ import annotations

from datetime import datetime

from cities.models import ScheduledEvent
from cities.scheduler import handler
from kernel.errors import WrongState

from . import services


@handler("m21_day_start")
def _day_start(event: ScheduledEvent, now: datetime) -> str:
    """Start day ``payload["day"]`` at its planned time."""
    try:
        services.do_start_m21_day(event.game, event.payload["day"], planned_at=event.due_at, acting_user=None,
                                  now=now)
    except WrongState as exc:
        return f"day {event.payload['day']} not started: {exc}"
    return f"day {event.payload['day']} started"


@handler("m21_day_deadline")
def _day_deadline(event: ScheduledEvent, now: datetime) -> str:
    """Close day ``payload["day"]`` at its planned deadline (M-VOTE-4)."""
    return services.do_close_m21_day_at_deadline(event.game, event.payload["day"], now=now)


@handler("m21_casting_window_end")
def _casting_window_end(event: ScheduledEvent, now: datetime) -> str:
    """The Judge's 15 minutes after a tied day are over (M-ROLE judge)."""
    return services.do_close_m21_casting_window(event.game, event.payload["day"], now=now)


@handler("m21_night_start")
def _night_start(event: ScheduledEvent, now: datetime) -> str:
    """Start the night after a decided day (the hammer's or the deadline's)."""
    return services.do_start_m21_night(event.game, event.payload["day"], planned_at=event.due_at, now=now)


@handler("m21_night_end")
def _night_end(event: ScheduledEvent, now: datetime) -> str:
    """End the night at its planned time: the night's resolution, then the next day."""
    return services.do_end_m21_night(event.game, event.payload["night"], planned_at=event.due_at, now=now)
