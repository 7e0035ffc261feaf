"""Creating and setting up an M21 game (RULES.md M-SETUP-1, M-SETUP-2, M-SETUP-4): the game and its timing, the
co-hosts, the setup (chosen by the host or drawn by the site) and the provable deal that seats the players and opens
the standing inboxes. Every ``do_<verb>_<noun>`` runs in one transaction, checks the rules first and writes a
``GameEvent``."""
from __future__ import annotations

import random
from datetime import datetime, time, timedelta

from django.db import transaction
from django.utils import timezone

from cities.models import (
    Alignment,
    Game,
    GameStatus,
    PostKind,
    PublicPost,
    Resident,
    ScheduledEvent,
    Signup,
    StaffRole,
)
from cities.services import check_seat_city, do_create_game, record_event
from inboxes import viewer_reads
from rulesets.m21.kinds import M21InboxKind
from inboxes.rendering import render_markdown
from kernel.errors import InvalidInput, WrongState
from roles.draw import system_rng
from rulesets.m21.staff_kinds import StaffKind

from .models import M21Game, M21Seat
from .notices import ROLE_CARD_HEADING
from .roles import MAFIA, ROLES, fresh_state
from .service_common import (
    MAX_PHASE_HOURS,
    MIN_PHASE_HOURS,
    RULESET,
    _check_host,
    _check_m21,
    _new_inbox,
    _wall,
    phase_end,
    site_message,
)
from .setup import M21Setup, PostRules, SetupError, check_setup, deal_roles, draw_setup, role_pm_text, setup_post_text


