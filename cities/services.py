"""State changes of games, cities, residents, staff and public posts (DESIGN.md "services").

Each ``do_<verb>_<noun>(..., *, acting_user, now=None)`` runs in one transaction, checks the rules first, writes
a ``GameEvent`` audit row in the same transaction and raises a ``RuleViolation`` subclass (nothing changed) when
the rules refuse. ``acting_user=None`` means the scheduler or a trusted setup command.
"""
from __future__ import annotations

import random
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from inboxes.policies import forget_viewer_cache, holds_role
from inboxes.rendering import render_markdown
from inboxes.services import do_lay_spirit_to_rest, do_roll_over_city_inboxes_for_new_day
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, UnknownRuleset, WrongState
from kernel.events import ScheduledKind
from kernel.rulesets import get_ruleset, ruleset_of
from roles import draw
from voting.models import VotingSession

from . import clock
from .daily_post import daily_post_record
from .models import (
    City,
    Game,
    GameDay,
    GameStatus,
    PostKind,
    PublicPost,
    Resident,
    Ruleset,
    ScheduledEvent,
    Signup,
    StaffKind,
    StaffRole,
)
from .resident_services import do_set_resident_flags  # noqa: F401  (public name kept for callers)

MAX_POST_LENGTH = 50_000
#: How far ahead a post may be scheduled, in days (a game lasts 10-14 days, L-DAY-6; recruitment comes first).
MAX_SCHEDULE_DAYS = 366


def _clean_text(text: str, *, field: str, max_length: int) -> str:
    text = (text or "").strip()
    if not text:
        raise InvalidInput(_("The %(field)s is empty.") % {"field": field})
    if len(text) > max_length:
        raise InvalidInput(
            _("The %(field)s is too long: %(length)d characters, at most %(max)d.")
            % {"field": field, "length": len(text), "max": max_length}
        )
    return text


#: Slugs that would shadow other pages.
RESERVED_SLUGS = frozenset({"new", "admin", "accounts", "inboxes", "healthz"})
MAX_CITIES = 20
MAX_CITY_SIZE = 200


@transaction.atomic
def do_create_game(*, title: str, slug: str, acting_user, ruleset: str = Ruleset.LEPRA,
                   time_zone: str | None = None, rules_text: str = "", city_count: int | None = None,
                   city_size: int = 20, day_start: time | None = None, now: datetime | None = None) -> Game:
    """Create a game in recruitment (signups open). ``acting_user`` becomes its Procurator (L-STAFF-1).

    ``city_count`` (1..20) fixes the number of cities; otherwise the cities are about ``city_size`` (2..200)
    residents each (L-CITY-2: 20 by default). ``day_start`` is a wall-clock time in ``time_zone`` (L-DAY-1);
    ``time_zone`` and ``day_start`` default to the ruleset's (``RulesetSpec.default_time_zone``, ``phase_plan``).
    Returns the Game. Raises ``UnknownRuleset`` (an ``InvalidInput``) for a ruleset that is not registered with
    ``kernel.rulesets``, ``InvalidInput`` for an empty title, a taken or reserved slug, an unknown time zone or an
    impossible city setting.
    """
    now = now or timezone.now()
    title = _clean_text(title, field=_("title"), max_length=200)
    if slug in RESERVED_SLUGS:
        raise InvalidInput(_("The address %(slug)s is reserved; choose another.") % {"slug": slug})
    if city_count is not None and not 1 <= city_count <= MAX_CITIES:
        raise InvalidInput(_("The number of cities must be between 1 and %(max)d.") % {"max": MAX_CITIES}, rule="L-CITY-1")
    if not 2 <= city_size <= MAX_CITY_SIZE:
        raise InvalidInput(_("A city has between 2 and %(max)d residents.") % {"max": MAX_CITY_SIZE}, rule="L-CITY-2")
    rules_text = (rules_text or "").strip()
    if len(rules_text) > MAX_POST_LENGTH:
        raise InvalidInput(_("The %(field)s is too long: %(length)d characters, at most %(max)d.")
                           % {"field": _("rules"), "length": len(rules_text), "max": MAX_POST_LENGTH})
    spec = get_ruleset(ruleset)  # UnknownRuleset (an InvalidInput) unless registered and a model choice
    if ruleset not in Ruleset.values:
        raise UnknownRuleset(_("Unknown ruleset: %(r)s.") % {"r": ruleset})
    time_zone = time_zone or spec.default_time_zone
    try:
        ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(_("Unknown time zone: %(tz)s.") % {"tz": time_zone}) from None
    if Game.objects.filter(slug=slug).exists():
        raise InvalidInput(_("A game with the address %(slug)s already exists.") % {"slug": slug})
    game = Game.objects.create(title=title, slug=slug, ruleset=ruleset, time_zone=time_zone, rules_text=rules_text,
                               city_count=city_count, city_size=city_size,
                               day_start=day_start or spec.phase_plan.day_start)
    if acting_user is not None:
        StaffRole.objects.create(game=game, kind=StaffKind.PROCURATOR, user=acting_user)
        forget_viewer_cache(acting_user)
    record_event(game, "game.created", actor=acting_user, at=now, payload={"title": title, "ruleset": ruleset})
    return game


def _check_procurator(game: Game, acting_user) -> None:
    if acting_user is not None and not holds_role(acting_user, game, StaffKind.PROCURATOR):
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-STAFF-1")


@transaction.atomic
def do_add_city(game: Game, *, name: str, acting_user, now: datetime | None = None) -> City:
    """Add the next city (numbered 1, 2, ...) to ``game`` before it starts and before its city lists are
    published (L-CITY-1, L-CITY-4: the published cities are final). Procurator only."""
    now = now or timezone.now()
    _check_procurator(game, acting_user)
    if game.status not in (GameStatus.RECRUITMENT, GameStatus.SETUP):
        raise WrongState(_("Cities are formed before the game starts."), rule="L-CITY-1")
    if game.lists_published_at is not None:
        raise WrongState(_("The city lists are published; the cities cannot change any more."), rule="L-CITY-1")
    name = " ".join(_clean_text(name, field=_("name"), max_length=100).split())
    if any(existing.casefold() == name.casefold() for existing in game.cities.values_list("name", flat=True)):
        raise InvalidInput(_("The game already has a city named %(name)s.") % {"name": name}, rule="L-CITY-1")
    number = game.cities.count() + 1
    city = City.objects.create(game=game, number=number, name=name)
    record_event(game, "city.added", actor=acting_user, at=now, payload={"city": city.pk, "name": name})
    return city


@transaction.atomic
def do_seat_resident(city: City, user, *, acting_user, name: str | None = None, now: datetime | None = None) -> Resident:
    """Seat ``user`` as an honest, living resident of ``city`` (L-CITY-1). Procurator only.

    Raises ``NotAllowed`` when ``user`` is staff of the game (staff are not residents, L-STAFF) and
    ``InvalidInput`` when they already hold a seat in the game or the name is taken.
    """
    now = now or timezone.now()
    game = city.game
    _check_procurator(game, acting_user)
    if game.status not in (GameStatus.RECRUITMENT, GameStatus.SETUP):
        raise WrongState(_("Residents are seated before the game starts."), rule="L-CITY-1")
    if StaffRole.objects.filter(game=game, user=user).exists():
        raise NotAllowed(_("Staff of a game cannot be its residents."), rule="L-STAFF-1")
    if Resident.objects.filter(game=game, user=user).exists():
        raise InvalidInput(_("%(name)s already has a seat in this game.") % {"name": user.public_name}, rule="L-CITY-1")
    name = _clean_text(name or user.public_name, field=_("name"), max_length=60)
    if Resident.objects.filter(game=game, name=name).exists():
        raise InvalidInput(_("The name %(name)s is taken in this game.") % {"name": name})
    resident = Resident.objects.create(game=game, city=city, user=user, name=name)
    forget_viewer_cache(user)
    record_event(game, "resident.seated", actor=acting_user, at=now, payload={"resident": resident.pk, "city": city.pk})
    return resident


