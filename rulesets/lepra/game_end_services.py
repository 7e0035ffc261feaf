"""The end of a Lepra game (RULES.md L-WIN): the scoreboard of the living by side, the victory check after every
death (L-WIN-1) and the Procurator's early end (L-WIN-3), each closing the game with the site's final post and a
``GameResult``. The scoreboard counts the mafia: it is secret while the game runs and shown only in the final
post."""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cities.models import Alignment, City, Game, GameStatus, LifeStatus, PostKind, Resident
from cities.services import check_procurator, do_create_public_post, do_set_game_status
from inboxes.policies import holds_role
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import ruleset_of
from rulesets.lepra.models import GameResult
from rulesets.lepra import victory
from rulesets.lepra.setup.services import MAX_REASON_LENGTH
from rulesets.lepra.staff_kinds import StaffKind


def scoreboard_of(game: Game) -> dict[str, dict]:
    """{city number as str: {"name", "honest", "mafia"}}: the living of each city by side (L-WIN-1). Secret while
    the game runs (it counts the mafia): shown only in the final post."""
    board = {str(c.number): {"name": c.name, "honest": 0, "mafia": 0}
             for c in City.objects.filter(game=game).order_by("number")}
    for r in Resident.objects.filter(game=game, status=LifeStatus.ALIVE).select_related("city"):
        board[str(r.city.number)][r.alignment] += 1
    return board


def _finish(game: Game, *, winner: str, reason: str, acting_user, now: datetime) -> GameResult:
    board = scoreboard_of(game)
    with translation.override(game.language):
        if winner == victory.HONEST_WIN:
            headline = _("The game is over: the honest residents win.")
        elif winner == victory.MAFIA_WIN:
            headline = _("The game is over: the mafia win.")
        else:
            headline = _("The game was ended early by the Procurator.")
        lines = [headline, ""]
        if reason:
            lines += [_("Reason: %(reason)s") % {"reason": reason}, ""]
        lines += ["## " + _("Scoreboard"), ""]
        for entry in board.values():
            lines.append(_("- %(city)s: %(honest)d honest, %(mafia)d mafia alive.")
                         % {"city": entry["name"], "honest": entry["honest"], "mafia": entry["mafia"]})
        title = _("The end of the game")
    game = do_set_game_status(game, GameStatus.FINISHED, acting_user=None, now=now)
    post = do_create_public_post(game, kind=PostKind.ANNOUNCEMENT, title=title, body="\n".join(lines),
                                 acting_user=None, now=now)
    result = GameResult.objects.create(game=game, winner=winner, reason=reason, ended_at=now, scoreboard=board,
                                       post=post)
    record_event(game, "game.finished", actor=acting_user, at=now,
                 payload={"winner": winner, "early": not winner, "post": post.pk})
    return result


@transaction.atomic
def do_check_victory(game: Game, *, acting_user=None, now: datetime | None = None) -> str | None:
    """Check L-WIN-1 over the living of every city (after the spirit rule: spirits are dead) with
    ``rulesets.lepra.victory.decide_winner``; when decided, end the game: status finished, ``ended_at``, a ``GameResult``,
    and the site's final public post naming the winner with the scoreboard (the archive opens, L-ARCH-1).
    Returns "honest", "mafia" or None (the game goes on, it is not running, or it has no mafia at all: no draw
    yet). By the site or the Procurator."""
    now = now or timezone.now()
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status != GameStatus.RUNNING:
        return None
    if not Resident.objects.filter(game=game, alignment=Alignment.MAFIA).exists():
        return None  # no mafia drawn (a game set up by hand): nothing to decide
    winner = ruleset_of(game).check_victory(game)
    if winner is None:
        return None
    _finish(game, winner=winner, reason="", acting_user=acting_user, now=now)
    return winner


@transaction.atomic
def do_end_game_early(game: Game, *, reason: str, acting_user, now: datetime | None = None) -> GameResult:
    """The Procurator ends the game early (L-WIN-3); ``reason`` (1..2000 characters) is recorded and shown in the
    final post. Returns the GameResult (winner ""). Raises ``NotAllowed`` (not the Procurator), ``InvalidInput``
    (no reason, too long) or ``WrongState`` (the game is not running)."""
    now = now or timezone.now()
    if acting_user is None or not holds_role(acting_user, game, StaffKind.PROCURATOR):
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-WIN-3")
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput(_("Give the reason for ending the game."), rule="L-WIN-3")
    if len(reason) > MAX_REASON_LENGTH:
        raise InvalidInput(_("The reason is too long: %(length)d characters, at most %(max)d.")
                           % {"length": len(reason), "max": MAX_REASON_LENGTH})
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status != GameStatus.RUNNING:
        raise WrongState(_("The game is not running."), rule="L-WIN-3")
    return _finish(game, winner="", reason=reason, acting_user=acting_user, now=now)
