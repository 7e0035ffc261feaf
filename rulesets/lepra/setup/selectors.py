"""What the Procurator's setup page of a Lepra game shows (L-STAFF-1, L-STAFF-6): names, the numbers he named,
offers with "declined" but never a reason; never the notary lists or alignments."""
from __future__ import annotations

from dataclasses import dataclass

from cities.models import City, Game, GameStatus, PostKind, PublicPost, Resident, Signup, StaffRole
from cities.selectors import signups_open
from rulesets.lepra.models import CommissarOffer, MafiaDraw
from rulesets.lepra.staff_kinds import StaffKind

from .services import city_commissar_state


@dataclass
class CitySetup:
    """One city on the Procurator's setup page: names, the numbers he named, the commissar offers."""

    city: City
    residents: list[Resident]
    tribune: object
    numbers: list[int]
    offers: list
    commissar_state: str


@dataclass
class SetupState:
    """What the Procurator's setup page shows and which step buttons apply (L-STAFF-1). Holds no alignment,
    no notary list and no decline reason."""

    recruitment_post: PublicPost | None
    signups: list[Signup]
    unseated: list[Signup]
    cities: list[CitySetup]
    has_consigliere: bool
    has_arbiter: bool
    draw_started: bool
    commitment: str
    numbers_named: bool
    can_publish_post: bool
    can_close_signups: bool
    can_form_cities: bool
    can_move: bool
    can_publish_lists: bool
    can_start_draw: bool
    can_name_numbers: bool
    can_offer: bool


def setup_state(game: Game) -> SetupState:
    """The setup page of ``game`` for its Procurator (see SetupState)."""

    post = PublicPost.objects.filter(game=game, kind=PostKind.RECRUITMENT).first()
    signups = list(Signup.objects.filter(game=game, withdrawn_at__isnull=True).select_related("user"))
    residents = list(Resident.objects.filter(game=game).order_by("name"))
    seated = {r.user_id for r in residents}
    roles = list(StaffRole.objects.filter(game=game).select_related("user"))
    mafia_draw = MafiaDraw.objects.filter(game=game).only("id", "commitment", "numbers", "game_id").first()
    numbers = (mafia_draw.numbers or {}) if mafia_draw else {}
    offers = list(CommissarOffer.objects.filter(game=game).select_related("candidate").only(
        "id", "city_id", "number", "offered_at", "answered_at", "accepted", "candidate__name"))
    cities = []
    for city in City.objects.filter(game=game).order_by("number"):
        cities.append(CitySetup(
            city=city,
            residents=[r for r in residents if r.city_id == city.pk],
            tribune=next((r for r in roles if r.kind == StaffKind.TRIBUNE and r.city_id == city.pk), None),
            numbers=numbers.get(str(city.number), []),
            offers=[o for o in offers if o.city_id == city.pk],
            commissar_state=city_commissar_state(city),
        ))
    setup = game.status == GameStatus.SETUP
    before_lists = setup and game.lists_published_at is None
    has_consigliere = any(r.kind == StaffKind.CONSIGLIERE for r in roles)
    named = bool(mafia_draw and mafia_draw.numbers is not None)
    return SetupState(
        recruitment_post=post,
        signups=signups,
        unseated=[s for s in signups if s.user_id not in seated],
        cities=cities,
        has_consigliere=has_consigliere,
        has_arbiter=any(r.kind == StaffKind.ARBITER for r in roles),
        draw_started=mafia_draw is not None,
        commitment=mafia_draw.commitment if mafia_draw else "",
        numbers_named=named,
        can_publish_post=post is None and game.status in (GameStatus.RECRUITMENT, GameStatus.SETUP),
        can_close_signups=signups_open(game),
        can_form_cities=before_lists and not cities,
        can_move=before_lists and bool(cities),
        can_publish_lists=before_lists and bool(cities) and post is not None,
        can_start_draw=setup and game.lists_published_at is not None and mafia_draw is None and has_consigliere,
        can_name_numbers=setup and mafia_draw is not None and not named,
        can_offer=setup and named,
    )
