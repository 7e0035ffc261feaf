"""Recruitment: the recruitment post, sign-ups, forming the cities, the city lists."""
from __future__ import annotations

import random
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from inboxes.rendering import render_markdown
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import rule_id
from roles import draw

from .models import (
    City,
    Game,
    GameStatus,
    PostKind,
    PublicPost,
    Resident,
    Signup,
    StaffRole,
)
from .resident_services import do_set_resident_flags  # noqa: F401  (public name kept for callers)
from .services import (
    MAX_POST_LENGTH,
    _clean_text,
    check_procurator,
    do_add_city,
    do_create_public_post,
    do_seat_resident,
)
from .staff_kinds import host_label

# --------------------------------------------------------------------------------------------------------------
# Recruitment : the recruitment post, sign-ups, cities, the city lists
# --------------------------------------------------------------------------------------------------------------

def recruitment_post_of(game: Game) -> PublicPost | None:
    """The recruitment post of ``game``, or None."""
    return PublicPost.objects.filter(game=game, kind=PostKind.RECRUITMENT).first()


@transaction.atomic
def do_publish_recruitment_post(game: Game, *, acting_user, title: str = "", body: str = "",
                                now: datetime | None = None) -> PublicPost:
    """Publish the recruitment post of ``game`` (public to everyone). Procurator only.

    ``title`` defaults to the game's title; ``body`` to its rules text (or a short invitation). Later steps
    append the city lists and the draw commitment to it. Raises ``NotAllowed``,
    ``WrongState`` (the game has started) or ``InvalidInput`` (already published, too long).
    """
    now = now or timezone.now()
    check_procurator(game, acting_user)
    if game.status not in (GameStatus.RECRUITMENT, GameStatus.SETUP):
        raise WrongState(_("The recruitment post is published before the game starts."),
                         rule=rule_id(game, "recruitment_post"))
    title = (title or "").strip() or game.title
    body = (body or "").strip() or game.rules_text or _("Sign up on the game page.")
    return do_create_public_post(game, kind=PostKind.RECRUITMENT, title=title, body=body, acting_user=acting_user,
                                 now=now)


@transaction.atomic
def do_append_to_recruitment_post(game: Game, text: str, *, acting_user, now: datetime | None = None) -> PublicPost:
    """Append ``text`` (Markdown) to the published recruitment post of ``game`` (later the city lists
    and the draw commitment). Procurator or the site (``acting_user`` None). Audited with the appended text's
    length. Raises ``WrongState`` when there is no published recruitment post, ``InvalidInput`` when too long."""
    now = now or timezone.now()
    check_procurator(game, acting_user)
    post = PublicPost.objects.select_for_update().filter(game=game, kind=PostKind.RECRUITMENT).first()
    if post is None or post.published_at is None:
        raise WrongState(_("Publish the recruitment post first."), rule=rule_id(game, "recruitment_post"))
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
#: with a message for the player (the play bans of ``sanctions``).
SIGNUP_GUARDS: list = []


#: Checks a signed-up player must still pass when the cities are formed, registered by other apps:
#: ``guard(user, game, now)`` returns None, or why the player is not seated, a sentence naming them for the
#: Procurator in the game's language (the play bans of ``sanctions``: a player banned after signing up).
SEATING_GUARDS: list = []


def seating_refusal(user, game: Game, now: datetime) -> str | None:
    """Why the signed-up ``user`` may not be seated in ``game`` at ``now`` (``SEATING_GUARDS``), or None."""
    for guard in SEATING_GUARDS:
        reason = guard(user, game, now)
        if reason:
            return reason
    return None


class FormedCities(list):
    """The cities ``do_form_cities`` formed, in order, with ``left_out``: (signed-up user, why not seated) for
    each player a seating guard refused."""

    def __init__(self, cities, left_out):
        super().__init__(cities)
        self.left_out = left_out


def _signups_open(game: Game) -> bool:
    return game.status == GameStatus.RECRUITMENT and game.signups_closed_at is None