@transaction.atomic
def do_appoint_staff(game: Game, user, kind: str, *, acting_user, city: City | None = None,
                     now: datetime | None = None) -> StaffRole:
    """Give ``user`` the staff role ``kind`` in ``game`` (L-STAFF-1: the Procurator appoints). Returns the role.

    Raises ``NotAllowed`` when ``user`` holds a seat, a sign-up or already a staff role in the game (one role
    per person: L-STAFF-1, L-STAFF-5) and ``InvalidInput`` when the role is taken, a Tribune has no city (or another role has one), or the city is of another game.
    """
    now = now or timezone.now()
    _check_procurator(game, acting_user)
    if kind not in ruleset_of(game).staff_kinds or kind == StaffKind.PROCURATOR:  # the ruleset's staff (L-STAFF)
        raise InvalidInput(_("Unknown staff role: %(kind)s.") % {"kind": kind})
    if (kind == StaffKind.TRIBUNE) != (city is not None) or (city is not None and city.game_id != game.pk):
        raise InvalidInput(_("A Tribune is appointed for one city of the game; other roles for none."), rule="L-STAFF-2")
    if Resident.objects.filter(game=game, user=user).exists():
        raise NotAllowed(_("Residents of a game cannot be its staff."), rule="L-STAFF-1")
    if Signup.objects.filter(game=game, user=user, withdrawn_at__isnull=True).exists():
        raise NotAllowed(_("%(name)s signed up to play; players cannot be staff of the same game.")
                         % {"name": user.public_name}, rule="L-STAFF-1")
    held = StaffRole.objects.filter(game=game, user=user).first()
    if held is not None:
        # One role per person and game: a Procurator or Tribune who were also the Consigliere would learn the
        # mafia (L-STAFF-1, L-STAFF-4, L-STAFF-5); a Tribune of two cities would hold two cities' secrets.
        raise NotAllowed(_("%(name)s already holds a staff role in this game: %(role)s.")
                         % {"name": user.public_name, "role": held.get_kind_display()}, rule="L-STAFF-5")
    taken = StaffRole.objects.filter(game=game, kind=kind)
    if city is not None:
        taken = taken.filter(city=city)
    if taken.exists():
        raise InvalidInput(_("This role is already held."))
    role = StaffRole.objects.create(game=game, kind=kind, city=city, user=user)
    forget_viewer_cache(user)
    record_event(game, "staff.appointed", actor=acting_user, at=now,
                 payload={"role": role.pk, "kind": kind, "city": city.pk if city else None, "user": user.pk})
    return role


@transaction.atomic
def do_set_game_status(game: Game, status: str, *, acting_user, day_number: int | None = None,
                       now: datetime | None = None) -> Game:
    """Move ``game`` to ``status`` (and ``day_number`` when given). Procurator only; a finished game stays so."""
    now = now or timezone.now()
    _check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status == GameStatus.FINISHED:
        raise WrongState(_("The game is over."))
    game.status = status
    if day_number is not None:
        game.day_number = day_number
    if status == GameStatus.FINISHED:
        game.ended_at = now
    game.save(update_fields=["status", "day_number", "ended_at"])
    record_event(game, "game.status", actor=acting_user, at=now, payload={"status": status, "day": game.day_number})
    return game


@transaction.atomic
def do_create_public_post(game: Game, *, kind: str, title: str, body: str, acting_user,
                          publish: bool = True, now: datetime | None = None) -> PublicPost:
    """Create a public post of ``game`` (L-POST), published at once unless ``publish`` is False.

    Procurator only (``acting_user`` None: the site). Raises ``InvalidInput`` for an empty or over-long text and
    when the game already has its recruitment post.
    """
    now = now or timezone.now()
    _check_procurator(game, acting_user)
    title = _clean_text(title, field=_("title"), max_length=200)
    body = _clean_text(body, field=_("text"), max_length=MAX_POST_LENGTH)
    if kind not in PostKind.values:
        raise InvalidInput(_("Unknown post kind: %(kind)s.") % {"kind": kind})
    if kind == PostKind.RECRUITMENT and PublicPost.objects.filter(game=game, kind=kind).exists():
        raise InvalidInput(_("This game already has its recruitment post."), rule="L-POST-1")
    post = PublicPost.objects.create(
        game=game, kind=kind, title=title, body=body, body_html=render_markdown(body), author=acting_user,
        created_at=now, published_at=now if publish else None,
    )
    record_event(game, "post.created", actor=acting_user, at=now, payload={"post": post.pk, "published": publish})
    return post


@transaction.atomic
def do_schedule_public_post(game: Game, *, title: str, body: str, publish_at: datetime, acting_user,
                            now: datetime | None = None) -> PublicPost:
    """Schedule an announcement of ``game`` to be published at ``publish_at`` (aware UTC, in the future).

    Procurator only (L-STAFF-1, L-POST). Creates the unpublished PublicPost and a ``publish_post``
    ScheduledEvent; the scheduler publishes it once (``cities.scheduler``). Returns the post.
    Raises ``NotAllowed``, ``InvalidInput`` (empty, too long, naive or past time) or ``WrongState`` (game over).
    """
    now = now or timezone.now()
    _check_procurator(game, acting_user)
    if game.status == GameStatus.FINISHED:
        raise WrongState(_("The game is over."))
    if timezone.is_naive(publish_at):
        raise InvalidInput(_("The publication time must include its time zone."))
    if publish_at <= now:
        raise InvalidInput(_("The publication time must be in the future."))
    if publish_at > now + timedelta(days=MAX_SCHEDULE_DAYS):
        raise InvalidInput(_("The publication time must be within %(days)d days.") % {"days": MAX_SCHEDULE_DAYS})
    post = do_create_public_post(game, kind=PostKind.ANNOUNCEMENT, title=title, body=body,
                                 acting_user=acting_user, publish=False, now=now)
    post.publish_at = publish_at
    post.save(update_fields=["publish_at"])
    event = ScheduledEvent.objects.create(game=game, kind="publish_post", due_at=publish_at,
                                          payload={"post": post.pk}, created_at=now, created_by=acting_user)
    record_event(game, "post.scheduled", actor=acting_user, at=now,
                 payload={"post": post.pk, "event": event.pk, "publish_at": publish_at.isoformat()})
    return post


@transaction.atomic
def do_publish_post(post: PublicPost, *, acting_user, now: datetime | None = None) -> PublicPost:
    """Publish ``post`` now (L-INBOX-16: then everyone may read it). The scheduler passes ``acting_user=None``.

    Raises ``WrongState`` when it is already published, so a duplicate run can never publish twice.
    """
    now = now or timezone.now()
    _check_procurator(post.game, acting_user)
    post = PublicPost.objects.select_for_update().get(pk=post.pk)
    if post.published_at is not None:
        raise WrongState(_("This post is already published."))
    post.published_at = now
    post.save(update_fields=["published_at"])
    record_event(post.game, "scheduler.post_published" if acting_user is None else "post.published",
                 actor=acting_user, at=now, payload={"post": post.pk})
    return post


# --------------------------------------------------------------------------------------------------------------
# Recruitment (issue 3 item 1): the recruitment post, sign-ups, cities, the city lists (L-CITY, L-POST-1)
# --------------------------------------------------------------------------------------------------------------

def recruitment_post_of(game: Game) -> PublicPost | None:
    """The recruitment post of ``game`` (L-POST-1), or None."""
    return PublicPost.objects.filter(game=game, kind=PostKind.RECRUITMENT).first()


@transaction.atomic
def do_publish_recruitment_post(game: Game, *, acting_user, title: str = "", body: str = "",
                                now: datetime | None = None) -> PublicPost:
    """Publish the recruitment post of ``game`` (L-POST-1, L-INBOX-16: public to everyone). Procurator only.

    ``title`` defaults to the game's title; ``body`` to its rules text (or a short invitation). Later steps
    append the city lists (L-CITY-4) and the draw commitment (L-ASSIGN-3) to it. Raises ``NotAllowed``,
    ``WrongState`` (the game has started) or ``InvalidInput`` (already published, too long).
    """
    now = now or timezone.now()
    _check_procurator(game, acting_user)
    if game.status not in (GameStatus.RECRUITMENT, GameStatus.SETUP):
        raise WrongState(_("The recruitment post is published before the game starts."), rule="L-POST-1")
    title = (title or "").strip() or game.title
    body = (body or "").strip() or game.rules_text or _("Sign up on the game page.")
    return do_create_public_post(game, kind=PostKind.RECRUITMENT, title=title, body=body, acting_user=acting_user,
                                 now=now)


@transaction.atomic
def do_append_to_recruitment_post(game: Game, text: str, *, acting_user, now: datetime | None = None) -> PublicPost:
    """Append ``text`` (Markdown) to the published recruitment post of ``game`` (L-POST-1: later the city lists
    and the draw commitment). Procurator or the site (``acting_user`` None). Audited with the appended text's
    length. Raises ``WrongState`` when there is no published recruitment post, ``InvalidInput`` when too long."""
    now = now or timezone.now()
    _check_procurator(game, acting_user)
    post = PublicPost.objects.select_for_update().filter(game=game, kind=PostKind.RECRUITMENT).first()
    if post is None or post.published_at is None:
        raise WrongState(_("Publish the recruitment post first."), rule="L-POST-1")
    text = _clean_text(text, field=_("text"), max_length=MAX_POST_LENGTH)
    body = f"{post.body}\n\n{text}"
    if len(body) > MAX_POST_LENGTH:
        raise InvalidInput(_("The recruitment post would become too long."))
    post.body = body
    post.body_html = render_markdown(body)
    post.save(update_fields=["body", "body_html"])
    record_event(game, "post.appended", actor=acting_user, at=now, payload={"post": post.pk, "length": len(text)})
    return post


