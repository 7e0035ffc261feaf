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
from django.utils import timezone
from django.utils.translation import gettext as _

from inboxes.policies import forget_viewer_cache, holds_role
from inboxes.rendering import render_markdown
from roles import draw

from .errors import InvalidInput, NotAllowed, WrongState
from .models import (
    City, Game, GameEvent, GameStatus, PostKind, PublicPost, Resident, Ruleset, ScheduledEvent, Signup, StaffKind,
    StaffRole,
)

MAX_POST_LENGTH = 50_000
#: How far ahead a post may be scheduled, in days (a game lasts 10-14 days, L-DAY-6; recruitment comes first).
MAX_SCHEDULE_DAYS = 366


def record_event(game: Game, kind: str, *, actor, at: datetime, payload: dict | None = None) -> GameEvent:
    """Write one audit row (``GameEvent``). Call inside the service's transaction; ``actor`` None = scheduler."""
    return GameEvent.objects.create(game=game, kind=kind, actor=actor, at=at, payload=payload or {})


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
    residents each (L-CITY-2: 20 by default). ``day_start`` is a wall-clock time in ``time_zone`` (L-DAY-1,
    default 10:00). Returns the Game. Raises ``InvalidInput`` for an empty title, a taken or reserved slug, an
    unknown time zone or an impossible city setting.
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
    if ruleset not in Ruleset.values:
        raise InvalidInput(_("Unknown ruleset: %(r)s.") % {"r": ruleset})
    time_zone = time_zone or ("Europe/Moscow" if ruleset == Ruleset.LEPRA else "Europe/London")
    try:
        ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(_("Unknown time zone: %(tz)s.") % {"tz": time_zone}) from None
    if Game.objects.filter(slug=slug).exists():
        raise InvalidInput(_("A game with the address %(slug)s already exists.") % {"slug": slug})
    game = Game.objects.create(title=title, slug=slug, ruleset=ruleset, time_zone=time_zone, rules_text=rules_text,
                               city_count=city_count, city_size=city_size, day_start=day_start or time(10, 0))
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
    if kind not in StaffKind.values or kind == StaffKind.PROCURATOR:
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
def do_set_resident_flags(resident: Resident, *, acting_user, now: datetime | None = None, **flags) -> Resident:
    """Set secret or role flags of ``resident`` (alignment, is_commissar, is_judge, is_godfather) as a draw or an
    election decided. Only the site (``acting_user`` None: the draws and elections of roles/) calls this;
    the named DB constraints reject a second commissar, judge or godfather in a city.
    """
    now = now or timezone.now()
    if acting_user is not None:
        raise NotAllowed(_("Roles are set by the site's draws and elections, not by hand."), rule="L-ASSIGN-3")
    allowed = {"alignment", "is_commissar", "is_judge", "is_godfather"}
    unknown = set(flags) - allowed
    if unknown:
        raise InvalidInput(f"Unknown resident flags: {sorted(unknown)}")
    for key, value in flags.items():
        setattr(resident, key, value)
    resident.save(update_fields=list(flags))
    # The payload names the flags but not their values: the audit log must not become a list of the mafia.
    # The audit log will be browsed by staff (issue 7): a row naming the resident of a secret flag (alignment,
    # commissar, godfather) would be a list of the mafia for the Procurator. Only the public judge flag names
    # its resident; the secret ones are recorded without anyone's name (the draws audit themselves).
    public = {key: value for key, value in flags.items() if key == "is_judge"}
    payload = {"resident": resident.pk, "flags": sorted(public)} if public and len(public) == len(flags) else {"flags": sorted(flags)}
    record_event(resident.game, "resident.flags", actor=None, at=now, payload=payload)
    return resident


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


def _signups_open(game: Game) -> bool:
    return game.status == GameStatus.RECRUITMENT and game.signups_closed_at is None


@transaction.atomic
def do_sign_up(game: Game, *, acting_user, now: datetime | None = None) -> Signup:
    """Sign ``acting_user`` up for ``game`` (one click, L-CITY-1). Returns the active Signup.

    Raises ``NotAllowed`` for an anonymous user or staff of the game (staff are not residents, L-STAFF),
    ``WrongState`` when signups are closed or the user is already signed up.
    """
    now = now or timezone.now()
    if acting_user is None or not acting_user.is_authenticated:
        raise NotAllowed(_("Log in to sign up."))
    game = Game.objects.select_for_update().get(pk=game.pk)
    if not _signups_open(game):
        raise WrongState(_("Signups for this game are closed."), rule="L-CITY-1")
    if StaffRole.objects.filter(game=game, user=acting_user).exists():
        raise NotAllowed(_("Staff of a game cannot sign up to play in it."), rule="L-STAFF-1")
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
    lines = [f"## {_('City lists')}"]
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