@transaction.atomic
def do_sign_up(game: Game, *, acting_user, now: datetime | None = None) -> Signup:
    """Sign ``acting_user`` up for ``game`` (one click). Returns the active Signup.

    Raises ``NotAllowed`` for an anonymous user, staff of the game (staff are not residents) or a player
    under a running play ban (the message says why and until when), ``WrongState`` when signups are
    closed or the user is already signed up.
    """
    now = now or timezone.now()
    if acting_user is None or not acting_user.is_authenticated:
        raise NotAllowed(_("Log in to sign up."))
    game = Game.objects.select_for_update().get(pk=game.pk)
    if not _signups_open(game):
        raise WrongState(_("Signups for this game are closed."), rule=rule_id(game, "city_formation"))
    if StaffRole.objects.filter(game=game, user=acting_user).exists():
        raise NotAllowed(_("Staff of a game cannot sign up to play in it."), rule=rule_id(game, "staff_not_players"))
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
    later is replaced) or the user is not signed up.
    """
    now = now or timezone.now()
    if acting_user is None or not acting_user.is_authenticated:
        raise NotAllowed(_("Log in to sign up."))
    game = Game.objects.select_for_update().get(pk=game.pk)
    if not _signups_open(game):
        raise WrongState(_("Signups are closed; ask the %(host)s of the game to replace you.")
                         % {"host": host_label(game)}, rule=rule_id(game, "replacement"))
    signup = Signup.objects.select_for_update().filter(game=game, user=acting_user, withdrawn_at__isnull=True).first()
    if signup is None:
        raise WrongState(_("You are not signed up."))
    signup.withdrawn_at = now
    signup.save(update_fields=["withdrawn_at"])
    record_event(game, "signup.withdrawn", actor=acting_user, at=now, payload={"signup": signup.pk})
    return signup


@transaction.atomic
def do_close_signups(game: Game, *, acting_user, now: datetime | None = None) -> Game:
    """Close the signups of ``game`` and move it to setup (the Procurator then forms the cities).
    Procurator only. Raises ``NotAllowed`` or ``WrongState`` (already closed, not in recruitment)."""
    now = now or timezone.now()
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    if not _signups_open(game):
        raise WrongState(_("Signups for this game are closed."), rule=rule_id(game, "city_formation"))
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
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status != GameStatus.SETUP or game.signups_closed_at is None:
        raise WrongState(_("Close the signups first."), rule=rule_id(game, "city_formation"))
    if game.lists_published_at is not None:
        raise WrongState(_("The city lists are published; the cities cannot change any more."),
                         rule=rule_id(game, "city_formation"))
    return game


@transaction.atomic
def do_form_cities(game: Game, *, acting_user, names: list[str] | None = None, rng: random.Random | None = None,
                   now: datetime | None = None) -> list[City]:
    """Form the cities of ``game`` from its active sign-ups by a balanced random split: the sign-ups
    are shuffled with ``rng`` (default ``system_rng()``, i.e. ``secrets.SystemRandom()``) and dealt into ``planned_city_count`` cities
    whose sizes differ by at most 1; each player is seated under their public name. ``names`` name the cities
    (default "City 1", ...). Procurator only, after the signups close and before any city exists.

    A signed-up player a seating guard refuses at ``now`` (``SEATING_GUARDS``: banned from playing since signing
    up) is left out, audited (``signup.not_seated``, with the reason) and listed in the result's ``left_out``.

    Returns the cities in order (``FormedCities``). Raises ``NotAllowed``, ``WrongState`` (signups open, cities
    exist, lists published) or ``InvalidInput`` (fewer than 2 players per city, wrong number of names).
    """
    now = now or timezone.now()
    game = _setup_before_lists(game, acting_user)
    if City.objects.filter(game=game).exists():
        raise WrongState(_("The cities are already formed."), rule=rule_id(game, "city_formation"))
    signups, left_out = [], []
    for signup in Signup.objects.filter(game=game, withdrawn_at__isnull=True).select_related("user").order_by("pk"):
        reason = seating_refusal(signup.user, game, now)
        if reason is None:
            signups.append(signup)
        else:
            left_out.append((signup.user, reason))
    count = planned_city_count(game, len(signups))
    if len(signups) < 2 * count:
        raise InvalidInput(_("%(players)d players are too few for %(cities)d cities (at least 2 per city).")
                           % {"players": len(signups), "cities": count}, rule=rule_id(game, "city_size"))
    names = [" ".join(n.split()) for n in (names or []) if n.strip()]
    if len({n.casefold() for n in names}) != len(names):
        raise InvalidInput(_("City names must differ from each other."), rule=rule_id(game, "city_formation"))
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
    for user, reason in left_out:
        record_event(game, "signup.not_seated", actor=acting_user, at=now, payload={"user": user.pk, "reason": reason})
    record_event(game, "cities.formed", actor=acting_user, at=now,
                 payload={"cities": [c.pk for c in cities], "players": len(signups)})
    return FormedCities(cities, left_out)


@transaction.atomic
def do_move_signup(signup: Signup, city: City, *, acting_user, now: datetime | None = None) -> Resident:
    """Put the player of ``signup`` into ``city`` by hand (forming cities by hand): seat them, or move
    their seat, before the city lists are published. Procurator only. Returns the Resident.

    Raises ``NotAllowed``, ``WrongState`` (signups open, lists published) or ``InvalidInput`` (a withdrawn
    sign-up, a player a seating guard refuses, a city of another game).
    """
    now = now or timezone.now()
    game = _setup_before_lists(signup.game, acting_user)
    if city.game_id != game.pk or signup.game_id != game.pk:
        raise InvalidInput(_("This city is not a city of this game."))
    if signup.withdrawn_at is not None:
        raise InvalidInput(_("This sign-up was withdrawn."))
    reason = seating_refusal(signup.user, game, now)
    if reason is not None:
        raise InvalidInput(reason)
    resident = Resident.objects.select_for_update().filter(game=game, user=signup.user_id).first()
    if resident is None:
        return do_seat_resident(city, signup.user, acting_user=acting_user, now=now)
    resident.city = city
    resident.save(update_fields=["city"])
    record_event(game, "resident.moved", actor=acting_user, at=now, payload={"resident": resident.pk, "city": city.pk})
    return resident


def city_lists_markdown(game: Game) -> str:
    """The city lists of ``game`` as Markdown, names only: a heading, then per city its name and its
    residents' names in alphabetical order."""
    lines = ["## " + _("City lists")]
    for city in City.objects.filter(game=game).order_by("number"):
        names = sorted(Resident.objects.filter(city=city).values_list("name", flat=True))
        lines.append(f"**{city.name}** ({len(names)}): " + ", ".join(names))
    return "\n\n".join(lines)