#: Checks a sign-up must pass, registered by other apps: ``guard(user, game, now)`` raises a ``RuleViolation``
#: with a message for the player (the play bans of ``sanctions``, L-SANCTION-2).
SIGNUP_GUARDS: list = []


def _signups_open(game: Game) -> bool:
    return game.status == GameStatus.RECRUITMENT and game.signups_closed_at is None


@transaction.atomic
def do_sign_up(game: Game, *, acting_user, now: datetime | None = None) -> Signup:
    """Sign ``acting_user`` up for ``game`` (one click, L-CITY-1). Returns the active Signup.

    Raises ``NotAllowed`` for an anonymous user, staff of the game (staff are not residents, L-STAFF) or a player
    under a running play ban (L-SANCTION-2: the message says why and until when), ``WrongState`` when signups are
    closed or the user is already signed up.
    """
    now = now or timezone.now()
    if acting_user is None or not acting_user.is_authenticated:
        raise NotAllowed(_("Log in to sign up."))
    game = Game.objects.select_for_update().get(pk=game.pk)
    if not _signups_open(game):
        raise WrongState(_("Signups for this game are closed."), rule="L-CITY-1")
    if StaffRole.objects.filter(game=game, user=acting_user).exists():
        raise NotAllowed(_("Staff of a game cannot sign up to play in it."), rule="L-STAFF-1")
    for guard in SIGNUP_GUARDS:
        guard(acting_user, game, now)
    if Signup.objects.filter(game=game, user=acting_user, withdrawn_at__isnull=True).exists():
        raise WrongState(_("You are already signed up."))
    signup = Signup.objects.create(game=game, user=acting_user, signed_up_at=now)
    record_event(game, "signup.created", actor=acting_user, at=now, payload={"signup": signup.pk})
    return signup


@transaction.atomic
def do_withdraw_signup(game: Game, *, acting_user, now: datetime | None = None) -> Signup:
    """Withdraw ``acting_user``'s sign-up for ``game`` (one click) while signups are open. Returns the Signup.

    Raises ``NotAllowed`` for an anonymous user, ``WrongState`` when signups are closed (a player who drops out
    later is replaced, L-REPLACE-1) or the user is not signed up.
    """
    now = now or timezone.now()
    if acting_user is None or not acting_user.is_authenticated:
        raise NotAllowed(_("Log in to sign up."))
    game = Game.objects.select_for_update().get(pk=game.pk)
    if not _signups_open(game):
        raise WrongState(_("Signups are closed; ask the Procurator to replace you."), rule="L-REPLACE-1")
    signup = Signup.objects.select_for_update().filter(game=game, user=acting_user, withdrawn_at__isnull=True).first()
    if signup is None:
        raise WrongState(_("You are not signed up."))
    signup.withdrawn_at = now
    signup.save(update_fields=["withdrawn_at"])
    record_event(game, "signup.withdrawn", actor=acting_user, at=now, payload={"signup": signup.pk})
    return signup


@transaction.atomic
def do_close_signups(game: Game, *, acting_user, now: datetime | None = None) -> Game:
    """Close the signups of ``game`` and move it to setup (L-CITY-1: the Procurator then forms the cities).
    Procurator only. Raises ``NotAllowed`` or ``WrongState`` (already closed, not in recruitment)."""
    now = now or timezone.now()
    _check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    if not _signups_open(game):
        raise WrongState(_("Signups for this game are closed."), rule="L-CITY-1")
    game.signups_closed_at = now
    game.status = GameStatus.SETUP
    game.save(update_fields=["signups_closed_at", "status"])
    count = Signup.objects.filter(game=game, withdrawn_at__isnull=True).count()
    record_event(game, "signups.closed", actor=acting_user, at=now, payload={"signups": count})
    return game


def system_rng() -> random.Random:
    """The generator of the city split: the draws' cryptographically secure generator (``roles.draw``)."""
    return draw.system_rng()


def balanced_sizes(total: int, cities: int) -> list[int]:
    """Split ``total`` players into ``cities`` cities whose sizes differ by at most 1, larger cities first.
    Example: ``balanced_sizes(61, 3) == [21, 20, 20]``."""
    base, extra = divmod(total, cities)
    return [base + 1 if i < extra else base for i in range(cities)]


def planned_city_count(game: Game, players: int) -> int:
    """How many cities ``players`` sign-ups make in ``game``: ``game.city_count`` when set, else the count
    whose size is nearest ``game.city_size`` (at least 1)."""
    if game.city_count:
        return game.city_count
    return max(1, round(players / game.city_size))


def _setup_before_lists(game: Game, acting_user) -> Game:
    _check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status != GameStatus.SETUP or game.signups_closed_at is None:
        raise WrongState(_("Close the signups first."), rule="L-CITY-1")
    if game.lists_published_at is not None:
        raise WrongState(_("The city lists are published; the cities cannot change any more."), rule="L-CITY-1")
    return game


@transaction.atomic
def do_form_cities(game: Game, *, acting_user, names: list[str] | None = None, rng: random.Random | None = None,
                   now: datetime | None = None) -> list[City]:
    """Form the cities of ``game`` from its active sign-ups by a balanced random split (L-CITY-1): the sign-ups
    are shuffled with ``rng`` (default ``system_rng()``, i.e. ``secrets.SystemRandom()``) and dealt into ``planned_city_count`` cities
    whose sizes differ by at most 1; each player is seated under their public name. ``names`` name the cities
    (default "City 1", ...). Procurator only, after the signups close and before any city exists.

    Returns the cities in order. Raises ``NotAllowed``, ``WrongState`` (signups open, cities exist, lists
    published) or ``InvalidInput`` (fewer than 2 players per city, wrong number of names).
    """
    now = now or timezone.now()
    game = _setup_before_lists(game, acting_user)
    if City.objects.filter(game=game).exists():
        raise WrongState(_("The cities are already formed."), rule="L-CITY-1")
    signups = list(Signup.objects.filter(game=game, withdrawn_at__isnull=True).select_related("user").order_by("pk"))
    count = planned_city_count(game, len(signups))
    if len(signups) < 2 * count:
        raise InvalidInput(_("%(players)d players are too few for %(cities)d cities (at least 2 per city).")
                           % {"players": len(signups), "cities": count}, rule="L-CITY-2")
    names = [" ".join(n.split()) for n in (names or []) if n.strip()]
    if len({n.casefold() for n in names}) != len(names):
        raise InvalidInput(_("City names must differ from each other."), rule="L-CITY-1")
    if names and len(names) != count:
        raise InvalidInput(_("Give %(count)d city names, one per line, or none.") % {"count": count})
    names = names or [_("City %(number)d") % {"number": i} for i in range(1, count + 1)]
    (rng or system_rng()).shuffle(signups)
    cities = [do_add_city(game, name=name, acting_user=acting_user, now=now) for name in names]
    start = 0
    for city, size in zip(cities, balanced_sizes(len(signups), count), strict=True):
        for signup in signups[start:start + size]:
            do_seat_resident(city, signup.user, acting_user=acting_user, now=now)
        start += size
    record_event(game, "cities.formed", actor=acting_user, at=now,
                 payload={"cities": [c.pk for c in cities], "players": len(signups)})
    return cities


@transaction.atomic
def do_move_signup(signup: Signup, city: City, *, acting_user, now: datetime | None = None) -> Resident:
    """Put the player of ``signup`` into ``city`` by hand (L-CITY-1, forming cities by hand): seat them, or move
    their seat, before the city lists are published. Procurator only. Returns the Resident.

    Raises ``NotAllowed``, ``WrongState`` (signups open, lists published) or ``InvalidInput`` (a withdrawn
    sign-up, a city of another game).
    """
    now = now or timezone.now()
    game = _setup_before_lists(signup.game, acting_user)
    if city.game_id != game.pk or signup.game_id != game.pk:
        raise InvalidInput(_("This city is not a city of this game."))
    if signup.withdrawn_at is not None:
        raise InvalidInput(_("This sign-up was withdrawn."))
    resident = Resident.objects.select_for_update().filter(game=game, user=signup.user_id).first()
    if resident is None:
        return do_seat_resident(city, signup.user, acting_user=acting_user, now=now)
    resident.city = city
    resident.save(update_fields=["city"])
    record_event(game, "resident.moved", actor=acting_user, at=now, payload={"resident": resident.pk, "city": city.pk})
    return resident


