"""Build a Lepra game at any setup stage through the services (for tests of issue 3's setup and draws)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.utils.translation import gettext, override

from cities import recruitment_services, services
from cities.models import City, Game
from rulesets.lepra.setup import services as role_services
from rulesets.lepra.staff_kinds import StaffKind


def in_game_language(game: Game, msgid: str, **params) -> str:
    """``msgid`` as a page of ``game`` shows it (the game's language, DESIGN.md "Pages"), formatted with
    ``params``: English until the translations are filled in, then the translation."""
    with override(game.language):
        text = gettext(msgid)
    return text % params if params else text


STAGES = ["recruitment", "signed_up", "closed", "formed", "staffed", "lists", "drawn", "numbers"]


@dataclass
class SetupGame:
    """A game built by ``build_game``: its Procurator, players and staff accounts by name."""

    game: Game
    procurator: object
    players: list = field(default_factory=list)
    staff: dict = field(default_factory=dict)

    def refresh(self) -> Game:
        self.game = Game.objects.get(pk=self.game.pk)
        return self.game


def build_game(stage: str, *, slug: str = "setup-game", cities: int = 2, size: int = 10, seed: int = 1) -> SetupGame:
    """A game with ``cities`` x ``size`` players advanced to ``stage`` (see STAGES), randomness seeded."""
    rng = random.Random(seed)
    User = get_user_model()
    make = User.objects.create_user
    proc = make(f"{slug}-proc", f"{slug}-proc@example.com", "x-secret-123", display_name=f"{slug}_Proc")
    game = services.do_create_game(title=f"Game {slug}", slug=slug, acting_user=proc, city_count=cities,
                                   rules_text="Rules.")
    built = SetupGame(game=game, procurator=proc)
    recruitment_services.do_publish_recruitment_post(game, acting_user=proc)
    upto = STAGES.index(stage)
    if upto >= 1:
        for i in range(cities * size):
            user = make(f"{slug}-p{i:03d}", f"{slug}-p{i}@example.com", "x-secret-123", display_name=f"{slug}_P{i:03d}")
            recruitment_services.do_sign_up(game, acting_user=user)
            built.players.append(user)
    if upto >= 2:
        recruitment_services.do_close_signups(game, acting_user=proc)
    if upto >= 3:
        recruitment_services.do_form_cities(game, acting_user=proc, rng=rng, names=[f"City {n}" for n in range(1, cities + 1)])
    if upto >= 4:
        for city in City.objects.filter(game=game).order_by("number"):
            user = make(f"{slug}-t{city.number}", f"{slug}-t{city.number}@example.com", "x-secret-123",
                        display_name=f"{slug}_Tribune{city.number}")
            services.do_appoint_staff(game, user, StaffKind.TRIBUNE, city=city, acting_user=proc)
            built.staff[f"tribune{city.number}"] = user
        for kind in (StaffKind.ARBITER, StaffKind.CONSIGLIERE):
            user = make(f"{slug}-{kind}", f"{slug}-{kind}@example.com", "x-secret-123", display_name=f"{slug}_{kind}")
            services.do_appoint_staff(game, user, kind, acting_user=proc)
            built.staff[kind] = user
    if upto >= 5:
        recruitment_services.do_publish_city_lists(game, acting_user=proc)
    if upto >= 6:
        role_services.do_start_mafia_draw(game, acting_user=proc, rng=rng)
    if upto >= 7:
        from datetime import timedelta

        from rulesets.lepra.models import MafiaDraw

        committed = MafiaDraw.objects.get(game=game).committed_at
        role_services.do_name_mafia_numbers(game, None, acting_user=proc, rng=rng, now=committed + timedelta(seconds=1))
    built.refresh()
    return built