@transaction.atomic
def do_publish_city_lists(game: Game, *, acting_user, now: datetime | None = None) -> PublicPost:
    """Publish the city lists (names only) by appending them to the recruitment post. From then on
    the cities are fixed. Procurator only. Every active sign-up must be seated and every city must have at least
    2 residents. Returns the post. Raises ``NotAllowed``, ``WrongState`` or ``InvalidInput``."""
    now = now or timezone.now()
    game = _setup_before_lists(game, acting_user)
    cities = list(City.objects.filter(game=game))
    if not cities:
        raise WrongState(_("Form the cities first."), rule=rule_id(game, "city_formation"))
    seated = set(Resident.objects.filter(game=game).values_list("user_id", flat=True))
    waiting = Signup.objects.filter(game=game, withdrawn_at__isnull=True).exclude(user__in=seated).count()
    if waiting:
        raise InvalidInput(_("%(count)d signed-up players have no city yet.") % {"count": waiting},
                           rule=rule_id(game, "city_formation"))
    small = [c.name for c in cities if Resident.objects.filter(city=c).count() < 2]
    if small:
        raise InvalidInput(_("A city needs at least 2 residents: %(cities)s.") % {"cities": ", ".join(small)},
                           rule=rule_id(game, "city_size"))
    post = do_append_to_recruitment_post(game, city_lists_markdown(game), acting_user=acting_user, now=now)
    game.lists_published_at = now
    game.save(update_fields=["lists_published_at"])
    record_event(game, "cities.lists_published", actor=acting_user, at=now, payload={"post": post.pk})
    return post