def city_lists_markdown(game: Game) -> str:
    """The city lists of ``game`` as Markdown, names only (L-CITY-4): a heading, then per city its name and its
    residents' names in alphabetical order."""
    lines = ["## " + _("City lists")]
    for city in City.objects.filter(game=game).order_by("number"):
        names = sorted(Resident.objects.filter(city=city).values_list("name", flat=True))
        lines.append(f"**{city.name}** ({len(names)}): " + ", ".join(names))
    return "\n\n".join(lines)


@transaction.atomic
def do_publish_city_lists(game: Game, *, acting_user, now: datetime | None = None) -> PublicPost:
    """Publish the city lists (names only) by appending them to the recruitment post (L-CITY-4). From then on
    the cities are fixed. Procurator only. Every active sign-up must be seated and every city must have at least
    2 residents (L-CITY-2). Returns the post. Raises ``NotAllowed``, ``WrongState`` or ``InvalidInput``."""
    now = now or timezone.now()
    game = _setup_before_lists(game, acting_user)
    cities = list(City.objects.filter(game=game))
    if not cities:
        raise WrongState(_("Form the cities first."), rule="L-CITY-1")
    seated = set(Resident.objects.filter(game=game).values_list("user_id", flat=True))
    waiting = Signup.objects.filter(game=game, withdrawn_at__isnull=True).exclude(user__in=seated).count()
    if waiting:
        raise InvalidInput(_("%(count)d signed-up players have no city yet.") % {"count": waiting}, rule="L-CITY-1")
    small = [c.name for c in cities if Resident.objects.filter(city=c).count() < 2]
    if small:
        raise InvalidInput(_("A city needs at least 2 residents: %(cities)s.") % {"cities": ", ".join(small)},
                           rule="L-CITY-2")
    post = do_append_to_recruitment_post(game, city_lists_markdown(game), acting_user=acting_user, now=now)
    game.lists_published_at = now
    game.save(update_fields=["lists_published_at"])
    record_event(game, "cities.lists_published", actor=acting_user, at=now, payload={"post": post.pk})
    return post


# --------------------------------------------------------------------------------------------------------------
# The phase plan (issue 6 item 1; DESIGN.md "The clock"; RULES.md L-DAY-1..3, L-POST-2)
# --------------------------------------------------------------------------------------------------------------
#
# The plan is ``GameDay`` rows (``cities.clock`` computes their times) and the ScheduledEvents laid out from them.
# How far ahead: the current day and the next one. While day ``c`` runs (``Game.day_number == c``) the pending
# clock events are, in per-game (due_at, id) order:
#
#   night_start {"day": c}            at day c's ends_at (moved after any later voting_close / court_deadline)
#   night_end {"night": c}            at day c's night_ends_at (the night's resolution: ``roles``)
#   daily_post_draft {"day": c + 1}   at the same instant, created after night_end, so it runs after it
#   day_start {"day": c + 1}          at day c + 1's starts_at
#
# Before day 1 only ``day_start {"day": 1}`` is pending. When day ``c + 1`` starts, day ``c + 2`` is planned and
# the four events of day ``c + 1`` are laid out. Every service that changes the plan re-derives the days that have
# not started and moves the pending events (``due_at``); events that no longer belong to the plan are cancelled
# (``cancelled_at``); done events are never touched.

#: The kinds of scheduled events the phase plan owns (``_sync_clock_events``). Voting and court events belong to
#: ``voting`` (``do_schedule_voting``, ``do_put_before_court``).
CLOCK_EVENT_KINDS = tuple(kind.value for kind in ScheduledKind if kind.clock)
#: Events of the day that must run before its night starts (``night_start`` waits for them): the execution voting
#: and the court (``voting``), and judge elections (L-DAY-4).
DAY_DEADLINE_KINDS = tuple(kind.value for kind in ScheduledKind if kind.day_deadline)


def _zone(game: Game) -> ZoneInfo:
    return ZoneInfo(game.time_zone)


def _check_game_not_over(game: Game) -> None:
    if game.status == GameStatus.FINISHED:
        raise WrongState(_("The game is over."))


def game_day_of(game: Game, number: int):
    """The ``GameDay`` ``number`` of ``game``, or None when the clock has not planned it."""

    return GameDay.objects.filter(game=game, number=number).first()


def voting_window_limits(game: Game, day: int, now: datetime) -> tuple[datetime | None, datetime]:
    """The limits of L-DAY-3 for the execution voting of game day ``day``: ``(announce_by, ends_by)``, aware UTC.

    ``ends_by``: all voting is over by then: the planned end of the day (the 00:00 ending its last calendar day,
    or the end of a shortened day); without a plan, the 00:00 in the game's zone ending the calendar day of
    ``now``. ``announce_by``: the Tribunes set their times before it, in the first half of the day; None without
    a plan (no day start is known). Used by ``voting.services.do_schedule_voting`` / ``do_extend_voting``."""

    plan = game_day_of(game, day)
    if plan is None:
        return None, clock.midnight_after(_zone(game), now)
    return clock.announcement_deadline(plan.starts_at, plan.ends_at), plan.ends_at


def _lock_days(game: Game) -> list:

    return list(GameDay.objects.select_for_update().filter(game=game).order_by("number"))


def _replan(game: Game, *, ensure_through: int | None = None) -> list:
    """Re-derive the times of the days of ``game`` that have not started (``cities.clock.plan_days``) and the
    night ends, creating rows up to ``ensure_through``. Days that started keep their start; days whose night began
    keep their end. The current day's night start is held by its deadlines (``_night_hold``) and the night's end
    and the next day's start move with it (``cities.clock.night_after``). Returns the rows in order (locked)."""
    from . import clock
    from .models import GameDay

    zone = _zone(game)
    window = timedelta(minutes=game.daily_post_edit_minutes)
    days = _lock_days(game)
    if not days:
        return days
    last = max(days[-1].number, ensure_through or 0)
    by_number = {d.number: d for d in days}
    for number in range(days[-1].number + 1, last + 1):
        previous = by_number[number - 1]
        starts = clock.next_day_start(zone, game.day_start, previous.ends_at)
        by_number[number] = GameDay(game=game, number=number, starts_at=starts,
                                    ends_at=clock.day_end(zone, starts), night_ends_at=clock.day_end(zone, starts))
    ordered = [by_number[n] for n in sorted(by_number)]
    previous = None
    for day in ordered:
        if previous is not None:
            fixed = day.started_at is not None or day.start_fixed
            planned = day.starts_at if fixed else clock.next_day_start(zone, game.day_start, previous.ends_at)
            if previous.ended_at is None and previous.number == game.day_number:
                previous.night_starts_at = _night_hold(game, previous.ends_at, planned)
            previous.night_ends_at, following = clock.night_after(previous.ends_at, previous.night_starts_at,
                                                                  planned, edit_window=window)
            if day.started_at is None:
                day.starts_at = following
        if day.ended_at is None:
            day.ends_at = clock.day_end(zone, day.starts_at, calendar_days=day.calendar_days,
                                        shortened_hours=day.shortened_hours)
        previous = day
    following = clock.next_day_start(zone, game.day_start, ordered[-1].ends_at)
    if ordered[-1].ended_at is None and ordered[-1].number == game.day_number:
        ordered[-1].night_starts_at = _night_hold(game, ordered[-1].ends_at, following)
    ordered[-1].night_ends_at = clock.night_after(ordered[-1].ends_at, ordered[-1].night_starts_at, following,
                                                  edit_window=window)[0]
    for day in ordered:
        day.save()
    return ordered


def _night_hold(game: Game, ends_at: datetime, before: datetime) -> datetime | None:
    """The latest voting, court or judge election deadline of ``game`` (pending or done, not cancelled) due in
    [``ends_at``, ``before``): the night of the day ending at ``ends_at`` starts after it (L-DAY-3); None when
    none holds it. Elections opening at or after ``ends_at`` belong to the night and the next day (see
    ``_deadline_after``)."""
    events = ScheduledEvent.objects.filter(game=game, cancelled_at__isnull=True)
    later_elections = [e for e in events.filter(kind="election_open", due_at__gte=ends_at)
                       .values_list("payload__election", flat=True) if e is not None]
    return (events.filter(kind__in=DAY_DEADLINE_KINDS, due_at__gte=ends_at, due_at__lt=before)
            .exclude(kind="election_open").exclude(kind="election_close", payload__election__in=later_elections)
            .order_by("-due_at").values_list("due_at", flat=True).first())


