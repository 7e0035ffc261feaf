"""The frame of an M21 night (RULES.md M-SETUP-2, M-WIN-1): the clock starts a night once its day is decided and ends
it at its planned time, running every resolver registered in ``NIGHT_RESOLVERS`` (the night's resolution,
``rulesets.m21.night_services``) before checking victory and starting the next day."""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from cities.models import (
    Game,
    GameStatus,
)

from .day_services import do_start_m21_day
from .game_end import _finish_if_won
from .service_common import (
    _check_m21,
    start_night,
)

#: Functions ``(game, night_number, now) -> None`` run when a night ends, before the next day starts: the night's
#: resolution (M-NIGHT) registers here. Each runs in the clock's transaction.
NIGHT_RESOLVERS: list[Callable[[Game, int, datetime], None]] = []


@transaction.atomic
def do_start_m21_night(game: Game, day_number: int, *, planned_at: datetime, now: datetime | None = None) -> str:
    """Start night ``day_number`` at ``planned_at`` (the ``m21_night_start`` clock event of a game whose day was
    decided before the night started with the decision; ``service_common.start_night``): the night lasts
    ``night_hours`` (M-SETUP-2), where ``m21_night_end`` resolves it."""
    now = now or timezone.now()
    _check_m21(game)
    if game.status != GameStatus.RUNNING:
        return "the game is not running"
    ends = start_night(game, day_number, planned_at=planned_at, now=now)
    if ends is None:
        return f"night {day_number} has already started"
    return f"night {day_number} started; it ends at {ends.isoformat()}"


@transaction.atomic
def do_end_m21_night(game: Game, night: int, *, planned_at: datetime, now: datetime | None = None) -> str:
    """End night ``night`` at its planned time (by the clock): run ``NIGHT_RESOLVERS`` (the night's resolution),
    then start day ``night + 1`` at the same planned time."""
    now = now or timezone.now()
    for resolve in NIGHT_RESOLVERS:
        resolve(game, night, now)
    _finish_if_won(game, now)
    game.refresh_from_db()
    if game.status != GameStatus.RUNNING:
        return f"night {night} resolved; the game is over"
    do_start_m21_day(game, night + 1, planned_at=planned_at, acting_user=None, now=now)
    return f"night {night} ended; day {night + 1} started"
