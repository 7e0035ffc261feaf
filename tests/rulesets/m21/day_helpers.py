"""Building M21 games through the services for the day, setup and policy tests (RULES.md Part 2)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model

from cities.models import Game, Resident
from cities.recruitment_services import do_close_signups, do_sign_up
from cities.scheduler import advance_clock
from inboxes.models import Message
from inboxes.posting import do_post_message
from rulesets.m21 import services
from rulesets.m21.models import M21Day, M21PostReceipt

#: 22:00 in London on a winter day (UTC = London time in January): the phase shift (M-SETUP-2).
START = datetime(2026, 1, 5, 22, 0, tzinfo=UTC)

#: A 7-player setup: 5 town (judge, cop, 3 citizens), 2 mafia (godfather, hooker).
SEVEN = {"citizen": 3, "judge": 1, "cop": 1, "godfather": 1, "hooker": 1}


def make_user(name: str):
    return get_user_model().objects.create_user(name.lower(), f"{name.lower()}@example.com", "x-secret-123",
                                                display_name=name)


@dataclass
class M21Table:
    """An M21 game in play: its host, co-host, players by name, and the clock's ``now``."""

    game: Game
    host: object
    cohost: object
    users: dict[str, object]
    now: datetime
    roles: dict[str, str] = field(default_factory=dict)

    def seat(self, name: str) -> Resident:
        return Resident.objects.get(game=self.game, name=name)

    def user_of_role(self, role: str):
        name = next(n for n, r in self.roles.items() if r == role)
        return self.users[name]

    def name_of_role(self, role: str) -> str:
        return next(n for n, r in self.roles.items() if r == role)

    def names_of_roles(self, *roles: str) -> list[str]:
        return [n for n, r in self.roles.items() if r in roles]

    @property
    def thread(self):
        return services.thread_of(self.game)

    def tick(self, minutes: float = 1) -> datetime:
        self.now += timedelta(minutes=minutes)
        return self.now

    def post(self, name: str, text: str) -> Message:
        """``name`` posts ``text`` in the game thread one second after the previous post."""
        self.tick(1 / 60)
        return do_post_message(self.thread, text, acting_user=self.users[name], now=self.now)

    def receipt(self, message: Message) -> list[dict]:
        receipt = M21PostReceipt.objects.filter(message=message).first()
        return receipt.lines if receipt else []

    def day(self, number: int | None = None) -> M21Day:
        qs = M21Day.objects.filter(game=self.game)
        return qs.get(number=number) if number else qs.order_by("-number").first()

    def run_clock(self, until: datetime) -> None:
        self.now = until
        advance_clock(until, game=self.game)


def build_game(names=("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace"), setup=SEVEN, *, seed: int = 1,
               cop_insanity=0, start_day=True, slug="m21-test", first_day_starts_at: datetime = START,
               **create) -> M21Table:
    """An M21 game created, signed up, set up with ``setup``, dealt with ``random.Random(seed)`` and, with
    ``start_day``, at the start of day 1 (``first_day_starts_at``, by default 22:00 London)."""
    host, cohost = make_user("Host"), make_user("Cohost")
    now = min(START, first_day_starts_at) - timedelta(days=2)
    game = services.do_create_m21_game(title="Prohibition Wars", slug=slug, acting_user=host, now=now, **create)
    services.do_add_cohost(game, cohost, acting_user=host, now=now)
    users = {name: make_user(name) for name in names}
    for user in users.values():
        do_sign_up(game, acting_user=user, now=now)
    do_close_signups(game, acting_user=host, now=now)
    game.refresh_from_db()
    services.do_choose_m21_setup(game, setup, cop_insanity=cop_insanity, acting_user=host, now=now)
    roles = services.do_deal_m21_roles(game, first_day_starts_at=first_day_starts_at, acting_user=host,
                                       rng=random.Random(seed),
                                       now=now)
    table = M21Table(game=game, host=host, cohost=cohost, users=users, now=now, roles=roles)
    if start_day:
        table.run_clock(first_day_starts_at)
    game.refresh_from_db()
    return table
