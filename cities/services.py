"""State changes of games, cities, residents, staff and public posts (DESIGN.md "services").

Each ``do_<verb>_<noun>(..., *, acting_user, now=None)`` runs in one transaction, checks the rules first, writes
a ``GameEvent`` audit row in the same transaction and raises a ``RuleViolation`` subclass (nothing changed) when
the rules refuse. ``acting_user=None`` means the scheduler or a trusted setup command.
"""
from __future__ import annotations

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from inboxes.policies import holds_role
from inboxes.rendering import render_markdown
from inboxes.viewer_reads import forget_viewer_cache
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import default_ruleset_key, get_ruleset, rule_id, ruleset_of

from .models import (
    City,
    Game,
    GameStatus,
    PostKind,
    PublicPost,
    Resident,
    ScheduledEvent,
    Signup,
    StaffRole,
)
from .staff_kinds import HOST_STAFF_KIND, host_label, staff_kind_label, staff_kinds_of

MAX_POST_LENGTH = 50_000
#: How far ahead a post may be scheduled, in days (a game lasts 10-14 days; recruitment comes first).
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
def do_create_game(*, title: str, slug: str, acting_user, ruleset: str | None = None,
                   time_zone: str | None = None, rules_text: str = "", city_count: int | None = None,
                   city_size: int = 20, day_start: time | None = None, now: datetime | None = None) -> Game:
    """Create a game in recruitment (signups open). ``acting_user`` becomes its Procurator.

    ``city_count`` (1..20) fixes the number of cities; otherwise the cities are about ``city_size`` (2..200)
    residents each (20 by default); a ruleset without cities (``RulesetSpec.has_cities`` false) takes no count. ``day_start`` is a wall-clock time in ``time_zone``;
    ``time_zone`` and ``day_start`` default to the ruleset's (``RulesetSpec.default_time_zone``, ``phase_plan``).
    ``ruleset``: a registered ruleset's key (None: ``settings.MAFIA_DEFAULT_RULESET``).
    Returns the Game. Raises ``UnknownRuleset`` (an ``InvalidInput``) for a ruleset that is not registered with
    ``kernel.rulesets``, ``InvalidInput`` for an empty title, a taken or reserved slug, an unknown time zone or an
    impossible city setting (a number of cities for a ruleset without cities among them).
    """
    now = now or timezone.now()
    title = _clean_text(title, field=_("title"), max_length=200)
    if slug in RESERVED_SLUGS:
        raise InvalidInput(_("The address %(slug)s is reserved; choose another.") % {"slug": slug})
    ruleset = ruleset or default_ruleset_key()
    spec = get_ruleset(ruleset)  # UnknownRuleset (an InvalidInput) unless registered
    if city_count is not None and not spec.has_cities:
        raise InvalidInput(_("This game's rules have no cities: leave the number of cities empty."))
    if city_count is not None and not 1 <= city_count <= MAX_CITIES:
        raise InvalidInput(_("The number of cities must be between 1 and %(max)d.") % {"max": MAX_CITIES},
                           rule=rule_id(ruleset, "city_formation"))
    if not 2 <= city_size <= MAX_CITY_SIZE:
        raise InvalidInput(_("A city has between 2 and %(max)d residents.") % {"max": MAX_CITY_SIZE},
                           rule=rule_id(ruleset, "city_size"))
    rules_text = (rules_text or "").strip()
    if len(rules_text) > MAX_POST_LENGTH:
        raise InvalidInput(_("The %(field)s is too long: %(length)d characters, at most %(max)d.")
                           % {"field": _("rules"), "length": len(rules_text), "max": MAX_POST_LENGTH})
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
        StaffRole.objects.create(game=game, kind=HOST_STAFF_KIND, user=acting_user)
        forget_viewer_cache(acting_user)
    record_event(game, "game.created", actor=acting_user, at=now, payload={"title": title, "ruleset": ruleset})
    return game


def check_procurator(game: Game, acting_user, *, rule: str = "procurator_only", site_may: bool = True) -> None:
    """Raise ``NotAllowed`` unless ``acting_user`` is the Procurator of ``game``; ``acting_user`` None (the site:
    the scheduler or a setup command) passes when ``site_may``. ``rule`` is the neutral key
    (``kernel.rulesets.rule_id``) of the rule the refusal cites."""
    if acting_user is None and site_may:
        return
    if acting_user is None or not holds_role(acting_user, game, HOST_STAFF_KIND):
        raise NotAllowed(_("Only the %(host)s of this game may do this.") % {"host": host_label(game)},
                         rule=rule_id(game, rule))


