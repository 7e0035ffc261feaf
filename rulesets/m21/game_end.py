"""The end of an M21 game (RULES.md M-WIN-1): who has won over the living, and finishing the game when a side has
(the result and every role announced, the clock stopped, the deal's salt published for verification)."""
from __future__ import annotations

from datetime import datetime

from cities.models import (
    Alignment,
    Game,
    GameStatus,
    LifeStatus,
    Resident,
    ScheduledEvent,
)
from cities.services import record_event
from voting.forum_replay import forum_winner

from .models import M21Seat
from .roles import ROLES
from .service_common import site_message, thread_of


def m21_winner(game: Game) -> str | None:
    """M-WIN-1 [interp] over the living: "town" when no mafia is left, "mafia" when the mafia are at least half of
    the living, else None."""
    living = Resident.objects.filter(game=game, status=LifeStatus.ALIVE).values_list("alignment", flat=True)
    return forum_winner(["mafia" if a == Alignment.MAFIA else "town" for a in living])


def _finish_if_won(game: Game, now: datetime) -> str | None:
    """End the game when a side has won (M-WIN-1): the game is finished, the clock's pending events are cancelled,
    the result is announced in the game thread with every role, and the deal's salt and lists are published so
    that anyone can verify the commitment. Returns the winner, or None while the game goes on."""
    winner = m21_winner(game)
    game = Game.objects.select_for_update().get(pk=game.pk)
    if winner is None or game.status == GameStatus.FINISHED:
        return winner
    game.status, game.ended_at = GameStatus.FINISHED, now
    game.save(update_fields=["status", "ended_at"])
    ScheduledEvent.objects.filter(game=game, done_at__isnull=True, cancelled_at__isnull=True).update(cancelled_at=now)
    settings = game.m21
    roles = "\n".join(f"- {seat.resident.name}: {ROLES[seat.role].name}"
                       + ("" if seat.sane or not ROLES[seat.role].is_cop else " (insane)")
                       for seat in M21Seat.objects.filter(resident__game=game).select_related("resident")
                       .order_by("resident__name"))
    site_message(thread_of(game), f"**The game is over: {'the town' if winner == 'town' else 'the mafia'} "
                                   f"wins.**\n\n{roles}\n\nThe deal: salt `{settings.deal_salt}`; check the "
                                   f"commitment `{settings.deal_commitment}` on the game page.", now)
    record_event(game, "m21.game_won", actor=None, at=now, payload={"winner": winner})
    return winner

