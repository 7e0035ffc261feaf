"""State changes of an M21 game (RULES.md Part 2): creation, co-hosts, the setup, the provable deal, the inboxes,
the days of the game thread (M-VOTE-1..9), the Judge's powers, the host's extensions and vote counts.

Every ``do_<verb>_<noun>(..., *, acting_user, now=None)`` runs in one transaction, checks the rules first, writes a
``GameEvent`` audit row and raises a ``RuleViolation`` subclass with a message a player can read. The day's
result is re-derived from the game thread's messages and the day's orders by ``rulesets.m21.day.run_m21_day``;
the deadline is the day's planned time, so a post received after it carries no vote however late the clock runs.

The night is left to the ruleset's night steps: a day's end schedules ``m21_night_start`` on the clock, the night
ends with ``m21_night_end`` at its planned time, which runs every function of ``NIGHT_RESOLVERS`` (the night's
resolution plugs in there) and starts the next day.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from cities.models import (
    Alignment, City, Game, GameStatus, LifeStatus, PostKind, PublicPost, Resident, ScheduledEvent, Signup, StaffKind,
    StaffRole,
)
from cities.services import do_create_game, record_event
from inboxes import policies
from inboxes.models import Inbox, InboxKind, Membership, MembershipState, Message
from inboxes.rendering import render_markdown
from inboxes.services import do_replace_player
from kernel.errors import InvalidInput, NotAllowed, WrongState
from roles.draw import system_rng
from voting.forum_replay import forum_winner
from voting.parsing import parse_forum_post
from voting.tallies import (
    FORUM_NO_LYNCH, ForumDayEndHow, ForumPost, ForumRemoval, ForumRemovalCause, ForumReplacement, ForumSeat,
    ForumVoteRules,
)

from .day import DayState, DeadlinePasses, JudgeCasts, JudgeCloses, M21DayOutcome, run_m21_day, vote_count_text
from .models import DayStatus, M21Day, M21DayOrder, M21Game, M21PostReceipt, M21Seat, OrderKind
from .night_models import M21Night
from .roles import CASTING_VOTE_WINDOW_MINUTES, MAFIA, ROLES, fresh_state
from .setup import M21Setup, PostRules, SetupError, check_setup, deal_roles, draw_setup, role_pm_text, setup_post_text

RULESET = "m21"
#: Phase lengths the host may set, in hours (M-SETUP-2).
MIN_PHASE_HOURS, MAX_PHASE_HOURS = 1, 168
#: The longest extension of one phase at a time, in hours (M-SETUP-4).
MAX_EXTENSION_HOURS = 72

#: Functions ``(game, night_number, now) -> None`` run when a night ends, before the next day starts: the night's
#: resolution (M-NIGHT) registers here. Each runs in the clock's transaction.
NIGHT_RESOLVERS: list[Callable[[Game, int, datetime], None]] = []


class M21Refusal(WrongState):
    """An M21 rule refuses the request; the message says why."""


# ----------------------------------------------------------------------------------------------------------------
# Who is who
# ----------------------------------------------------------------------------------------------------------------


def is_host(user, game: Game) -> bool:
    """True when ``user`` hosts ``game``: its Procurator (the M21 host) or a co-host (M-SETUP-4)."""
    return user is not None and getattr(user, "is_authenticated", False) and (
        policies.holds_role(user, game, StaffKind.PROCURATOR) or policies.holds_role(user, game, StaffKind.COHOST))


def _check_host(game: Game, acting_user) -> None:
    if acting_user is not None and not is_host(acting_user, game):
        raise NotAllowed("Only the hosts of this game may do this.", rule="M-SETUP-4")


def _check_m21(game: Game) -> M21Game:
    if game.ruleset != RULESET:
        raise InvalidInput("This is not an M21 game.")
    try:
        return M21Game.objects.get(game=game)
    except M21Game.DoesNotExist:
        raise InvalidInput("This game has no M21 settings.") from None


def vote_rules(settings: M21Game) -> ForumVoteRules:
    """The game's day vote (M-VOTE): its preset (M21's END-hammer and plurality, or the classic forum majority
    hammer of ``voting.tallies.CLASSIC_FORUM_RULES``) with the host's self-vote and No Lynch settings."""
    return ForumVoteRules.from_dict({"preset": settings.vote_preset,
                                     "self_votes_allowed": settings.self_votes_allowed,
                                     "no_lynch_allowed": settings.no_lynch_allowed})


def phase_end(start: datetime, hours: int, shift: time, zone: str) -> datetime:
    """When a phase that starts at ``start`` (aware) and lasts ``hours`` ends: the first phase shift (``shift``,
    wall clock in ``zone``) at or after ``start + hours`` (M-SETUP-2 [interp]: a phase started at the shift lasts
    exactly its length; one started early by a hammer runs to the next shift after its length). Aware UTC."""
    tz = ZoneInfo(zone)
    earliest = (start + timedelta(hours=hours)).astimezone(tz)
    candidate = datetime.combine(earliest.date(), shift, tzinfo=tz)
    if candidate < earliest:
        candidate = datetime.combine(earliest.date() + timedelta(days=1), shift, tzinfo=tz)
    return candidate.astimezone(ZoneInfo("UTC"))


