"""Scheduled events of the night (DESIGN.md "The clock"), registered in ``cities.scheduler.HANDLERS`` when the
app is ready: ``night_end`` with payload {"night": n} resolves night n (L-NIGHT-6). Handlers change state only
through services (``acting_user=None``)."""
from __future__ import annotations

from datetime import datetime

from cities.models import Game, GameDay, GameStatus, ScheduledEvent
from cities.scheduler import Waits, handler
from kernel.errors import WrongState
from rulesets.lepra.night.services import do_resolve_night


@handler("night_end")
def _night_end(event: ScheduledEvent, now: datetime) -> str:
    """Resolve the night (once: a second run returns the stored outcome and changes nothing). A game that is no
    longer running (ended by victory or by the Procurator) is left as it is. A night that has not started yet (its
    day is still running on the plan) is never resolved: the event waits (``Waits``), and the resolution counts
    only what was decided before the planned end of the night (``rulesets.lepra.clock.services.night_cutoff``)."""
    game = Game.objects.get(pk=event.game_id)
    night = int(event.payload["night"])
    if game.status != GameStatus.FINISHED and game.day_number == night and GameDay.objects.filter(game=game, number=night, ended_at__isnull=True).exists():
        raise Waits(f"night {night} has not started yet")
    try:
        outcome = do_resolve_night(game, night=night, acting_user=None, now=now)
    except WrongState as exc:
        return f"night {night} not resolved: {exc}"
    return f"resolved night {night}: {len(outcome.deaths)} deaths, {outcome.checks} checks"
