"""The scheduled events of Lepra's phase plan (DESIGN.md "The clock"; RULES.md L-DAY-1..3, L-POST-2), registered
in ``cities.scheduler.HANDLERS`` when the Lepra app is ready: ``day_start``, ``night_start`` (which waits for a
pending deadline of its day), ``daily_post_draft`` and ``daily_post_publish``. ``night_end`` is the night's
(``rulesets.lepra.night.handlers``). Handlers change state only through services (``acting_user=None``)."""
from __future__ import annotations

from datetime import datetime

from cities.models import Game, GameStatus, ScheduledEvent
from cities.scheduler import handler
from kernel.errors import WrongState

from .services import (
    do_begin_day,
    do_begin_night,
    do_draft_daily_post,
    do_publish_daily_post,
    do_replan_clock,
    hold_night_start,
    pending_day_deadline,
)


@handler("day_start")
def _day_start(event: ScheduledEvent, now: datetime) -> str:
    """Start game day ``payload["day"]`` (L-DAY-1, L-POST-2): ``rulesets.lepra.clock.services.do_begin_day``. A day that
    already started is left as it is (a repeated or duplicated event changes nothing)."""
    day = event.payload["day"]
    try:
        plan = do_begin_day(event.game, day, acting_user=None, now=now)
    except WrongState as exc:
        return f"day {day} not started: {exc}"
    if event.game.status == GameStatus.FINISHED:
        return f"game over: daily post of day {day} published"
    return f"day {day} started; its night resolves at {plan.night_ends_at.isoformat()}"


@handler("night_start")
def _night_start(event: ScheduledEvent, now: datetime) -> str:
    """Close game day ``payload["day"]`` (L-DAY-3): ``rulesets.lepra.clock.services.do_begin_night``. While a voting, court or
    judge election deadline of that day is still pending at or after this event's due time (a court deadline past
    00:00, an election closing after midnight), the night waits: the plan is re-derived
    (``rulesets.lepra.clock.services.do_replan_clock``), which lays out a new ``night_start`` after that deadline and moves the
    night's end, the daily post's draft and the next day's start with it, in order and audited."""
    day = event.payload["day"]
    game = Game.objects.get(pk=event.game_id)
    if game.status == GameStatus.FINISHED:
        return "game over"
    later = pending_day_deadline(game, event.due_at, day)
    if later is not None:
        counts = do_replan_clock(game, reason="night_waits", now=now, running=event.pk)
        if not counts.get("created"):  # no plan (a game started by hand): wait for the deadline all the same
            hold_night_start(game, day, until=max(later, event.due_at), now=now)
        return f"night {day} waits for the deadline at {later.isoformat()}"
    try:
        do_begin_night(game, day, acting_user=None, now=now)
    except WrongState as exc:
        return f"night {day} not started: {exc}"
    return f"night {day} started"


@handler("daily_post_draft")
def _daily_post_draft(event: ScheduledEvent, now: datetime) -> str:
    """Draft the daily post of game day ``payload["day"]`` after the night's resolution (L-POST-2):
    ``rulesets.lepra.clock.services.do_draft_daily_post`` (an existing draft is kept)."""
    day = event.payload["day"]
    post = do_draft_daily_post(event.game, day, acting_user=None, now=now)
    return f"daily post of day {day} drafted: post {post.pk}"


@handler("daily_post_publish")
def _daily_post_publish(event: ScheduledEvent, now: datetime) -> str:
    """Publish the daily post of day ``payload["day"]`` once the Procurator's edit window after its draft has
    passed (L-POST-2; laid out by the day start when the draft was too fresh). A post the Procurator published
    meanwhile is left as it is."""
    day = event.payload["day"]
    post = do_publish_daily_post(event.game, day, acting_user=None, now=now)
    return f"daily post of day {day} published: post {post.pk}"
