"""Reads of games, cities, residents and posts for pages. Secrets (alignments, roles, the Consigliere) reach
pages only through ``inboxes.policies``; what is read here is public."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Prefetch, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from inboxes import knowledge, policies
from kernel.ruleset_parts import SeatRole
from kernel.rulesets import ruleset_of, seat_state_relations

from .models import City, Game, GameStatus, LifeStatus, PostKind, PublicPost, Resident, Signup


def game_list() -> QuerySet[Game]:
    """All games, newest first."""
    return Game.objects.order_by("-created_at", "-id")


def game_get(slug: str) -> Game:
    """The game with ``slug``; raises Http404."""
    return get_object_or_404(Game, slug=slug)


@dataclass
class SeatGroup:
    """The seats of a game without cities, listed where a game with cities lists a city: ``resident_list`` like a
    city's (``city_list``); no ``name`` or ``number``."""

    resident_list: list[Resident]
    name: str = ""
    number: int | None = None


def city_list(game: Game) -> list[City | SeatGroup]:
    """The cities of ``game`` with their residents prefetched (``city.resident_list``), with the seat state their
    ruleset keeps (``seat_state_relations``): templates show name, life status and the public positions
    (``public_seat_roles``). 2 queries. A game whose ruleset has no cities (``RulesetSpec.has_cities``) gives one
    ``SeatGroup`` of all its seats once it has any, [] before (1 query)."""
    residents = Resident.objects.order_by("name").select_related("game", *seat_state_relations())
    spec = ruleset_of(game)
    if spec.has_cities:
        cities = list(City.objects.filter(game=game).order_by("number")
                      .prefetch_related(Prefetch("residents", queryset=residents, to_attr="resident_list")))
    else:
        seats = list(residents.filter(game=game))
        cities = [SeatGroup(resident_list=seats)] if seats else []
    for city in cities:
        for resident in city.resident_list:
            resident.public_roles = spec.public_seat_roles(resident)
    return cities


def published_posts(game: Game) -> list[PublicPost]:
    """The published public posts of ``game``, recruitment post first, then newest first."""
    posts = list(PublicPost.objects.filter(game=game, published_at__isnull=False).order_by("-published_at", "-id"))
    return sorted(posts, key=lambda p: p.kind != PostKind.RECRUITMENT)


def post_get(viewer, game: Game, post_id: str) -> PublicPost:
    """The public post of ``game`` whose public id is ``post_id``: published ones for everyone, unpublished ones
    for the Procurator only. Raises Http404 otherwise (an unpublished post is indistinguishable from a missing
    one, and public ids do not count the scheduled posts between two published ones)."""
    post = PublicPost.objects.filter(game=game, public_id=str(post_id)).first()
    if post is None or (post.published_at is None and not policies.holds_role(viewer, game, "procurator")):
        raise Http404("No such post.")
    return post


@dataclass
class ResidentProfile:
    """What ``viewer`` may know about a resident: alignment None when secret to them; the secret ranks
    they may learn (``knowledge.known_seat_roles``) and the public positions (``public_seat_roles``: key, label)."""

    resident: Resident
    alignment: str | None
    known_roles: list[SeatRole]
    public_roles: list[tuple[str, Any]]
    is_self: bool


def resident_profile_for(viewer, game: Game, resident_id: str) -> ResidentProfile:
    """The profile of the resident of ``game`` whose public id is ``resident_id``, as ``viewer`` may see it.
    Raises Http404."""
    resident = get_object_or_404(Resident.objects.select_related("city", "game", *seat_state_relations()), game=game,
                                 public_id=resident_id)
    seat = policies.seat_in(viewer, game)
    return ResidentProfile(
        resident=resident,
        alignment=knowledge.visible_alignment(viewer, resident),
        known_roles=knowledge.known_seat_roles(viewer, resident),
        public_roles=ruleset_of(game).public_seat_roles(resident),
        is_self=seat is not None and seat.pk == resident.pk,
    )


def signups_open(game: Game) -> bool:
    """True while players may sign up for ``game`` (recruitment, signups not closed)."""
    return game.status == GameStatus.RECRUITMENT and game.signups_closed_at is None


def active_signup(viewer, game: Game) -> Signup | None:
    """``viewer``'s active sign-up for ``game`` or None (anonymous viewers: None)."""
    if not getattr(viewer, "is_authenticated", False):
        return None
    return Signup.objects.filter(game=game, user=viewer, withdrawn_at__isnull=True).first()


def public_signup_names(game: Game) -> list[str]:
    """The public names of ``game``'s active sign-ups in the order they came, while no seat is dealt yet, when its
    ruleset shows sign-ups publicly (``RulesetSpec.public_signups``, as a forum sign-up thread does); else []."""
    if not ruleset_of(game).public_signups or game.status not in (GameStatus.RECRUITMENT, GameStatus.SETUP) \
            or Resident.objects.filter(game=game).exists():
        return []
    return [s.user.public_name for s in Signup.objects.filter(game=game, withdrawn_at__isnull=True)
            .select_related("user").order_by("signed_up_at", "id")]


@dataclass
class Roster:
    """The living holders of a secret rank (``SeatRole.roster_heading`` set) that a viewer may know."""

    role: SeatRole
    residents: list[Resident]


def known_rosters(viewer, game: Game) -> list[Roster]:
    """The rosters of ``game``'s ranks that have one (``SeatRole.roster_heading``: a police station, say) as
    ``viewer`` may know them (``knowledge.knows_seat_role``: the Procurator all commissars, a Tribune their city's,
    commissars each other); living holders only, and nothing to a seat that is not living (the roster is of the
    living). Before the game is over only; empty rosters left out."""
    if game.status == GameStatus.FINISHED or not getattr(viewer, "is_authenticated", False):
        return []
    if not knowledge.in_living_rosters(viewer, game):
        return []
    spec = ruleset_of(game)
    rosters = []
    for role in spec.seat_roles:
        if role.roster_heading is None:
            continue
        # A killed holder leaves the roster; his page still says what he was.
        holders = (Resident.objects.filter(spec.seat_role_q(role.key), game=game, status=LifeStatus.ALIVE)
                   .select_related("city", "game", *seat_state_relations()))
        known = [r for r in holders if knowledge.knows_seat_role(viewer, r, role)]
        if known:
            rosters.append(Roster(role=role, residents=known))
    return rosters