def _deadline_after(game: Game, since: datetime, before: datetime) -> datetime | None:
    """The latest pending voting, court or judge election deadline of ``game`` due in [``since``, ``before``), or
    None. A judge election that opens at or after ``since`` (the day is over: a failed election's successor, an
    election after a death at night, L-JUDGE-2/5) belongs to the night and the next day, not to the day: neither
    its opening nor its close holds the night back."""
    pending = ScheduledEvent.objects.filter(game=game, done_at__isnull=True, cancelled_at__isnull=True)
    later_elections = [e for e in pending.filter(kind="election_open", due_at__gte=since)
                       .values_list("payload__election", flat=True) if e is not None]
    latest = (pending.filter(kind__in=DAY_DEADLINE_KINDS, due_at__gte=since, due_at__lt=before)
              .exclude(kind="election_open").exclude(kind="election_close", payload__election__in=later_elections)
              .order_by("-due_at").values_list("due_at", flat=True).first())
    return latest


def _expected_clock_events(game: Game, days: list) -> list[tuple[str, dict, datetime]]:
    """The clock events the plan wants pending for ``game`` now, as (kind, payload, due_at), in creation order."""
    by_number = {d.number: d for d in days}
    current = game.day_number
    if game.status == GameStatus.FINISHED:
        return []
    if current == 0:
        first = by_number.get(1)
        return [("day_start", {"day": 1}, first.starts_at)] if first else []
    today, tomorrow = by_number.get(current), by_number.get(current + 1)
    if today is None or tomorrow is None:
        return []
    expected = []
    if today.ended_at is None:
        night_at = max(today.ends_at, today.night_starts_at or today.ends_at)
        expected.append(("night_start", {"day": current}, night_at))
    expected += [
        ("night_end", {"night": current}, today.night_ends_at),
        ("daily_post_draft", {"day": current + 1}, today.night_ends_at),
        ("day_start", {"day": current + 1}, tomorrow.starts_at),
    ]
    return expected


def _payload_key(kind: str, payload: dict) -> tuple[str, int | None]:
    return kind, payload.get("night" if kind == "night_end" else "day")


def _sync_clock_events(game: Game, days: list, *, actor, now: datetime, running: int | None = None) -> dict:
    """Make the pending clock events of ``game`` match the plan: move the due time of pending rows, create the
    missing ones (never a second one for an event that already ran), cancel pending future rows the plan no
    longer has. Done rows, and rows already due (one may be the running event), are never cancelled; the event
    ``running`` (the handler calling this, about to be marked done) is left out, so its successor is created.
    Returns counts ``{"moved", "created", "cancelled"}`` and ``"changes"``: each moved event as
    ``{"event", "kind", "from", "to"}`` (ISO times), for the audit log."""
    expected = _expected_clock_events(game, days)
    wanted = {_payload_key(kind, payload) for kind, payload, _due in expected}
    pending = list(ScheduledEvent.objects.select_for_update().filter(
        game=game, kind__in=CLOCK_EVENT_KINDS, done_at__isnull=True, cancelled_at__isnull=True)
        .exclude(pk=running).order_by("id"))
    counts = {"moved": 0, "created": 0, "cancelled": 0}
    changes: list[dict] = []
    kept: dict[tuple[str, int | None], ScheduledEvent] = {}
    for event in pending:
        key = _payload_key(event.kind, event.payload)
        if key in wanted and key not in kept:
            kept[key] = event
        elif event.due_at > now:  # a due one may be running right now (its handler re-plans): left to run
            ScheduledEvent.objects.filter(pk=event.pk, done_at__isnull=True).update(cancelled_at=now)
            counts["cancelled"] += 1
    for kind, payload, due in expected:
        key = _payload_key(kind, payload)
        event = kept.get(key)
        if event is not None:
            if event.due_at != due:
                ScheduledEvent.objects.filter(pk=event.pk, done_at__isnull=True).update(due_at=due)
                counts["moved"] += 1
                changes.append({"event": event.pk, "kind": kind, "from": event.due_at.isoformat(),
                                "to": due.isoformat()})
            continue
        field = "night" if kind == "night_end" else "day"
        if ScheduledEvent.objects.filter(game=game, kind=kind, done_at__isnull=False,
                                         **{f"payload__{field}": key[1]}).exists():
            continue
        ScheduledEvent.objects.create(game=game, kind=kind, due_at=due, payload=payload, created_at=now,
                                      created_by=actor)
        counts["created"] += 1
    if changes:
        counts["changes"] = changes
    return counts


def _plan_payload(days: list) -> list[dict]:
    return [{"day": d.number, "starts_at": d.starts_at.isoformat(), "ends_at": d.ends_at.isoformat(),
             "night_ends_at": d.night_ends_at.isoformat()} for d in days if d.started_at is None or d.ended_at is None]


@transaction.atomic
def do_start_game_clock(game: Game, *, first_day_starts_at: datetime, acting_user,
                        now: datetime | None = None) -> list:
    """Start the clock of ``game`` (L-DAY-1): day ``game.day_number + 1`` starts at ``first_day_starts_at`` (aware,
    in the future); the plan then rolls on by itself (see the comment above ``CLOCK_EVENT_KINDS``).

    Before the game (setup, city lists published; ``day_number`` 0) this lays out day 1 and its ``day_start``
    event: the day start makes the game running. For a game already running on day ``c`` without a plan (a game
    started by hand, like the demo), day ``c`` is taken to be an ordinary day of the calendar day before
    ``first_day_starts_at``, and its night's events are laid out too. Procurator only (``acting_user`` None: the
    site). Returns the planned ``GameDay`` rows. Raises ``NotAllowed``, ``InvalidInput`` (naive or past time) or
    ``WrongState`` (game over, lists not published, clock already started)."""

    now = now or timezone.now()
    _check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    _check_game_not_over(game)
    if game.status == GameStatus.RECRUITMENT or game.lists_published_at is None and game.day_number == 0:
        raise WrongState(_("Publish the city lists before starting the game clock."), rule="L-CITY-4")
    if GameDay.objects.filter(game=game).exists():
        raise WrongState(_("The game clock is already running."), rule="L-DAY-1")
    if first_day_starts_at is None or timezone.is_naive(first_day_starts_at):
        raise InvalidInput(_("The day start must include its time zone."), rule="L-DAY-1")
    if first_day_starts_at <= now:
        raise InvalidInput(_("The day start must be in the future."), rule="L-DAY-1")
    zone = _zone(game)
    current = game.day_number
    if current >= 1:
        previous_date = clock.local_date(zone, first_day_starts_at) - timedelta(days=1)
        starts = clock.at_local(zone, previous_date, game.day_start)
        ends = clock.day_end(zone, starts)
        if ends + clock.MIN_NIGHT > first_day_starts_at:
            raise InvalidInput(_("The next day must start at least %(minutes)d minutes after this day ends "
                                 "(%(end)s).") % {"minutes": clock.MIN_NIGHT.seconds // 60,
                                                  "end": _local_time(game, ends)}, rule="L-DAY-1")
        GameDay.objects.create(game=game, number=current, starts_at=starts, ends_at=ends,
                               night_ends_at=clock.night_end(ends, first_day_starts_at), started_at=starts)
    GameDay.objects.create(game=game, number=current + 1, starts_at=first_day_starts_at,
                           ends_at=clock.day_end(zone, first_day_starts_at),
                           night_ends_at=clock.day_end(zone, first_day_starts_at), start_fixed=True)
    days = _replan(game)
    counts = _sync_clock_events(game, days, actor=acting_user, now=now)
    record_event(game, "clock.started", actor=acting_user, at=now,
                 payload={"first_day": current + 1, "starts_at": first_day_starts_at.isoformat(), **counts})
    return days


def _check_clock(game: Game, acting_user) -> Game:
    _check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    _check_game_not_over(game)
    if game_day_of(game, max(game.day_number, 1)) is None:
        raise WrongState(_("The game clock has not been started."), rule="L-DAY-1")
    return game


def _check_voting_fits(game: Game, days: list) -> None:
    """Every scheduled execution voting closes by the (new) end of its day (L-DAY-3)."""

    for day in days:
        late = (VotingSession.objects.filter(game=game, day=day.number, closes_at__gt=day.ends_at)
                .select_related("city").order_by("city__number").first())
        if late is not None:
            raise InvalidInput(_("The voting in %(city)s closes at %(closes)s, after the end of day %(day)d "
                                 "(%(end)s): the Tribune must move it first.")
                               % {"city": late.city.name, "closes": _local_time(game, late.closes_at),
                                  "day": day.number, "end": _local_time(game, day.ends_at)}, rule="L-DAY-3")