@transaction.atomic
def do_add_city(game: Game, *, name: str, acting_user, now: datetime | None = None) -> City:
    """Add the next city (numbered 1, 2, ...) to ``game`` before it starts and before its city lists are
    published (the published cities are final). Procurator only. Raises ``InvalidInput`` in a game whose ruleset
    has no cities (``RulesetSpec.has_cities``)."""
    now = now or timezone.now()
    check_procurator(game, acting_user)
    if not ruleset_of(game).has_cities:
        raise InvalidInput(_("This game has no cities."))
    if game.status not in (GameStatus.RECRUITMENT, GameStatus.SETUP):
        raise WrongState(_("Cities are formed before the game starts."), rule=rule_id(game, "city_formation"))
    if game.lists_published_at is not None:
        raise WrongState(_("The city lists are published; the cities cannot change any more."),
                         rule=rule_id(game, "city_formation"))
    name = " ".join(_clean_text(name, field=_("name"), max_length=100).split())
    if any(existing.casefold() == name.casefold() for existing in game.cities.values_list("name", flat=True)):
        raise InvalidInput(_("The game already has a city named %(name)s.") % {"name": name},
                           rule=rule_id(game, "city_formation"))
    number = game.cities.count() + 1
    city = City.objects.create(game=game, number=number, name=name)
    record_event(game, "city.added", actor=acting_user, at=now, payload={"city": city.pk, "name": name})
    return city


def check_seat_city(game: Game, city: City | None) -> None:
    """Check that a seat of ``game`` may be in ``city``: in one of the game's cities when its ruleset has cities
    (``RulesetSpec.has_cities``), in none otherwise. Raises ``InvalidInput`` (nothing changed) when it may not."""
    if ruleset_of(game).has_cities:
        if city is None:
            raise InvalidInput(_("A seat in this game is in one of its cities: choose the city."),
                               rule=rule_id(game, "city_formation"))
        if city.game_id != game.pk:
            raise InvalidInput(_("The city %(city)s is not in this game.") % {"city": city.name},
                               rule=rule_id(game, "city_formation"))
    elif city is not None:
        raise InvalidInput(_("This game has no cities: its seats are in none."))


@transaction.atomic
def do_seat_resident(city: City | None, user, *, acting_user, game: Game | None = None, name: str | None = None,
                     now: datetime | None = None) -> Resident:
    """Seat ``user`` as an honest, living resident of ``city`` (None in a game without cities: give ``game``).
    Procurator only.

    Raises ``NotAllowed`` when ``user`` is staff of the game (staff are not residents) and ``InvalidInput`` when
    they already hold a seat in the game, the name is taken, or the seat's city does not fit the game
    (``check_seat_city``: a game with cities seats everyone in one of them, a game without in none).
    """
    now = now or timezone.now()
    if game is None and city is None:
        raise InvalidInput(_("A seat is in a game: name the game or the city."))
    game = game or city.game
    check_procurator(game, acting_user)
    check_seat_city(game, city)
    if game.status not in (GameStatus.RECRUITMENT, GameStatus.SETUP):
        raise WrongState(_("Residents are seated before the game starts."), rule=rule_id(game, "city_formation"))
    if StaffRole.objects.filter(game=game, user=user).exists():
        raise NotAllowed(_("Staff of a game cannot be its residents."), rule=rule_id(game, "staff_not_players"))
    if Resident.objects.filter(game=game, user=user).exists():
        raise InvalidInput(_("%(name)s already has a seat in this game.") % {"name": user.public_name},
                           rule=rule_id(game, "city_formation"))
    name = _clean_text(name or user.public_name, field=_("name"), max_length=60)
    if Resident.objects.filter(game=game, name=name).exists():
        raise InvalidInput(_("The name %(name)s is taken in this game.") % {"name": name})
    resident = Resident.objects.create(game=game, city=city, user=user, name=name)
    forget_viewer_cache(user)
    record_event(game, "resident.seated", actor=acting_user, at=now,
                 payload={"resident": resident.pk, "city": city.pk if city else None})
    return resident