def _check_hours(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_PHASE_HOURS <= value <= MAX_PHASE_HOURS:
        raise InvalidInput(f"The {what} lasts {MIN_PHASE_HOURS} to {MAX_PHASE_HOURS} hours.", rule="M-SETUP-2")
    return value


@transaction.atomic
def do_create_m21_game(*, title: str, slug: str, acting_user, time_zone: str | None = None, day_hours: int = 48,
                       night_hours: int = 24, phase_shift: time = time(22, 0), self_votes_allowed: bool = True,
                       no_lynch_allowed: bool = True, vote_preset: str = "m21", game_thread_public: bool = True,
                       now: datetime | None = None) -> Game:
    """Create an M21 game with sign-ups open; ``acting_user`` becomes its host (M-SETUP-4). No cities, English
    pages, Europe/London, days of 48 h and nights of 24 h shifting at 22:00 by default (M-SETUP-1/2). Returns the
    Game. ``vote_preset`` "m21" (M-VOTE) or "classic" (a majority ends the day at once, no END marks). Raises
    ``InvalidInput`` as ``cities.services.do_create_game`` does, for phase lengths outside 1..168 hours and an
    unknown preset. ``game_thread_public``: anyone reads the game thread during the game (M-SETUP-6)."""
    now = now or timezone.now()
    if vote_preset not in ("m21", "classic"):
        raise InvalidInput(f"Unknown vote rules {vote_preset!r}: choose m21 or classic.")
    _check_hours(day_hours, "day")
    _check_hours(night_hours, "night")
    game = do_create_game(title=title, slug=slug, acting_user=acting_user, ruleset=RULESET, time_zone=time_zone,
                          day_start=phase_shift, now=now)
    M21Game.objects.create(game=game, day_hours=day_hours, night_hours=night_hours, phase_shift=phase_shift,
                           self_votes_allowed=self_votes_allowed, no_lynch_allowed=no_lynch_allowed,
                           vote_preset=vote_preset, game_thread_public=bool(game_thread_public))
    record_event(game, "m21.created", actor=acting_user, at=now,
                 payload={"day_hours": day_hours, "night_hours": night_hours, "phase_shift": phase_shift.isoformat(),
                          "game_thread_public": bool(game_thread_public)})
    return game


@transaction.atomic
def do_set_m21_game_thread_public(game: Game, public: bool, *, acting_user, now: datetime | None = None) -> bool:
    """The host makes the game thread public (anyone reads it during the game) or members-only (M-SETUP-6), at any
    time before the game ends. Hosts only. Returns the new setting. Raises ``InvalidInput`` for a non-bool,
    ``WrongState`` once the game is over (the archive decides then)."""
    now = now or timezone.now()
    settings = _check_m21(game)
    _check_host(game, acting_user)
    if not isinstance(public, bool):
        raise InvalidInput("Say whether the game thread is public.", rule="M-SETUP-6")
    if game.status == GameStatus.FINISHED:
        raise WrongState("The game is over: the archive shows the game thread.", rule="M-SETUP-6")
    settings = M21Game.objects.select_for_update().get(pk=settings.pk)
    settings.game_thread_public = public
    settings.save(update_fields=["game_thread_public"])
    record_event(game, "m21.game_thread_visibility_set", actor=acting_user, at=now, payload={"public": public})
    return public


@transaction.atomic
def do_add_cohost(game: Game, user, *, acting_user, now: datetime | None = None) -> StaffRole:
    """Make ``user`` a co-host of ``game`` (M-SETUP-4). Hosts only. Raises ``NotAllowed`` or ``InvalidInput``
    (already staff, signed up or seated: a host is not a player)."""
    now = now or timezone.now()
    _check_m21(game)
    _check_host(game, acting_user)
    if game.status == GameStatus.FINISHED:
        raise WrongState("The game is over.")
    if user is None or not user.is_active:
        raise InvalidInput("Choose an active account.")
    if user.pk == getattr(acting_user, "pk", None):
        raise InvalidInput("You already host this game.")
    if StaffRole.objects.filter(game=game, user=user).exists():
        raise InvalidInput(f"{user.public_name} already hosts this game.")
    if Resident.objects.filter(game=game, user=user).exists() or Signup.objects.filter(
            game=game, user=user, withdrawn_at__isnull=True).exists():
        raise InvalidInput(f"{user.public_name} plays in this game and cannot host it.", rule="M-SETUP-4")
    role = StaffRole.objects.create(game=game, kind=StaffKind.COHOST, user=user)
    viewer_reads.forget_viewer_cache(user)
    record_event(game, "m21.cohost_added", actor=acting_user, at=now, payload={"user": user.pk})
    return role


@transaction.atomic
def do_set_m21_timing(game: Game, *, day_hours: int, night_hours: int, phase_shift: time, acting_user,
                      now: datetime | None = None) -> M21Game:
    """Set the phase lengths and the phase shift (M-SETUP-2) before the roles are dealt. Hosts only."""
    now = now or timezone.now()
    settings = _check_m21(game)
    _check_host(game, acting_user)
    if settings.dealt_at is not None:
        raise WrongState("The roles are dealt: extend a phase instead.", rule="M-SETUP-2")
    settings.day_hours = _check_hours(day_hours, "day")
    settings.night_hours = _check_hours(night_hours, "night")
    settings.phase_shift = phase_shift
    settings.save(update_fields=["day_hours", "night_hours", "phase_shift"])
    record_event(game, "m21.timing_set", actor=acting_user, at=now,
                 payload={"day_hours": day_hours, "night_hours": night_hours, "phase_shift": phase_shift.isoformat()})
    return settings


def _active_signups(game: Game):
    return Signup.objects.filter(game=game, withdrawn_at__isnull=True).select_related("user").order_by(
        "signed_up_at", "id")


def _players_if_closed(game: Game) -> int | None:
    return _active_signups(game).count() if game.signups_closed_at is not None else None


def _check_setup_open(game: Game, settings: M21Game) -> None:
    if settings.dealt_at is not None or game.status not in (GameStatus.RECRUITMENT, GameStatus.SETUP):
        raise WrongState("The roles are dealt: the setup cannot change any more.", rule="M-SETUP-1")


@transaction.atomic
def do_choose_m21_setup(game: Game, counts: dict[str, int], *, cop_insanity=0, acting_user,
                        now: datetime | None = None) -> M21Setup:
    """The host's setup (M-SETUP-1): ``counts`` role key -> seats, checked by ``rulesets.m21.setup.check_setup``
    (once sign-ups are closed it must seat exactly the players signed up); ``cop_insanity`` the chance of an
    insane cop (M-ROLE-1). Hosts only, before the deal. Raises ``InvalidInput`` with the reason."""
    now = now or timezone.now()
    settings = _check_m21(game)
    _check_host(game, acting_user)
    _check_setup_open(game, settings)
    try:
        setup = check_setup(counts, players=_players_if_closed(game), cop_insanity=cop_insanity)
    except SetupError as error:
        raise InvalidInput(str(error), rule="M-SETUP-1") from None
    settings.setup, settings.setup_drawn = setup.as_dict(), False
    settings.save(update_fields=["setup", "setup_drawn"])
    record_event(game, "m21.setup_chosen", actor=acting_user, at=now, payload=setup.as_dict())
    return setup


@transaction.atomic
def do_draw_m21_setup(game: Game, *, cop_insanity=0, exclude: tuple[str, ...] = (), acting_user,
                      rng: random.Random | None = None, now: datetime | None = None) -> M21Setup:
    """"Let the site draw" (M-SETUP-1): a legal setup for the players signed up, power roles drawn at random
    (``rulesets.m21.setup.draw_setup``), without ``exclude``. Hosts only, once sign-ups are closed, before the
    deal. Raises ``WrongState`` while sign-ups are open, ``InvalidInput`` when no legal setup fits."""
    now = now or timezone.now()
    settings = _check_m21(game)
    _check_host(game, acting_user)
    _check_setup_open(game, settings)
    players = _players_if_closed(game)
    if players is None:
        raise WrongState("Close the sign-ups first: the site draws a setup for the players signed up.",
                         rule="M-SETUP-1")
    try:
        setup = draw_setup(players, rng or system_rng(), cop_insanity=cop_insanity, exclude=exclude)
    except SetupError as error:
        raise InvalidInput(str(error), rule="M-SETUP-1") from None
    settings.setup, settings.setup_drawn = setup.as_dict(), True
    settings.save(update_fields=["setup", "setup_drawn"])
    record_event(game, "m21.setup_drawn", actor=acting_user, at=now, payload=setup.as_dict())
    return setup


def _post_rules(game: Game, settings: M21Game, first_day_starts_at: datetime | None = None) -> PostRules:
    first_day = ""
    if first_day_starts_at is not None:
        # The same function the clock uses for day 1's deadline (M-SETUP-2): the post and the clock agree.
        deadline = phase_end(first_day_starts_at, settings.day_hours, game.time_zone, settings.phase_shift)
        first_day = (f"Day 1 starts {_wall(first_day_starts_at, game)} and ends at the deadline, "
                     f"{_wall(deadline, game)}, unless the hammer falls first.")
    return PostRules(day_hours=settings.day_hours, night_hours=settings.night_hours,
                     phase_shift=f"{settings.phase_shift:%H:%M} {game.time_zone}", first_day=first_day,
                     self_votes_allowed=settings.self_votes_allowed, no_lynch_allowed=settings.no_lynch_allowed)


#: How far ahead the first day may be planned: a game's clock and the phase ends it computes stay in range.
MAX_START_AHEAD = timedelta(days=366)


@transaction.atomic
def do_deal_m21_roles(game: Game, *, first_day_starts_at: datetime, acting_user, rng: random.Random | None = None,
                      now: datetime | None = None) -> dict[str, str]:
    """Deal the chosen setup to the players signed up with the site's provable draw and open the game.

    Publishes the setup post (every role text and the rules, M-SETUP-1) with the deal's commitment (SHA-256 of the
    deal and a secret salt, ``rulesets.m21.setup``) before any role is shown; seats every player (in no city: M21
    has none); opens the game thread (all players), one role PM per player with the hosts (the role text; the mafia's
    partners), the mafia thread (the mafia), the spectators' thread (M-SETUP-3, nobody yet) and the hosts' office;
    and schedules day 1 at ``first_day_starts_at`` (aware, not in the past). Hosts only, once sign-ups are closed
    and a setup seating exactly the players is chosen. Returns player name -> role key (for the caller's page;
    nothing of it is shown to anyone but the hosts).
    """
    now = now or timezone.now()
    settings = _check_m21(game)
    _check_host(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    settings = M21Game.objects.select_for_update().get(pk=settings.pk)
    if settings.dealt_at is not None:
        raise WrongState("The roles are already dealt.", rule="M-SETUP-1")
    if game.status != GameStatus.SETUP or game.signups_closed_at is None:
        raise WrongState("Close the sign-ups before dealing the roles.", rule="M-SETUP-1")
    if settings.setup is None:
        raise WrongState("Choose a setup (or let the site draw one) before dealing the roles.", rule="M-SETUP-1")
    if first_day_starts_at.tzinfo is None or first_day_starts_at < now:
        raise InvalidInput("The first day must start now or later.", rule="M-SETUP-2")
    if first_day_starts_at > now + MAX_START_AHEAD:
        raise InvalidInput("The first day must start within a year.", rule="M-SETUP-2")
    signups = list(_active_signups(game))
    try:
        setup = check_setup(settings.setup["counts"], players=len(signups),
                            cop_insanity=settings.setup["cop_insanity"])
    except SetupError as error:
        raise InvalidInput(str(error), rule="M-SETUP-1") from None
    names = [signup.user.public_name[:60] for signup in signups]
    if len(set(names)) != len(names):
        raise InvalidInput("Two players share a name; they must differ before the deal.")
    deal = deal_roles(setup, names, rng or system_rng())

    post_text = (setup_post_text(setup, _post_rules(game, settings, first_day_starts_at))
                 + f"\n## The deal\n\nThe roles were dealt by the site. Commitment (SHA-256): `{deal.commitment}`. "
                   f"The deal and its salt are published when the game ends, so that anyone can check it.\n")
    post = PublicPost.objects.create(game=game, kind=PostKind.ANNOUNCEMENT, title=f"{game.title}: setup and rules",
                                     body=post_text,
                                     body_html=render_markdown(post_text), author=None, created_at=now,
                                     published_at=now)
    check_seat_city(game, None)  # an M21 game is one town: its seats are in no city
    residents = []
    for signup, name in zip(signups, names, strict=True):
        role_key = deal.roles[name]
        residents.append(Resident.objects.create(
            game=game, city=None, user=signup.user, name=name,
            # Lepra's public judge flag and the godfather flag stay off: in M21 every role is secret (M-SETUP-1).
            alignment=Alignment.MAFIA if ROLES[role_key].alignment == MAFIA else Alignment.HONEST))
        viewer_reads.forget_viewer_cache(signup.user)
    mafia = [r for r in residents if r.alignment == Alignment.MAFIA]
    _new_inbox(game, M21InboxKind.GAME_THREAD, f"{game.title}: game thread", now, members=residents)
    mafia_thread = _new_inbox(game, M21InboxKind.MAFIA_THREAD, f"{game.title}: mafia thread", now, members=mafia)
    _new_inbox(game, M21InboxKind.SPECTATORS, f"{game.title}: spectators", now)
    _new_inbox(game, M21InboxKind.OFFICE, f"{game.title}: hosts' office", now)
    for resident in residents:
        role_key = deal.roles[resident.name]
        pm = _new_inbox(game, M21InboxKind.ROLE_PM, f"Role PM: {resident.name}", now, members=[resident],
                        resident=resident)
        M21Seat.objects.create(resident=resident, role=role_key, sane=resident.name != deal.insane,
                               state=fresh_state(role_key), role_pm=pm)
        partners = [(r.name, ROLES[deal.roles[r.name]].name) for r in mafia if r.pk != resident.pk]
        text = role_pm_text(role_key, partners=partners, mafia_thread=f"the mafia thread ({mafia_thread.title})")
        site_message(pm, f"{ROLE_CARD_HEADING}{ROLES[role_key].name}**\n\n{text}", now)

    settings.setup_post = post
    settings.deal_commitment, settings.deal_salt = deal.commitment, deal.salt
    settings.deal_lists, settings.dealt_at = deal.lists(), now
    settings.save(update_fields=["setup_post", "deal_commitment", "deal_salt", "deal_lists", "dealt_at"])
    game.status = GameStatus.RUNNING
    game.save(update_fields=["status"])
    ScheduledEvent.objects.create(game=game, kind="m21_day_start", due_at=first_day_starts_at,
                                  payload={"day": 1}, created_at=now, created_by=acting_user)
    record_event(game, "m21.roles_dealt", actor=acting_user, at=now,
                 payload={"players": len(residents), "commitment": deal.commitment, "setup_post": post.pk,
                          "first_day_starts_at": first_day_starts_at.isoformat()})
    return dict(deal.roles)