# ----------------------------------------------------------------------------------------------------------------
# Creating and setting up a game
# ----------------------------------------------------------------------------------------------------------------


def _check_hours(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_PHASE_HOURS <= value <= MAX_PHASE_HOURS:
        raise InvalidInput(f"The {what} lasts {MIN_PHASE_HOURS} to {MAX_PHASE_HOURS} hours.", rule="M-SETUP-2")
    return value


@transaction.atomic
def do_create_m21_game(*, title: str, slug: str, acting_user, time_zone: str | None = None, day_hours: int = 48,
                       night_hours: int = 24, phase_shift: time = time(22, 0), self_votes_allowed: bool = True,
                       no_lynch_allowed: bool = True, vote_preset: str = "m21", now: datetime | None = None) -> Game:
    """Create an M21 game with sign-ups open; ``acting_user`` becomes its host (M-SETUP-4). One city, English
    pages, Europe/London, days of 48 h and nights of 24 h shifting at 22:00 by default (M-SETUP-1/2). Returns the
    Game. ``vote_preset`` "m21" (M-VOTE) or "classic" (a majority ends the day at once, no END marks). Raises
    ``InvalidInput`` as ``cities.services.do_create_game`` does, for phase lengths outside 1..168 hours and an
    unknown preset."""
    now = now or timezone.now()
    if vote_preset not in ("m21", "classic"):
        raise InvalidInput(f"Unknown vote rules {vote_preset!r}: choose m21 or classic.")
    _check_hours(day_hours, "day")
    _check_hours(night_hours, "night")
    game = do_create_game(title=title, slug=slug, acting_user=acting_user, ruleset=RULESET, time_zone=time_zone,
                          city_count=1, day_start=phase_shift, now=now)
    M21Game.objects.create(game=game, day_hours=day_hours, night_hours=night_hours, phase_shift=phase_shift,
                           self_votes_allowed=self_votes_allowed, no_lynch_allowed=no_lynch_allowed,
                           vote_preset=vote_preset)
    record_event(game, "m21.created", actor=acting_user, at=now,
                 payload={"day_hours": day_hours, "night_hours": night_hours, "phase_shift": phase_shift.isoformat()})
    return game


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
    policies.forget_viewer_cache(user)
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


def _post_rules(game: Game, settings: M21Game) -> PostRules:
    return PostRules(day_hours=settings.day_hours, night_hours=settings.night_hours,
                     phase_shift=f"{settings.phase_shift:%H:%M} {game.time_zone}",
                     self_votes_allowed=settings.self_votes_allowed, no_lynch_allowed=settings.no_lynch_allowed)


def site_message(inbox: Inbox, text: str, now: datetime) -> Message:
    """A message by the site itself ("Mafia Host") in ``inbox``: an announcement the game's rules make."""
    message = Message.objects.create(inbox=inbox, author_name="Mafia Host", body=text,
                                     body_html=render_markdown(text), received_at=now)
    record_event(inbox.game, "message.site_posted", actor=None, at=now,
                 payload={"inbox": inbox.pk, "message": message.pk})
    return message


def _new_inbox(game: Game, kind: str, title: str, city: City, now: datetime, *, members=(), resident=None) -> Inbox:
    inbox = Inbox.objects.create(game=game, kind=kind, title=title, city=city, resident=resident, created_at=now,
                                 day_number=game.day_number)
    Membership.objects.bulk_create(
        [Membership(inbox=inbox, resident=r, state=MembershipState.MEMBER, since=now) for r in members])
    record_event(game, "inbox.created", actor=None, at=now,
                 payload={"inbox": inbox.pk, "kind": kind, "members": len(members)})
    return inbox


def thread_of(game: Game, kind: str = InboxKind.GAME_THREAD) -> Inbox | None:
    """The game's standing inbox of ``kind`` (game thread, mafia thread, spectators' thread, office)."""
    return Inbox.objects.filter(game=game, kind=kind).order_by("id").first()


@transaction.atomic
def do_deal_m21_roles(game: Game, *, first_day_starts_at: datetime, acting_user, rng: random.Random | None = None,
                      now: datetime | None = None) -> dict[str, str]:
    """Deal the chosen setup to the players signed up with the site's provable draw and open the game.

    Publishes the setup post (every role text and the rules, M-SETUP-1) with the deal's commitment (SHA-256 of the
    deal and a secret salt, ``rulesets.m21.setup``) before any role is shown; seats every player in the game's one
    city; opens the game thread (all players), one role PM per player with the hosts (the role text; the mafia's
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

    post_text = (setup_post_text(setup, _post_rules(game, settings))
                 + f"\n## The deal\n\nThe roles were dealt by the site. Commitment (SHA-256): `{deal.commitment}`. "
                   f"The deal and its salt are published when the game ends, so that anyone can check it.\n")
    post = PublicPost.objects.create(game=game, kind=PostKind.ANNOUNCEMENT, title=f"{game.title}: setup and rules",
                                     body=post_text,
                                     body_html=render_markdown(post_text), author=None, created_at=now,
                                     published_at=now)
    city = City.objects.create(game=game, number=1, name=game.title[:100])
    residents = []
    for signup, name in zip(signups, names, strict=True):
        role_key = deal.roles[name]
        residents.append(Resident.objects.create(
            game=game, city=city, user=signup.user, name=name,
            # Lepra's public judge flag and the godfather flag stay off: in M21 every role is secret (M-SETUP-1).
            alignment=Alignment.MAFIA if ROLES[role_key].alignment == MAFIA else Alignment.HONEST))
        policies.forget_viewer_cache(signup.user)
    mafia = [r for r in residents if r.alignment == Alignment.MAFIA]
    _new_inbox(game, InboxKind.GAME_THREAD, f"{game.title}: game thread", city, now, members=residents)
    mafia_thread = _new_inbox(game, InboxKind.MAFIA_THREAD, f"{game.title}: mafia thread", city, now, members=mafia)
    _new_inbox(game, InboxKind.SPECTATORS, f"{game.title}: spectators", city, now)
    _new_inbox(game, InboxKind.OFFICE, f"{game.title}: hosts' office", city, now)
    for resident in residents:
        role_key = deal.roles[resident.name]
        pm = _new_inbox(game, InboxKind.ROLE_PM, f"Role PM: {resident.name}", city, now, members=[resident],
                        resident=resident)
        M21Seat.objects.create(resident=resident, role=role_key, sane=resident.name != deal.insane,
                               state=fresh_state(role_key), role_pm=pm)
        partners = [(r.name, ROLES[deal.roles[r.name]].name) for r in mafia if r.pk != resident.pk]
        text = role_pm_text(role_key, partners=partners, mafia_thread=f"the mafia thread ({mafia_thread.title})")
        site_message(pm, f"**Your role: {ROLES[role_key].name}**\n\n{text}", now)

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


# ----------------------------------------------------------------------------------------------------------------
# The day
# ----------------------------------------------------------------------------------------------------------------


def open_day(game: Game, *, lock: bool = False) -> M21Day | None:
    """The game's day that is open or waiting for the Judge's casting vote, or None (night, not started, over)."""
    qs = M21Day.objects.filter(game=game, status__in=(DayStatus.OPEN, DayStatus.AWAITING_CASTING_VOTE))
    if lock:
        qs = qs.select_for_update()
    return qs.order_by("-number").first()


def current_day(game: Game) -> M21Day | None:
    """The game's latest day, whatever its state."""
    return M21Day.objects.filter(game=game).order_by("-number").first()


@transaction.atomic
def do_start_m21_day(game: Game, number: int, *, planned_at: datetime, acting_user=None,
                     now: datetime | None = None) -> M21Day:
    """Start day ``number`` at its planned time ``planned_at`` (M-SETUP-2): the deadline is the first phase shift
    at or after ``planned_at + day_hours``; the clock gets ``m21_day_deadline`` at that time; the game thread
    announces it. By the site (the clock) or a host. Raises ``WrongState`` for a day that exists or a game that
    is not running."""
    now = now or timezone.now()
    settings = _check_m21(game)
    _check_host(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status != GameStatus.RUNNING:
        raise WrongState("The game is not running.")
    if M21Day.objects.filter(game=game, number=number).exists() or open_day(game) is not None:
        raise WrongState(f"Day {number} has already started.")
    thread = thread_of(game)
    deadline = phase_end(planned_at, settings.day_hours, settings.phase_shift, game.time_zone)
    day = M21Day.objects.create(game=game, number=number, thread=thread, starts_at=planned_at, deadline=deadline)
    game.day_number = number
    game.save(update_fields=["day_number"])
    ScheduledEvent.objects.create(game=game, kind="m21_day_deadline", due_at=deadline,
                                  payload={"day": number}, created_at=now, created_by=acting_user)
    site_message(thread, f"**Day {number} has begun.** It ends at the deadline, "
                          f"{_wall(deadline, game)}, unless the hammer falls first.", max(now, planned_at))
    record_event(game, "m21.day_started", actor=acting_user, at=now,
                 payload={"day": number, "starts_at": planned_at.isoformat(), "deadline": deadline.isoformat()})
    return day


def _wall(moment: datetime, game: Game) -> str:
    local = moment.astimezone(ZoneInfo(game.time_zone))
    return f"{local:%a %d %b %Y, %H:%M} {game.time_zone}"


def _seat_names(day: M21Day) -> dict[int, str]:
    """Resident id -> the seat's label for the day: its name when the day began (a replacement keeps the label
    and adds the new name, L-REPLACE-1)."""
    names = {}
    for order in day.orders.filter(kind=OrderKind.REPLACEMENT).order_by("at", "id"):
        names.setdefault(order.seat_id, order.payload["old_name"])
    return names


def day_outcome(day: M21Day, *, now: datetime, casting_window_over: bool | None = None) -> M21DayOutcome:
    """Re-derive ``day`` from its game thread's posts and its orders at ``now`` (aware): ``run_m21_day`` over the
    residents living when the day began, posts by staff left out, the deadline passing at its planned time.

    Returns the outcome with ``post_receipts`` keyed by message id.
    """
    game = day.game
    settings = game.m21
    removed_today = set(day.orders.filter(kind=OrderKind.REMOVAL).values_list("seat_id", flat=True))
    residents = list(Resident.objects.filter(game=game).select_related("user", "m21_seat").order_by("id"))
    start_names = _seat_names(day)
    start_accounts = {}
    for order in day.orders.filter(kind=OrderKind.REPLACEMENT).order_by("at", "id"):
        start_accounts.setdefault(order.seat_id, order.payload["old_user"])
    living_at_start = [r for r in residents if r.status == LifeStatus.ALIVE or r.pk in removed_today
                       or (day.imprisoned_id == r.pk)]
    label = {r.pk: start_names.get(r.pk, r.name) for r in residents}
    seats = [ForumSeat(seat=label[r.pk], account=f"u{start_accounts.get(r.pk, r.user_id)}") for r in living_at_start]

    events: list[tuple[datetime, int, int, object]] = []  # (at, order of kind, id, record builder input)
    messages = list(Message.objects.filter(inbox=day.thread, received_at__gte=day.starts_at,
                                           author_resident__isnull=False).order_by("received_at", "id"))
    for message in messages:
        events.append((message.received_at, 1, message.pk, message))
    for order in day.orders.all():
        events.append((order.at, 0, order.pk, order))
    events.sort(key=lambda item: (item[0], item[1], item[2]))

    records, message_at_seq = [], {}
    deadline_placed = False
    for seq, (at, _kind, _pk, item) in enumerate(events, start=1):
        if not deadline_placed and at > day.deadline:
            records.append(DeadlinePasses(seq=seq))
            deadline_placed = True
        if isinstance(item, Message):
            records.append(ForumPost(seq=seq, author=f"u{item.author_user_id}", text=item.body))
            message_at_seq[seq] = item.pk
        elif item.kind == OrderKind.REMOVAL:
            cause = ForumRemovalCause(item.payload.get("cause", ForumRemovalCause.REMOVED))
            records.append(ForumRemoval(seq=seq, seat=label[item.seat_id], cause=cause))
        elif item.kind == OrderKind.REPLACEMENT:
            records.append(ForumReplacement(seq=seq, seat=label[item.seat_id], account=f"u{item.payload['new_user']}",
                                            names=(item.payload["new_name"],)))
        elif item.kind == OrderKind.CLOSE_PROCEEDINGS:
            records.append(JudgeCloses(seq=seq, judge=label[item.seat_id]))
        elif item.kind == OrderKind.CASTING_VOTE:
            target = FORUM_NO_LYNCH if item.no_lynch else label[item.target_id]
            records.append(JudgeCasts(seq=seq, judge=label[item.seat_id], target=target))
    deadline_passed = now >= day.deadline
    judge = next((r for r in living_at_start if r.m21_seat.role == "judge"), None) if living_at_start else None
    judge_power_left = bool(judge and judge.m21_seat.state.get("judge_power_left", 0) > 0) or (
        judge is not None and day.result is not None and day.result.get("judge_power") is not None)
    if casting_window_over is None:
        casting_window_over = day.casting_window_ends_at is not None and now >= day.casting_window_ends_at
    outcome = run_m21_day(vote_rules(settings), seats, records, judge=label[judge.pk] if judge else None,
                          judge_power_left=judge_power_left, deadline_reached=deadline_passed,
                          casting_window_over=casting_window_over)
    receipts = {message_at_seq[seq]: lines for seq, lines in outcome.post_receipts.items() if seq in message_at_seq}
    outcome.post_receipts.clear()
    outcome.post_receipts.update(receipts)
    return outcome


def _label_to_resident(day: M21Day) -> dict[str, Resident]:
    names = _seat_names(day)
    return {names.get(r.pk, r.name): r for r in Resident.objects.filter(game=day.game)}


def _receipt_lines(receipts) -> list[dict]:
    return [{"command": r.command.written, "accepted": r.accepted, "message": r.message,
             "candidates": list(r.candidates)} for r in receipts]


def record_game_thread_post(inbox: Inbox, seat: Resident | None, message: Message, now: datetime) -> M21PostReceipt | None:
    """Index a post just stored in an M21 game thread (the game thread's post hook; runs in the post's
    transaction): re-derive the open day with it, store the post's receipt (M-VOTE-1: what each command did or
    why it was refused) and, when it hammers (M-VOTE-3), end the day at once. Posts by the hosts carry no votes.
    Returns the receipt, or None for a post without commands or by a host."""
    if seat is None or not parse_forum_post(message.body):
        return None
    day = open_day(inbox.game, lock=True)
    if day is None or day.thread_id != inbox.pk or day.status != DayStatus.OPEN:
        lines = [{"command": c.written, "accepted": False, "message": "No day is open: this carries no vote.",
                  "candidates": []} for c in parse_forum_post(message.body)]
        last = current_day(inbox.game)
        if last is None:
            return None
        return M21PostReceipt.objects.create(message=message, day=last, lines=lines)
    outcome = day_outcome(day, now=now)
    receipt = M21PostReceipt.objects.create(message=message, day=day,
                                            lines=_receipt_lines(outcome.post_receipts.get(message.pk, ())))
    if outcome.end is not None:
        # A post after a deadline the clock has not yet closed does not end the day: the deadline did, at its time.
        deadline = outcome.end.how is ForumDayEndHow.DEADLINE
        _end_day(day, outcome, ended_at=day.deadline if deadline else message.received_at,
                 actor=message.author_user, now=now)
    return receipt


def _end_day(day: M21Day, outcome: M21DayOutcome, *, ended_at: datetime, actor, now: datetime) -> None:
    """Record the end of ``day`` from ``outcome`` (its end is set) and, once decided, apply the result."""
    end = outcome.end
    day.ended_at = day.ended_at or ended_at
    day.how = end.how.value
    day.result = {"end": end.as_dict(), "count": end.count.as_dict(), "judge_power": outcome.judge_power,
                  "offenders": [o.as_dict() for o in outcome.report.offenders],
                  "voided": [v.as_dict() for v in outcome.report.voided]}
    if outcome.state is DayState.AWAITING_CASTING_VOTE:
        day.status = DayStatus.AWAITING_CASTING_VOTE
        day.casting_window_ends_at = day.ended_at + timedelta(minutes=CASTING_VOTE_WINDOW_MINUTES)
        day.save(update_fields=["ended_at", "how", "result", "status", "casting_window_ends_at"])
        ScheduledEvent.objects.create(game=day.game, kind="m21_casting_window_end", due_at=day.casting_window_ends_at,
                                      payload={"day": day.number}, created_at=now)
        site_message(day.thread, f"**Day {day.number} is over: a tie** between "
                                  f"{', '.join(_name(t, day) for t in end.tied)}. The result waits up to "
                                  f"{CASTING_VOTE_WINDOW_MINUTES} minutes for the Judge's casting vote.", now)
        record_event(day.game, "m21.day_tied", actor=actor, at=now, payload={"day": day.number, "tied": list(end.tied)})
        return
    _decide_day(day, outcome, actor=actor, now=now)


def _name(label: str, day: M21Day) -> str:
    return "No Lynch" if label == FORUM_NO_LYNCH else label


def _decide_day(day: M21Day, outcome: M21DayOutcome, *, actor, now: datetime) -> None:
    """Apply a decided day: imprison the winner (M-VOTE-4, M-VOTE-6), spend the Judge's power, announce the
    result with the final count, list the M-VOTE-5 offenders for the hosts and start the night on the clock."""
    game = day.game
    labels = _label_to_resident(day)
    imprisoned = labels.get(outcome.imprisoned) if outcome.imprisoned else None
    day.status = DayStatus.DECIDED
    day.imprisoned = imprisoned
    day.result = {**(day.result or {}), "imprisoned": outcome.imprisoned, "no_lynch": outcome.no_lynch,
                  "judge_power": outcome.judge_power}
    day.save(update_fields=["status", "imprisoned", "result", "ended_at", "how"])
    if outcome.judge_power is not None:
        judge_seat = M21Seat.objects.select_for_update().get(resident__game=game, role="judge")
        judge_seat.state = {**judge_seat.state, "judge_power_left": 0}
        judge_seat.save(update_fields=["state"])
    if imprisoned is not None:
        _imprison(imprisoned, now)
    how = {"end_hammer": "the hammer fell", "majority": "a majority was reached", "deadline": "the deadline passed",
           "close_proceedings": "the Judge closed proceedings"}[day.how]
    if imprisoned is not None:
        result = f"**{imprisoned.name} is imprisoned.**"
    elif outcome.no_lynch:
        result = "**No Lynch: nobody is imprisoned.**"
    else:
        result = "**Nobody is imprisoned** (a tie or no votes)."
    if outcome.judge_power == "casting_vote":
        result += " The Judge's casting vote decided the tie."
    count_text = vote_count_text(outcome.report)
    site_message(day.thread, f"**Day {day.number} is over:** {how}. {result}\n\n{count_text}", now)
    office = thread_of(game, InboxKind.OFFICE)
    offenders = outcome.report.offenders
    if office is not None:
        words = {"no_vote_at_end": "no vote in place at the end", "never_voted": "never voted",
                 "fewer_than_two_posts": "fewer than two posts"}
        lines = [f"- {o.seat}: {', '.join(words[x.value] for x in o.offences)}" for o in offenders]
        site_message(office, f"**Day {day.number}: must-vote offenders (M-VOTE-5)**\n\n"
                              + ("\n".join(lines) if lines else "Nobody."), now)
    if _finish_if_won(game, now) is None:
        ScheduledEvent.objects.create(game=game, kind="m21_night_start", due_at=now, payload={"day": day.number},
                                      created_at=now)
    record_event(game, "m21.day_decided", actor=actor, at=now,
                 payload={"day": day.number, "how": day.how, "imprisoned": imprisoned.pk if imprisoned else None,
                          "no_lynch": outcome.no_lynch, "judge_power": outcome.judge_power,
                          "offenders": [o.seat for o in offenders]})


def _imprison(resident: Resident, now: datetime) -> None:
    """M-VOTE-6, M-SETUP-3: the seat is imprisoned; it reads the game thread but no longer posts there, leaves the
    mafia thread and joins the spectators' thread."""
    resident.status = LifeStatus.IMPRISONED
    resident.died_at = now
    resident.save(update_fields=["status", "died_at"])
    _seat_leaves_the_living(resident, reason="imprisoned", now=now)
    record_event(resident.game, "m21.imprisoned", actor=None, at=now, payload={"resident": resident.pk})


def _seat_leaves_the_living(resident: Resident, *, reason: str, now: datetime) -> None:
    game = resident.game
    Membership.objects.filter(inbox__game=game, inbox__kind=InboxKind.GAME_THREAD, resident=resident).update(
        state=MembershipState.BANNED, reason=reason)
    Membership.objects.filter(inbox__game=game, inbox__kind=InboxKind.MAFIA_THREAD, resident=resident).update(
        state=MembershipState.REMOVED, reason=reason)
    spectators = thread_of(game, InboxKind.SPECTATORS)
    if spectators is not None:
        Membership.objects.update_or_create(inbox=spectators, resident=resident,
                                            defaults={"state": MembershipState.MEMBER, "since": now})
    policies.forget_viewer_cache(resident.user)


def _decide_if_due(day: M21Day, *, now: datetime, actor=None) -> M21DayOutcome:
    outcome = day_outcome(day, now=now)
    if outcome.end is not None and day.status == DayStatus.OPEN:
        ended_at = day.deadline if outcome.end.how.value == "deadline" else now
        _end_day(day, outcome, ended_at=ended_at, actor=actor, now=now)
    elif day.status == DayStatus.AWAITING_CASTING_VOTE and outcome.state is DayState.DECIDED:
        _decide_day(day, outcome, actor=actor, now=now)
    return outcome


@transaction.atomic
def do_close_m21_day_at_deadline(game: Game, number: int, *, acting_user=None, now: datetime | None = None) -> str:
    """The clock's end of day ``number`` at its planned deadline (M-VOTE-4): plurality, a tie waiting for the
    Judge's casting vote when they can give one. A day already over or extended is left. Returns what happened."""
    now = now or timezone.now()
    day = M21Day.objects.select_for_update().filter(game=game, number=number).first()
    if day is None or day.status != DayStatus.OPEN:
        return f"day {number} is not open"
    if now < day.deadline:
        return f"day {number} runs until {day.deadline.isoformat()}"
    _decide_if_due(day, now=now)
    day.refresh_from_db()
    return f"day {number} ended at its deadline: {day.status}"


@transaction.atomic
def do_close_m21_casting_window(game: Game, number: int, *, now: datetime | None = None) -> str:
    """The clock's end of the Judge's casting window after a tied day: the tie stands (nobody is imprisoned)."""
    now = now or timezone.now()
    day = M21Day.objects.select_for_update().filter(game=game, number=number).first()
    if day is None or day.status != DayStatus.AWAITING_CASTING_VOTE:
        return f"day {number} is not waiting for a casting vote"
    outcome = day_outcome(day, now=now, casting_window_over=True)
    _decide_day(day, outcome, actor=None, now=now)
    return f"day {number}: no casting vote, the tie stands"


def _judge_seat(game: Game, acting_user) -> Resident:
    seat = policies.seat_in(acting_user, game)
    if seat is None or not hasattr(seat, "m21_seat") or seat.m21_seat.role != "judge":
        raise NotAllowed("Only the Judge has this power.", rule="M-ROLE")
    if seat.status != LifeStatus.ALIVE:
        raise M21Refusal("Only a living Judge can use this power.", rule="M-ROLE")
    return seat


def _refuse_if_judge_refused(outcome: M21DayOutcome, kind: str) -> str:
    receipt = [r for r in outcome.judge_receipts if r.kind == kind][-1]
    if not receipt.accepted:
        raise M21Refusal(receipt.message, rule="M-ROLE")
    return receipt.message


@transaction.atomic
def do_close_proceedings(game: Game, *, acting_user, now: datetime | None = None) -> str:
    """The Judge's *close proceedings* (M-ROLE judge, once per game): while a majority of the living have a vote in
    place, the day ends now on the votes in place (plurality; a tie imprisons nobody). Returns the Judge's
    receipt. Raises ``NotAllowed`` (not the Judge) or ``M21Refusal`` with the reason (no open day, power used,
    no majority voting); nothing is stored then."""
    now = now or timezone.now()
    _check_m21(game)
    seat = _judge_seat(game, acting_user)
    day = open_day(game, lock=True)
    if day is None or day.status != DayStatus.OPEN or now >= day.deadline:
        raise M21Refusal("No day is open.", rule="M-ROLE")
    M21DayOrder.objects.create(day=day, kind=OrderKind.CLOSE_PROCEEDINGS, at=now, seat=seat)
    outcome = day_outcome(day, now=now)
    message = _refuse_if_judge_refused(outcome, "close_proceedings")
    _end_day(day, outcome, ended_at=now, actor=acting_user, now=now)
    record_event(game, "m21.judge_closed_proceedings", actor=acting_user, at=now, payload={"day": day.number})
    return message


@transaction.atomic
def do_cast_judge_vote(game: Game, target: Resident | None, *, acting_user, now: datetime | None = None) -> str:
    """The Judge's *casting vote* (M-ROLE judge, once per game) for ``target`` (None: No Lynch): registered in
    advance while a day is open, or cast within 15 minutes after a tied end while the result waits. Returns the
    Judge's receipt; raises ``NotAllowed`` or ``M21Refusal`` with the reason (nothing stored)."""
    now = now or timezone.now()
    _check_m21(game)
    seat = _judge_seat(game, acting_user)
    if target is not None and target.game_id != game.pk:
        raise InvalidInput("Choose a player of this game.")
    day = open_day(game, lock=True)
    if day is None or (day.status == DayStatus.OPEN and now >= day.deadline):
        raise M21Refusal("No day is open and no tie waits for a casting vote.", rule="M-ROLE")
    if day.status == DayStatus.AWAITING_CASTING_VOTE and now >= day.casting_window_ends_at:
        raise M21Refusal("The 15 minutes for a casting vote are over.", rule="M-ROLE")
    M21DayOrder.objects.create(day=day, kind=OrderKind.CASTING_VOTE, at=now, seat=seat, target=target,
                               no_lynch=target is None)
    outcome = day_outcome(day, now=now)
    message = _refuse_if_judge_refused(outcome, "casting_vote")
    if day.status == DayStatus.AWAITING_CASTING_VOTE:
        _decide_day(day, outcome, actor=acting_user, now=now)
    record_event(game, "m21.judge_casting_vote", actor=acting_user, at=now,
                 payload={"day": day.number, "target": target.pk if target else None})
    return message


@transaction.atomic
def do_remove_m21_player(resident: Resident, *, acting_user, cause: str = ForumRemovalCause.REMOVED,
                         reveal_role: bool = True, now: datetime | None = None) -> Resident:
    """Remove a living player from the game (the host's modkill, M-SETUP-4) or record a death during the day
    (``cause="killed"``, by the site): the seat is dead; during a day its vote and the votes on it are void and
    those voters are told in the game thread (M-VOTE-9); the role is revealed when ``reveal_role``. Hosts (or
    the site). Raises ``WrongState`` for a seat that is not alive."""
    now = now or timezone.now()
    game = resident.game
    _check_m21(game)
    _check_host(game, acting_user)
    if game.status == GameStatus.FINISHED:
        raise WrongState("The game is over.")
    resident = Resident.objects.select_for_update().get(pk=resident.pk)
    if resident.status != LifeStatus.ALIVE:
        raise WrongState(f"{resident.name} is not alive.")
    day = open_day(game, lock=True)
    label = resident.name
    if day is not None and day.status == DayStatus.OPEN and now < day.deadline:
        label = _seat_names(day).get(resident.pk, resident.name)
        M21DayOrder.objects.create(day=day, kind=OrderKind.REMOVAL, at=now, seat=resident,
                                   payload={"cause": str(cause)})
    resident.status = LifeStatus.DEAD
    resident.died_at = now
    resident.alignment_announced = reveal_role
    resident.save(update_fields=["status", "died_at", "alignment_announced"])
    _seat_leaves_the_living(resident, reason="dead", now=now)
    role_text = f" They were the {ROLES[resident.m21_seat.role].name}." if reveal_role else ""
    thread = thread_of(game)
    lines = [f"**{resident.name} {'has died' if cause == 'killed' else 'has been removed from the game'}.**"
             f"{role_text}"]
    if day is not None and day.status == DayStatus.OPEN and now < day.deadline:
        outcome = day_outcome(day, now=now)
        voided = [v for v in outcome.report.voided if v.removed == label and v.voter != label]
        if voided:
            lines.append(f"Votes on {label} are void: {', '.join(v.voter for v in voided)}, please vote again "
                         f"(M-VOTE-9).")
        site_message(thread, " ".join(lines), now)
        if outcome.end is not None:
            _end_day(day, outcome, ended_at=now, actor=acting_user, now=now)
    else:
        site_message(thread, " ".join(lines), now)
    record_event(game, "m21.player_removed", actor=acting_user, at=now,
                 payload={"resident": resident.pk, "cause": str(cause), "reveal_role": reveal_role})
    _finish_if_won(game, now)
    return resident


@transaction.atomic
def do_replace_m21_player(resident: Resident, new_user, *, acting_user, now: datetime | None = None) -> Resident:
    """A new account takes over a seat (L-REPLACE-1): ``inboxes.services.do_replace_player``, and during a day the
    seat keeps its vote and the votes on it (a replacement record of the day)."""
    now = now or timezone.now()
    _check_m21(resident.game)
    old_user_id, old_name = resident.user_id, resident.name
    resident = do_replace_player(resident, new_user, acting_user=acting_user, now=now)
    day = open_day(resident.game, lock=True)
    if day is not None:
        M21DayOrder.objects.create(day=day, kind=OrderKind.REPLACEMENT, at=now, seat=resident,
                                   payload={"old_user": old_user_id, "old_name": old_name,
                                            "new_user": new_user.pk, "new_name": resident.name})
    return resident


@transaction.atomic
def do_extend_m21_phase(game: Game, hours: int, *, acting_user, now: datetime | None = None) -> datetime:
    """Extend the current phase by ``hours`` (1..72, M-SETUP-2/4): the open day's deadline, or the night's end;
    the clock's event moves with it. Hosts only. Returns the new planned end. Raises ``WrongState`` when no phase
    is running or its planned end has already passed, ``InvalidInput`` for a bad number of hours."""
    now = now or timezone.now()
    _check_m21(game)
    _check_host(game, acting_user)
    if isinstance(hours, bool) or not isinstance(hours, int) or not 1 <= hours <= MAX_EXTENSION_HOURS:
        raise InvalidInput(f"Extend by 1 to {MAX_EXTENSION_HOURS} hours.", rule="M-SETUP-2")
    day = open_day(game, lock=True)
    if day is not None and day.status == DayStatus.OPEN:
        if now >= day.deadline:
            raise WrongState("The deadline has passed: the day is being closed.", rule="M-SETUP-2")
        kind, old = "m21_day_deadline", day.deadline
        day.deadline = old + timedelta(hours=hours)
        day.save(update_fields=["deadline"])
        new = day.deadline
        payload = {"day": day.number}
        label = f"Day {day.number}"
    else:
        event = ScheduledEvent.objects.select_for_update().filter(
            game=game, kind="m21_night_end", done_at__isnull=True, cancelled_at__isnull=True).first()
        if event is None:
            raise WrongState("No phase is running.", rule="M-SETUP-2")
        if now >= event.due_at:
            raise WrongState("The night's end has passed: it is being resolved.", rule="M-SETUP-2")
        kind, old, new, payload = "m21_night_end", event.due_at, event.due_at + timedelta(hours=hours), event.payload
        # The night's row (made at its first submission) counts submissions up to its planned end: it moves too.
        M21Night.objects.filter(game=game, number=payload["night"]).update(planned_end=new)
        label = f"Night {payload['night']}"
    ScheduledEvent.objects.filter(game=game, kind=kind, done_at__isnull=True, cancelled_at__isnull=True).update(
        cancelled_at=now)
    ScheduledEvent.objects.create(game=game, kind=kind, due_at=new, payload=payload, created_at=now,
                                  created_by=acting_user)
    site_message(thread_of(game), f"**{label} is extended by {hours} hours:** it now ends at {_wall(new, game)}.",
                  now)
    record_event(game, "m21.phase_extended", actor=acting_user, at=now,
                 payload={"kind": kind, "from": old.isoformat(), "to": new.isoformat(), "hours": hours})
    return new


@transaction.atomic
def do_post_vote_count(game: Game, *, acting_user, now: datetime | None = None) -> Message:
    """The host posts the live vote count in the game thread (M-VOTE-8): who votes whom, L-n to the hammer, END
    marks, the living without a vote. Hosts only, while a day is open."""
    now = now or timezone.now()
    _check_m21(game)
    _check_host(game, acting_user)
    day = open_day(game)
    if day is None:
        raise WrongState("No day is open.", rule="M-VOTE-8")
    outcome = day_outcome(day, now=now)
    text = f"Day {day.number}\n\n" + vote_count_text(outcome.report)
    role = next(r for r in policies.staff_roles_in(acting_user, game)
                if r.kind in (StaffKind.PROCURATOR, StaffKind.COHOST))
    message = Message.objects.create(inbox=day.thread, author_user=acting_user, author_staff=role,
                                     author_name=acting_user.public_name, body=text, body_html=render_markdown(text),
                                     received_at=now)
    record_event(game, "m21.vote_count_posted", actor=acting_user, at=now,
                 payload={"day": day.number, "message": message.pk})
    return message


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


# ----------------------------------------------------------------------------------------------------------------
# The night's frame (its resolution is the ruleset's night steps)
# ----------------------------------------------------------------------------------------------------------------


@transaction.atomic
def do_start_m21_night(game: Game, day_number: int, *, planned_at: datetime, now: datetime | None = None) -> str:
    """Start night ``day_number`` after its day was decided (by the clock): the night ends at the first phase
    shift at or after ``planned_at + night_hours`` (M-SETUP-2), where ``m21_night_end`` resolves it."""
    now = now or timezone.now()
    settings = _check_m21(game)
    if game.status != GameStatus.RUNNING:
        return "the game is not running"
    if ScheduledEvent.objects.filter(game=game, kind="m21_night_end", payload__night=day_number).exists():
        return f"night {day_number} has already started"
    ends = phase_end(planned_at, settings.night_hours, settings.phase_shift, game.time_zone)
    ScheduledEvent.objects.create(game=game, kind="m21_night_end", due_at=ends, payload={"night": day_number},
                                  created_at=now)
    site_message(thread_of(game), f"**Night {day_number} has begun.** It ends at {_wall(ends, game)}.", now)
    record_event(game, "m21.night_started", actor=None, at=now, payload={"night": day_number, "ends": ends.isoformat()})
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