def _local_time(game: Game, moment: datetime) -> str:
    return timezone.localtime(moment, _zone(game)).strftime("%Y-%m-%d %H:%M")


def _check_future_days_fit(game: Game, days: list, now: datetime) -> None:
    """The re-derived plan still lies ahead: a day that has not started starts in the future (L-DAY-1)."""
    for day in days:
        if day.started_at is None and day.starts_at <= now:
            raise InvalidInput(_("Day %(day)d would start at %(start)s, which is not in the future.")
                               % {"day": day.number, "start": _local_time(game, day.starts_at)}, rule="L-DAY-1")


def _apply_plan_change(game: Game, *, acting_user, now: datetime, kind: str, payload: dict,
                       ensure_through: int | None = None) -> list:
    days = _replan(game, ensure_through=ensure_through)
    _check_future_days_fit(game, days, now)
    _check_voting_fits(game, days)
    counts = _sync_clock_events(game, days, actor=acting_user, now=now)
    record_event(game, kind, actor=acting_user, at=now, payload={**payload, **counts, "plan": _plan_payload(days)})
    return days


@transaction.atomic
def do_set_day_start(game: Game, day_start: time, *, acting_user, now: datetime | None = None) -> list:
    """The Procurator sets the day start time (L-DAY-1): ``day_start`` is a wall-clock time in the game's zone,
    applied to every day that has not started (days whose start the Procurator fixed by hand keep it). The pending
    ``day_start`` / ``night_end`` / ``daily_post_draft`` events move with it. Returns the plan's ``GameDay`` rows.

    Raises ``NotAllowed`` (not the Procurator), ``WrongState`` (game over, no clock) or ``InvalidInput`` (the next
    day would start in the past, L-DAY-1; a scheduled voting would end after its day, L-DAY-3); nothing changes
    then."""
    now = now or timezone.now()
    game = _check_clock(game, acting_user)
    if not isinstance(day_start, time) or day_start.tzinfo is not None:
        raise InvalidInput(_("The day start is a wall-clock time in the game's time zone."), rule="L-DAY-1")
    old = game.day_start
    game.day_start = day_start
    game.save(update_fields=["day_start"])
    return _apply_plan_change(game, acting_user=acting_user, now=now, kind="clock.day_start_set",
                              payload={"from": old.isoformat(), "to": day_start.isoformat()})


def _check_changeable_day(game: Game, day: int, now: datetime, *, rule: str, current_allowed: bool) -> None:

    if day < 1:
        raise InvalidInput(_("There is no day %(day)d.") % {"day": day}, rule=rule)
    if day < game.day_number or (day == game.day_number and not current_allowed):
        raise WrongState(_("Day %(day)d has already started.") % {"day": day}, rule=rule)
    if day == game.day_number:
        plan = game_day_of(game, day)
        if plan.ended_at is not None or now >= clock.announcement_deadline(plan.starts_at, plan.ends_at):
            raise WrongState(_("Day %(day)d is past its first half: its length can no longer change.")
                             % {"day": day}, rule=rule)


@transaction.atomic
def do_declare_long_day(game: Game, day: int, calendar_days: int, *, acting_user,
                        now: datetime | None = None) -> list:
    """The Procurator declares game day ``day`` a long day of ``calendar_days`` calendar days (L-DAY-2: 2 or 3;
    1 makes it an ordinary day again). It ends at the 00:00 ending its last calendar day (L-DAY-3); the days after
    it move. Allowed for a day that has not started, or for the current day during its first half (the Tribunes
    announce their times then). Returns the plan's ``GameDay`` rows.

    Raises ``NotAllowed``, ``WrongState`` (game over, no clock, day started or past its first half) or
    ``InvalidInput`` (not 1-3 days, a shortened day, a voting scheduled after the new end)."""

    now = now or timezone.now()
    game = _check_clock(game, acting_user)
    if not isinstance(calendar_days, int) or not 1 <= calendar_days <= clock.MAX_CALENDAR_DAYS:
        raise InvalidInput(_("A long day lasts 2 or 3 calendar days."), rule="L-DAY-2")
    _check_changeable_day(game, day, now, rule="L-DAY-2", current_allowed=True)
    _replan(game, ensure_through=day)
    target = GameDay.objects.select_for_update().get(game=game, number=day)
    if target.shortened_hours is not None:
        raise InvalidInput(_("Day %(day)d is shortened; a shortened day cannot be long.") % {"day": day},
                           rule="L-DAY-2")
    old = target.calendar_days
    target.calendar_days = calendar_days
    target.save(update_fields=["calendar_days"])
    return _apply_plan_change(game, acting_user=acting_user, now=now, kind="clock.long_day",
                              payload={"day": day, "from": old, "to": calendar_days})


@transaction.atomic
def do_shorten_day(game: Game, day: int, hours: int | None, *, acting_user,
                   next_day_starts_at: datetime | None = None, now: datetime | None = None) -> list:
    """The Procurator shortens game day ``day`` to ``hours`` hours (L-DAY-2: one of the last days of the game,
    a few hours [interp: 1-12]; None makes it an ordinary day again). The day must not have started and cannot be
    day 1 (the elections, L-DAY-5); it still ends by the 00:00 ending its calendar day (L-DAY-3). The next day
    starts at ``next_day_starts_at`` (aware; at least a short night later) or, by default, at the game's day start
    time after the night. Returns the plan's ``GameDay`` rows.

    Raises ``NotAllowed``, ``WrongState`` (game over, no clock, day started) or ``InvalidInput`` (bad hours, a day
    reaching past 00:00, a long day, a bad next start, a voting scheduled after the new end)."""

    now = now or timezone.now()
    game = _check_clock(game, acting_user)
    if hours is not None and (not isinstance(hours, int) or not 1 <= hours <= clock.MAX_SHORTENED_HOURS):
        raise InvalidInput(_("A shortened day lasts 1 to %(max)d hours.") % {"max": clock.MAX_SHORTENED_HOURS},
                           rule="L-DAY-2")
    if day < 2:
        raise InvalidInput(_("Day 1 cannot be shortened."), rule="L-DAY-5")
    _check_changeable_day(game, day, now, rule="L-DAY-2", current_allowed=False)
    _replan(game, ensure_through=day + 1)
    target = GameDay.objects.select_for_update().get(game=game, number=day)
    following = GameDay.objects.select_for_update().get(game=game, number=day + 1)
    if hours is not None:
        if target.calendar_days != 1:
            raise InvalidInput(_("Day %(day)d is a long day; a long day cannot be shortened.") % {"day": day},
                               rule="L-DAY-2")
        end = target.starts_at + timedelta(hours=hours)
        if end > clock.midnight_after(_zone(game), target.starts_at):
            raise InvalidInput(_("A day of %(hours)d hours from %(start)s would end after 00:00.")
                               % {"hours": hours, "start": _local_time(game, target.starts_at)}, rule="L-DAY-3")
        if next_day_starts_at is not None:
            if timezone.is_naive(next_day_starts_at):
                raise InvalidInput(_("The day start must include its time zone."), rule="L-DAY-1")
            if next_day_starts_at < end + clock.MIN_NIGHT:
                raise InvalidInput(_("The next day must start at least %(minutes)d minutes after this day ends "
                                     "(%(end)s).") % {"minutes": clock.MIN_NIGHT.seconds // 60,
                                                      "end": _local_time(game, end)}, rule="L-DAY-1")
    elif next_day_starts_at is not None:
        raise InvalidInput(_("Only a shortened day fixes the start of the next day."), rule="L-DAY-2")
    old = target.shortened_hours
    target.shortened_hours = hours
    target.save(update_fields=["shortened_hours"])
    following.start_fixed = next_day_starts_at is not None
    if next_day_starts_at is not None:
        following.starts_at = next_day_starts_at
    following.save(update_fields=["start_fixed", "starts_at"])
    return _apply_plan_change(game, acting_user=acting_user, now=now, kind="clock.day_shortened",
                              payload={"day": day, "from": old, "to": hours,
                                       "next_day_starts_at": next_day_starts_at.isoformat()
                                       if next_day_starts_at else None})


#: The longest edit window a game may give the Procurator before the site publishes a drafted daily post.
MAX_EDIT_WINDOW_MINUTES = 12 * 60