@transaction.atomic
def do_appoint_staff(game: Game, user, kind: str, *, acting_user, city: City | None = None,
                     now: datetime | None = None) -> StaffRole:
    """Give ``user`` the staff role ``kind`` in ``game`` (the Procurator appoints). Returns the role.

    ``kind`` is one the game's ruleset registers (``RulesetSpec.staff_kinds``) other than the host; a kind of its
    ``city_staff_kinds`` (a Tribune, say) is appointed for one ``city``, one per city, every other kind for none,
    one per game. Raises ``NotAllowed`` when ``user`` holds a seat, a sign-up or already a staff role in the game
    (one role per person) and ``InvalidInput`` when the role is taken, a city's role has no city (or another role
    has one), or the city is of another game.
    """
    now = now or timezone.now()
    check_procurator(game, acting_user)
    # Appointments of one game are serialized: two at once must not both find a role free.
    game = Game.objects.select_for_update(of=("self",)).get(pk=game.pk)
    if kind not in ruleset_of(game).staff_kinds or kind == HOST_STAFF_KIND:  # the ruleset's staff
        raise InvalidInput(_("Unknown staff role: %(kind)s.") % {"kind": kind})
    if ((kind in staff_kinds_of(game, "city_staff_kinds")) != (city is not None)
            or (city is not None and city.game_id != game.pk)):
        roles = ", ".join(staff_kind_label(game, k) for k in sorted(staff_kinds_of(game, "city_staff_kinds")))
        raise InvalidInput(_("%(roles)s: appointed for one city of the game; other roles for none.")
                           % {"roles": roles}, rule=rule_id(game, "city_staff"))
    if Resident.objects.filter(game=game, user=user).exists():
        raise NotAllowed(_("Residents of a game cannot be its staff."), rule=rule_id(game, "staff_not_players"))
    if Signup.objects.filter(game=game, user=user, withdrawn_at__isnull=True).exists():
        raise NotAllowed(_("%(name)s signed up to play; players cannot be staff of the same game.")
                         % {"name": user.public_name}, rule=rule_id(game, "staff_not_players"))
    held = StaffRole.objects.filter(game=game, user=user).first()
    if held is not None:
        # One role per person and game: a Procurator or Tribune who were also the Consigliere would learn the
        # mafia; a Tribune of two cities would hold two cities' secrets.
        raise NotAllowed(_("%(name)s already holds a staff role in this game: %(role)s.")
                         % {"name": user.public_name, "role": held.get_kind_display()},
                         rule=rule_id(game, "one_staff_role"))
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
    check_procurator(game, acting_user)
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
    """Create a public post of ``game``, published at once unless ``publish`` is False.

    Procurator only (``acting_user`` None: the site). Raises ``InvalidInput`` for an empty or over-long text and
    when the game already has its recruitment post.
    """
    now = now or timezone.now()
    check_procurator(game, acting_user)
    title = _clean_text(title, field=_("title"), max_length=200)
    body = _clean_text(body, field=_("text"), max_length=MAX_POST_LENGTH)
    if kind not in PostKind.values:
        raise InvalidInput(_("Unknown post kind: %(kind)s.") % {"kind": kind})
    if kind == PostKind.RECRUITMENT and PublicPost.objects.filter(game=game, kind=kind).exists():
        raise InvalidInput(_("This game already has its recruitment post."), rule=rule_id(game, "recruitment_post"))
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

    Procurator only. Creates the unpublished PublicPost and a ``publish_post``
    ScheduledEvent; the scheduler publishes it once (``cities.scheduler``). Returns the post.
    Raises ``NotAllowed``, ``InvalidInput`` (empty, too long, naive or past time) or ``WrongState`` (game over).
    """
    now = now or timezone.now()
    check_procurator(game, acting_user)
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
    """Publish ``post`` now (then everyone may read it). The scheduler passes ``acting_user=None``.

    Raises ``WrongState`` when it is already published, so a duplicate run can never publish twice.
    """
    now = now or timezone.now()
    check_procurator(post.game, acting_user)
    post = PublicPost.objects.select_for_update().get(pk=post.pk)
    if post.published_at is not None:
        raise WrongState(_("This post is already published."))
    post.published_at = now
    post.save(update_fields=["published_at"])
    record_event(post.game, "scheduler.post_published" if acting_user is None else "post.published",
                 actor=acting_user, at=now, payload={"post": post.pk})
    return post
