"""Reads of games, cities, residents and posts for pages. Secrets (alignments, roles, the Consigliere) reach
pages only through ``inboxes.policies``; what is read here is public (L-CITY-4, L-INBOX-16)."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from inboxes import policies

from .models import City, Game, PostKind, PublicPost, Resident


def game_list() -> QuerySet[Game]:
    """All games, newest first."""
    return Game.objects.order_by("-created_at", "-id")


def game_get(slug: str) -> Game:
    """The game with ``slug``; raises Http404."""
    return get_object_or_404(Game, slug=slug)


def city_list(game: Game) -> list[City]:
    """The cities of ``game`` with their residents prefetched (``city.resident_list``), names only in effect:
    templates show name, life status and the public judge flag (L-CITY-4). 2 queries."""
    residents = Resident.objects.order_by("name").only("id", "name", "city_id", "status", "is_judge", "game_id")
    return list(City.objects.filter(game=game).order_by("number")
                .prefetch_related(Prefetch("residents", queryset=residents, to_attr="resident_list")))


def published_posts(game: Game) -> list[PublicPost]:
    """The published public posts of ``game``, recruitment post first, then newest first (L-INBOX-16)."""
    posts = list(PublicPost.objects.filter(game=game, published_at__isnull=False).order_by("-published_at", "-id"))
    return sorted(posts, key=lambda p: p.kind != PostKind.RECRUITMENT)


def post_get(viewer, game: Game, post_id: int) -> PublicPost:
    """A public post of ``game``: published ones for everyone, unpublished ones for the Procurator only.
    Raises Http404 otherwise (an unpublished post is indistinguishable from a missing one)."""
    post = PublicPost.objects.filter(game=game, pk=post_id).first()
    if post is None or (post.published_at is None and not policies.holds_role(viewer, game, "procurator")):
        raise Http404("No such post.")
    return post


@dataclass
class ResidentProfile:
    """What ``viewer`` may know about a resident (L-STAFF-6): alignment None when secret to them."""

    resident: Resident
    alignment: str | None
    is_commissar: bool
    is_godfather: bool
    is_self: bool


def resident_profile_for(viewer, game: Game, resident_id: int) -> ResidentProfile:
    """The profile of resident ``resident_id`` of ``game`` as ``viewer`` may see it. Raises Http404."""
    resident = get_object_or_404(Resident.objects.select_related("city", "game"), game=game, pk=resident_id)
    seat = policies.seat_in(viewer, game)
    return ResidentProfile(
        resident=resident,
        alignment=policies.visible_alignment(viewer, resident),
        is_commissar=policies.knows_commissar(viewer, resident),
        is_godfather=policies.knows_godfather(viewer, resident),
        is_self=seat is not None and seat.pk == resident.pk,
    )