@transaction.atomic
def do_set_daily_post_edit_window(game: Game, minutes: int, *, acting_user, now: datetime | None = None) -> Game:
    """The Procurator sets the shortest time between the site's draft of a daily post and its publication
    (L-POST-2; 0 to ``MAX_EDIT_WINDOW_MINUTES``): a held night then also moves the next day's start by it, and a
    day start publishes a fresher draft only when the window has passed. Returns the game. Raises ``NotAllowed``,
    ``InvalidInput`` or ``WrongState`` (game over)."""
    now = now or timezone.now()
    if acting_user is None:
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-POST-2")
    _check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    _check_game_not_over(game)
    if not isinstance(minutes, int) or not 0 <= minutes <= MAX_EDIT_WINDOW_MINUTES:
        raise InvalidInput(_("The edit window is 0 to %(max)d minutes.") % {"max": MAX_EDIT_WINDOW_MINUTES},
                           rule="L-POST-2")
    old = game.daily_post_edit_minutes
    game.daily_post_edit_minutes = minutes
    game.save(update_fields=["daily_post_edit_minutes"])
    record_event(game, "daily_post.edit_window_set", actor=acting_user, at=now, payload={"from": old, "to": minutes})
    do_replan_clock(game, acting_user=acting_user, reason="daily_post.edit_window_set", now=now)
    return game


# --------------------------------------------------------------------------------------------------------------
# The day start and the night start (scheduler handlers call these; acting_user None = the site)
# --------------------------------------------------------------------------------------------------------------

@transaction.atomic
def do_begin_day(game: Game, day: int, *, acting_user=None, now: datetime | None = None):
    """Start game day ``day`` (the ``day_start`` event, L-DAY-1): ``day_number`` becomes ``day`` (a game in setup
    becomes running on day 1); the spirits of the day before go to the cemetery (L-SPIRIT-2); every city inbox
    rolls over (L-INBOX-1); the daily post drafted at night end is published, exactly once (L-POST-2); the day
    after is planned and the clock events of this day are laid out; day 1 opens the standing inboxes of the game
    (the ruleset's ``create_standing_inboxes``; Lepra: ``inboxes.services.do_open_game_inboxes``). On a finished game only the (final) daily
    post is published. Returns the ``GameDay``. Idempotent: a day that already started raises ``WrongState``
    and changes nothing; so do a missing plan and a day out of turn. Site or Procurator."""

    now = now or timezone.now()
    _check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    plan = game_day_of(game, day)
    if plan is None:
        raise WrongState(_("Day %(day)d is not planned.") % {"day": day}, rule="L-DAY-1")
    if game.status == GameStatus.FINISHED:
        if day >= 2:
            do_publish_daily_post(game, day, acting_user=acting_user, now=now)
        return plan
    if game.day_number >= day or plan.started_at is not None:
        raise WrongState(_("Day %(day)d has already started.") % {"day": day}, rule="L-DAY-1")
    if game.day_number != day - 1:
        raise WrongState(_("Day %(day)d cannot start on day %(current)d.") % {"day": day, "current": game.day_number},
                         rule="L-DAY-1")
    yesterday = game_day_of(game, day - 1)
    if yesterday is not None:
        cutoff = yesterday.started_at or yesterday.starts_at
        for spirit in Resident.objects.filter(game=game, is_spirit=True, died_at__lte=cutoff).exclude(
                status="alive").order_by("pk"):
            do_lay_spirit_to_rest(spirit, acting_user=None, now=now)
    starting = game.status == GameStatus.SETUP
    if starting:
        game.status = GameStatus.RUNNING
    game.day_number = day
    game.save(update_fields=["status", "day_number"])
    if starting:
        # The game starts: its standing inboxes open (city, personal, cemetery, office, ...; L-INBOX table), or
        # nobody could propose, nominate or post on day 1. Skipped (left to the Procurator) when the staff who
        # organize them are missing.
        try:
            ruleset_of(game).create_standing_inboxes(game, now=now)
        except WrongState:
            pass
    plan.started_at = now
    plan.save(update_fields=["started_at"])
    if day == 1:
        # The standing inboxes open as the game starts (L-INBOX table): no staff page does it, the day start does
        # (inboxes the Procurator opened already are kept).
        ruleset_of(game).create_standing_inboxes(game, now=now)
    rolled = do_roll_over_city_inboxes_for_new_day(game, acting_user=None, now=now)
    post = _publish_daily_post_at_day_start(game, day, acting_user=acting_user, now=now) if day >= 2 else None
    days = _replan(game, ensure_through=day + 1)
    counts = _sync_clock_events(game, days, actor=None, now=now)
    record_event(game, "clock.day_started", actor=acting_user, at=now,
                 payload={"day": day, "inboxes": [i.pk for i in rolled], "post": post.pk if post else None,
                          **counts})
    return game_day_of(game, day)


@transaction.atomic
def do_begin_night(game: Game, day: int, *, acting_user=None, now: datetime | None = None):
    """Close game day ``day`` and start its night (the ``night_start`` event, after the day's last voting and court
    deadline, L-DAY-3): the ``GameDay`` gets ``ended_at``. Returns it. Raises ``WrongState`` (not the current day,
    already night, game over). Site or Procurator."""

    now = now or timezone.now()
    _check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    _check_game_not_over(game)
    plan = GameDay.objects.select_for_update().filter(game=game, number=day).first()
    if plan is None or game.day_number != day:
        raise WrongState(_("Day %(day)d is not the current day.") % {"day": day}, rule="L-DAY-1")
    if plan.ended_at is not None:
        raise WrongState(_("Night %(night)d has already started.") % {"night": day}, rule="L-DAY-1")
    plan.ended_at = now
    plan.save(update_fields=["ended_at"])
    record_event(game, "clock.night_started", actor=acting_user, at=now, payload={"day": day})
    return plan


@transaction.atomic
def do_replan_clock(game: Game, *, acting_user=None, reason: str, now: datetime | None = None,
                    running: int | None = None) -> dict:
    """Re-derive the plan of ``game`` after a deadline of the day changed (a voting scheduled, extended or
    rescheduled; a court deadline; a judge election) or when the night start finds one pending: the night start
    is held after the day's latest deadline, and the night's end, the daily post's draft and the next day's start
    move with it, in order (``cities.clock.night_after``). ``running``: the scheduled event whose handler calls
    this (its successor is laid out). Records ``clock.replanned`` {reason, moved, created, cancelled, changes}
    when anything moved. Returns the counts (empty without a plan). By the site or the staff whose change
    caused it; checks nothing else (the caller did)."""
    now = now or timezone.now()
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status == GameStatus.FINISHED or game_day_of(game, max(game.day_number, 1)) is None:
        return {}
    days = _replan(game)
    counts = _sync_clock_events(game, days, actor=acting_user, now=now, running=running)
    if counts["moved"] or counts["created"] or counts["cancelled"]:
        today = next((d for d in days if d.number == game.day_number), None)
        record_event(game, "clock.replanned", actor=acting_user, at=now, payload={
            "reason": reason, **counts,
            "night_starts_at": today.night_starts_at.isoformat() if today and today.night_starts_at else None})
    return counts


def night_cutoff(game: Game, night: int) -> datetime | None:
    """The planned end of ``night`` (aware UTC; ``GameDay.night_ends_at``), or None without a plan: decisions,
    checks and godfather votes of the night are cut off there, however late the resolution runs (DESIGN.md
    "The clock", L-NIGHT-6)."""
    plan = game_day_of(game, night)
    return plan.night_ends_at if plan is not None else None


def pending_day_deadline(game: Game, since: datetime, day: int) -> datetime | None:
    """The latest pending voting, court or judge election deadline of ``game`` due from ``since`` until the
    planned start of day ``day + 1`` before any hold (its fixed start, or the day start after day ``day``'s end:
    the bound ``_replan`` uses), i.e. the night of ``day`` waits for it; or None."""
    from . import clock

    plan, following = game_day_of(game, day), game_day_of(game, day + 1)
    if following is not None and (following.started_at is not None or following.start_fixed):
        before = following.starts_at
    elif plan is not None:
        before = clock.next_day_start(_zone(game), game.day_start, plan.ends_at)
    else:
        before = since + timedelta(days=MAX_SCHEDULE_DAYS)
    return _deadline_after(game, since, before)


