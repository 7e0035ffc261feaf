"""Spectators of an M21 game (RULES.md M-SETUP-3: "a spectators' thread exists for spectators and eliminated
players"): a logged-in account that does not play the game joins as a spectator and may leave again; the access
policy (``inboxes.policies.spectated_games``) then lets it read the game thread and talk in the spectators' thread,
never a role PM, the mafia thread, the office or a night page.

Who may watch, and what watching forbids afterwards (a spectator reads what the eliminated say, so that knowledge
must never reach a seat):
- the hosts read every thread already and do not join; a seated player (alive, dead or imprisoned: the eliminated
  are put in the spectators' thread by the game itself) never joins; before the deal, an account signed up to play
  does not join (it may withdraw its sign-up first, and is then no longer a player);
- a player replaced out of the game (L-REPLACE-1) holds no seat any more and may watch like any outsider: they are
  out of the game for good, as the eliminated beside them in the spectators' thread are;
- an account that has ever watched a game (left or not) never signs up for it (``refuse_spectator_sign_up``, a
  sign-up guard) and never takes a seat in it as a replacement (``inboxes.membership_services.do_replace_player``).

Every ``do_<verb>_<noun>(game, *, acting_user, now=None)`` runs in one transaction under the game's row lock (the
sign-up takes the same lock, so a sign-up and a join cannot cross), writes a ``GameEvent`` and raises a
``RuleViolation`` with a message a player can read.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from cities.models import Game, GameStatus, Resident, Signup, StaffRole
from cities.recruitment_services import SIGNUP_GUARDS
from cities.services import record_event
from inboxes import policies, viewer_reads
from inboxes.models import Spectator
from kernel.errors import InvalidInput, NotAllowed, WrongState

from .service_common import RULESET


def _check_account(acting_user) -> None:
    if acting_user is None or not getattr(acting_user, "is_authenticated", False):
        raise NotAllowed("Log in to watch a game.", rule="M-SETUP-3")
    if not acting_user.is_active:
        raise NotAllowed("This account is not active.", rule="M-SETUP-3")


def _locked_game(game: Game) -> Game:
    if game.ruleset != RULESET:
        raise InvalidInput("Only M21 games have spectators.", rule="M-SETUP-3")
    return Game.objects.select_for_update().get(pk=game.pk)


@transaction.atomic
def do_join_as_spectator(game: Game, *, acting_user, now: datetime | None = None) -> Spectator:
    """``acting_user`` watches ``game`` as a spectator from ``now`` (M-SETUP-3); an account that left joins again.
    Returns the ``Spectator`` row. Raises ``NotAllowed`` (anonymous, inactive, a host of the game, a seated player,
    an account signed up to play), ``WrongState`` (the game is over: its threads are public; already watching),
    ``InvalidInput`` (not an M21 game). Nothing changes when it raises."""
    now = now or timezone.now()
    _check_account(acting_user)
    game = _locked_game(game)
    if game.status == GameStatus.FINISHED:
        raise WrongState("The game is over: its threads are public, no need to join.", rule="M-SETUP-3")
    if StaffRole.objects.filter(game=game, user=acting_user).exists():
        raise NotAllowed("You host this game: you read every thread already.", rule="M-SETUP-3")
    if Resident.objects.filter(game=game, user=acting_user).exists():
        raise NotAllowed("You play in this game: players never read the spectators' thread (the eliminated join "
                         "it by themselves).", rule="M-SETUP-3")
    if Signup.objects.filter(game=game, user=acting_user, withdrawn_at__isnull=True).exists() and \
            game.status in (GameStatus.RECRUITMENT, GameStatus.SETUP):
        raise NotAllowed("You are signed up to play in this game: a player never watches it as a spectator.",
                         rule="M-SETUP-3")
    row = Spectator.objects.select_for_update().filter(game=game, user=acting_user).first()
    if row is not None and row.left_at is None:
        raise WrongState("You already watch this game.", rule="M-SETUP-3")
    if row is None:
        row = Spectator.objects.create(game=game, user=acting_user, joined_at=now)
    else:
        row.joined_at, row.left_at = now, None
        row.save(update_fields=["joined_at", "left_at"])
    viewer_reads.forget_viewer_cache(acting_user)
    record_event(game, "m21.spectator_joined", actor=acting_user, at=now, payload={"user": acting_user.pk})
    return row


@transaction.atomic
def do_leave_as_spectator(game: Game, *, acting_user, now: datetime | None = None) -> Spectator:
    """``acting_user`` stops watching ``game`` at ``now``: the game thread and the spectators' thread close to them
    at once; the row stays, so the account still never plays this game (M-SETUP-3). Returns the row. Raises
    ``NotAllowed`` (anonymous), ``WrongState`` (not watching), ``InvalidInput`` (not an M21 game)."""
    now = now or timezone.now()
    _check_account(acting_user)
    game = _locked_game(game)
    row = Spectator.objects.select_for_update().filter(game=game, user=acting_user, left_at__isnull=True).first()
    if row is None:
        raise WrongState("You do not watch this game.", rule="M-SETUP-3")
    row.left_at = now
    row.save(update_fields=["left_at"])
    viewer_reads.forget_viewer_cache(acting_user)
    record_event(game, "m21.spectator_left", actor=acting_user, at=now, payload={"user": acting_user.pk})
    return row


def refuse_spectator_sign_up(user, game: Game, now: datetime) -> None:
    """The sign-up guard of M-SETUP-3 (``cities.recruitment_services.SIGNUP_GUARDS``): an account that has watched ``game`` as a
    spectator, left or not, never signs up for it. Raises ``NotAllowed``."""
    if Spectator.objects.filter(game=game, user=user).exists():
        raise NotAllowed("You have watched this game as a spectator: you cannot play in it.", rule="M-SETUP-3")


def may_join_as_spectator(user, game: Game) -> bool:
    """Whether the game page offers ``user`` the "watch as a spectator" button (the service decides)."""
    return (game.ruleset == RULESET and game.status != GameStatus.FINISHED
            and getattr(user, "is_authenticated", False) and not policies.spectator_of(user, game)
            and policies.seat_in(user, game) is None and not policies.staff_roles_in(user, game)
            and not (game.status in (GameStatus.RECRUITMENT, GameStatus.SETUP) and Signup.objects.filter(
                game=game, user=user, withdrawn_at__isnull=True).exists()))


if refuse_spectator_sign_up not in SIGNUP_GUARDS:
    SIGNUP_GUARDS.append(refuse_spectator_sign_up)