def _publish_daily_post_at_day_start(game: Game, day: int, *, acting_user, now: datetime) -> PublicPost:
    """The day start's publication of the daily post (L-POST-2): at once when the draft is at least
    ``game.daily_post_edit_minutes`` old (or the Procurator starts the day), else a ``daily_post_publish``
    event publishes it when the Procurator's edit window has passed (after an outage the draft, the resolution and
    the day start may run in one tick). Returns the post (unpublished while it waits)."""
    plan = _daily_day(game, day)
    post = plan.post if plan.post_id is not None else do_draft_daily_post(game, day, acting_user=None, now=now)
    ready_at = post.created_at + timedelta(minutes=game.daily_post_edit_minutes)
    if acting_user is not None or post.published_at is not None or ready_at <= now:
        return do_publish_daily_post(game, day, acting_user=acting_user, now=now)
    PublicPost.objects.filter(pk=post.pk).update(publish_at=ready_at)
    if not ScheduledEvent.objects.filter(game=game, kind="daily_post_publish", payload__day=day,
                                         cancelled_at__isnull=True).exists():
        ScheduledEvent.objects.create(game=game, kind="daily_post_publish", due_at=ready_at, payload={"day": day},
                                      created_at=now)
    record_event(game, "daily_post.held", actor=None, at=now,
                 payload={"day": day, "post": post.pk, "drafted_at": post.created_at.isoformat(),
                          "publish_at": ready_at.isoformat()})
    return post


# --------------------------------------------------------------------------------------------------------------
# The daily post (issue 6 item 4; RULES.md L-POST-2, L-DEATH-2)
# --------------------------------------------------------------------------------------------------------------

def _daily_day(game: Game, day: int):

    if day < 2:
        raise InvalidInput(_("The first daily post is published on day 2."), rule="L-POST-2")
    plan = GameDay.objects.select_for_update().filter(game=game, number=day).first()
    if plan is None:
        raise WrongState(_("Day %(day)d is not planned.") % {"day": day}, rule="L-POST-2")
    return plan


@transaction.atomic
def do_draft_daily_post(game: Game, day: int, *, acting_user=None, now: datetime | None = None) -> PublicPost:
    """Draft the daily post published at the start of game ``day`` (L-POST-2): the site's record
    (``cities.daily_post.daily_post_record``: night victims with alignment, yesterday's results per city, the
    judges, the scoreboard) followed by the Procurator's free text written so far. Stored as an unpublished daily
    ``PublicPost`` (the author is the site) linked to the ``GameDay``; only the Procurator sees it before
    publication. Idempotent: when the draft exists it is returned unchanged (the Procurator's edits are kept).
    By the site at night end (``daily_post_draft`` event) or the Procurator. Raises ``NotAllowed``,
    ``InvalidInput`` (day < 2) or ``WrongState`` (day not planned)."""

    now = now or timezone.now()
    _check_procurator(game, acting_user)
    game = Game.objects.get(pk=game.pk)
    plan = _daily_day(game, day)
    if plan.post_id is not None:
        return plan.post
    record = daily_post_record(game, day, now)
    body = record.body + (f"\n\n{plan.free_text.strip()}" if plan.free_text.strip() else "")
    post = do_create_public_post(game, kind=PostKind.DAILY, title=record.title, body=body[:MAX_POST_LENGTH],
                                 acting_user=None, publish=False, now=now)
    post.publish_at = plan.starts_at
    post.save(update_fields=["publish_at"])
    plan.post = post
    plan.announced = record.announced
    plan.save(update_fields=["post", "announced"])
    record_event(game, "daily_post.drafted", actor=acting_user, at=now,
                 payload={"day": day, "post": post.pk, "announced": record.announced})
    return post


@transaction.atomic
def do_publish_daily_post(game: Game, day: int, *, acting_user=None, now: datetime | None = None) -> PublicPost:
    """Publish the daily post of game ``day`` at the day start (L-POST-2), drafting it first if the draft is
    missing, and announce the alignment of the dead it names (L-DEATH-2: ``alignment_announced``). Exactly once:
    a published post is returned as it is. Site (the ``day_start`` or ``daily_post_publish`` event) or the
    Procurator ("publish now", once the day has started: the site otherwise waits for the edit window).
    Raises ``NotAllowed``, ``InvalidInput`` (day < 2) or ``WrongState`` (day not planned or not started)."""
    now = now or timezone.now()
    _check_procurator(game, acting_user)
    game = Game.objects.get(pk=game.pk)
    plan = _daily_day(game, day)
    if acting_user is not None and plan.started_at is None and game.status != GameStatus.FINISHED:
        raise WrongState(_("The daily post is published when day %(day)d starts.") % {"day": day}, rule="L-POST-2")
    post = plan.post if plan.post_id is not None else do_draft_daily_post(game, day, acting_user=acting_user, now=now)
    plan.refresh_from_db()
    post = PublicPost.objects.select_for_update().get(pk=post.pk)
    if post.published_at is None:
        post = do_publish_post(post, acting_user=acting_user, now=now)
    Resident.objects.filter(pk__in=plan.announced, alignment_announced=False).exclude(status="alive").update(
        alignment_announced=True)
    return post


def _editable_daily_post(post: PublicPost, acting_user) -> PublicPost:
    if acting_user is None:
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-POST-2")
    _check_procurator(post.game, acting_user)
    post = PublicPost.objects.select_for_update().select_related("game").get(pk=post.pk)
    if post.kind != PostKind.DAILY:
        raise InvalidInput(_("This is not a daily post."), rule="L-POST-2")
    return post


@transaction.atomic
def do_edit_daily_post(post: PublicPost, *, title: str, body: str, acting_user,
                       now: datetime | None = None) -> PublicPost:
    """The Procurator edits the drafted daily ``post`` before its publication (L-POST-2): new title and text
    (Markdown). Raises ``NotAllowed`` (not the Procurator), ``InvalidInput`` (empty, too long, not a daily post)
    or ``WrongState`` (published: append instead)."""
    now = now or timezone.now()
    post = _editable_daily_post(post, acting_user)
    if post.published_at is not None:
        raise WrongState(_("The daily post is published: you can only append to it now."), rule="L-POST-2")
    post.title = _clean_text(title, field=_("title"), max_length=200)
    post.body = _clean_text(body, field=_("text"), max_length=MAX_POST_LENGTH)
    post.body_html = render_markdown(post.body)
    post.save(update_fields=["title", "body", "body_html"])
    record_event(post.game, "daily_post.edited", actor=acting_user, at=now,
                 payload={"post": post.pk, "length": len(post.body)})
    return post


@transaction.atomic
def do_append_to_daily_post(post: PublicPost, text: str, *, acting_user, now: datetime | None = None) -> PublicPost:
    """The Procurator appends ``text`` (Markdown) to the published daily ``post`` (L-POST-2), under a line with
    the time in the game's zone. Raises ``NotAllowed``, ``InvalidInput`` (empty, too long) or ``WrongState``
    (not published yet: edit the draft instead)."""
    now = now or timezone.now()
    post = _editable_daily_post(post, acting_user)
    if post.published_at is None:
        raise WrongState(_("The daily post is not published yet: edit the draft instead."), rule="L-POST-2")
    text = _clean_text(text, field=_("text"), max_length=MAX_POST_LENGTH)
    with translation.override(post.game.language):
        heading = _("Added at %(time)s") % {"time": _local_time(post.game, now)}
    body = f"{post.body}\n\n---\n\n*{heading}*\n\n{text}"
    if len(body) > MAX_POST_LENGTH:
        raise InvalidInput(_("The daily post would become too long."), rule="L-POST-2")
    post.body = body
    post.body_html = render_markdown(body)
    post.save(update_fields=["body", "body_html"])
    record_event(post.game, "daily_post.appended", actor=acting_user, at=now,
                 payload={"post": post.pk, "length": len(text)})
    return post


@transaction.atomic
def do_set_daily_post_text(game: Game, day: int, text: str, *, acting_user, now: datetime | None = None):
    """The Procurator writes the free text (press, contests) of the daily post of game ``day`` before the site
    drafts it (L-POST-2); the draft appends it to the record. Empty text clears it. Returns the ``GameDay``.
    Raises ``NotAllowed``, ``InvalidInput`` (day < 2, too long) or ``WrongState`` (the draft exists: edit it)."""
    now = now or timezone.now()
    if acting_user is None:
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-POST-2")
    _check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    _check_game_not_over(game)
    plan = _daily_day(game, day)
    if plan.post_id is not None:
        raise WrongState(_("The daily post is drafted already: edit the draft instead."), rule="L-POST-2")
    text = (text or "").strip()
    if len(text) > MAX_POST_LENGTH // 2:
        raise InvalidInput(_("The %(field)s is too long: %(length)d characters, at most %(max)d.")
                           % {"field": _("text"), "length": len(text), "max": MAX_POST_LENGTH // 2})
    plan.free_text = text
    plan.save(update_fields=["free_text"])
    record_event(game, "daily_post.text_set", actor=acting_user, at=now, payload={"day": day, "length": len(text)})
    return plan
