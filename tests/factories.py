"""factory_boy factories: a game at any phase as rows, for tests that need the state and not the way to it.

The services build a game the way a host does (sign-ups, cities formed, staff appointed, the draw, the
inboxes), with every audit row on the way: right where that behaviour is under test, slow as a fixture (a night
game is about 550 queries). These factories write the rows of the resulting state directly: users, the game,
cities, residents with their alignment and roles (and the dates the services give them), staff roles, sign-ups,
the standing inboxes with their memberships, and the draw's record. They write no audit row (``GameEvent``): the
history of the setup is not part of the state the tests read.

``tests/test_factories.py`` checks that a game built here has the same rows (residents, roles, staff, inboxes,
memberships) as the same game built through the services.
"""
from __future__ import annotations

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone
from django.utils.translation import gettext, override
from factory.django import DjangoModelFactory, Password

from cities.models import City, Game, GameStatus, Resident, Signup, StaffRole
from inboxes.models import Inbox, Membership

PASSWORD = "x-secret-123"


class UserFactory(DjangoModelFactory):
    """An account: ``username``, ``<username>@example.com``, a display name, the tests' password."""

    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"user{n:03d}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    display_name = factory.LazyAttribute(lambda u: u.username.replace("-", "_"))
    password = Password(PASSWORD)


class GameFactory(DjangoModelFactory):
    """A Lepra game (running on day 2 unless told), its sign-ups closed and city lists published."""

    class Meta:
        model = Game

    slug = factory.Sequence(lambda n: f"game-{n}")
    title = factory.LazyAttribute(lambda g: f"Game {g.slug}")
    rules_text = "Rules."
    status = GameStatus.RUNNING
    day_number = 2
    signups_closed_at = factory.LazyFunction(timezone.now)
    lists_published_at = factory.LazyFunction(timezone.now)


class CityFactory(DjangoModelFactory):
    """City ``number`` of ``game``, named "City <number>"."""

    class Meta:
        model = City

    game = factory.SubFactory(GameFactory)
    number = factory.Sequence(lambda n: n + 1)
    name = factory.LazyAttribute(lambda c: f"City {c.number}")


class StaffRoleFactory(DjangoModelFactory):
    """A staff role of ``game`` held by a new account."""

    class Meta:
        model = StaffRole

    game = factory.SubFactory(GameFactory)
    user = factory.SubFactory(UserFactory)


class SignupFactory(DjangoModelFactory):
    """A standing sign-up of ``user`` to ``game``."""

    class Meta:
        model = Signup

    signed_up_at = factory.LazyFunction(timezone.now)


class ResidentFactory(DjangoModelFactory):
    """A living resident of ``city``, named after the account's display name."""

    class Meta:
        model = Resident

    city = factory.SubFactory(CityFactory)
    game = factory.LazyAttribute(lambda r: r.city.game)
    user = factory.SubFactory(UserFactory)
    name = factory.LazyAttribute(lambda r: r.user.display_name)


class InboxFactory(DjangoModelFactory):
    """An inbox of ``game``; ``members`` (a list of residents) become its members from its creation."""

    class Meta:
        model = Inbox
        skip_postgeneration_save = True

    created_at = factory.LazyFunction(timezone.now)

    @factory.post_generation
    def members(self, create, extracted, **kwargs):
        if create and extracted:
            Membership.objects.bulk_create([Membership(inbox=self, resident=r, since=self.created_at)
                                            for r in extracted])


def in_language(game: Game, msgid: str, **params) -> str:
    """``msgid`` translated as the services title an inbox of ``game`` (its language), formatted with ``params``."""
    with override(game.language):
        text = gettext(msgid)
    return text % params if params else text


def standing_inboxes(game: Game, staff: dict, residents: list[Resident], *, now) -> list[Inbox]:
    """The inboxes the game's start opens (L-INBOX table; ``inboxes.services.do_open_game_inboxes``): per city the
    city square and each resident's personal inbox (organizer the city's Tribune), then the cemetery, the office,
    the police station (the commissars) and the Supreme Court (the judges). ``staff``: "procurator", "arbiter",
    "tribune<N>" -> StaffRole. Returns them in creation order."""
    made = []
    for city in City.objects.filter(game=game).order_by("number"):
        tribune = staff[f"tribune{city.number}"]
        of_city = [r for r in residents if r.city_id == city.pk]
        made.append(InboxFactory(game=game, kind="city", city=city, organizer=tribune, created_at=now, members=of_city,
                                 title=in_language(game, "%(city)s: city square", city=city.name)))
        for r in sorted(of_city, key=lambda r: r.name):
            made.append(InboxFactory(game=game, kind="personal", city=city, organizer=tribune, resident=r,
                                     created_at=now, members=[r],
                                     title=in_language(game, "Personal inbox: %(name)s", name=r.name)))
    for kind, organizer, members, msgid in (
            ("cemetery", staff["procurator"], [], "Cemetery"), ("office", staff["procurator"], [], "Office"),
            ("police", staff["procurator"], [r for r in residents if r.is_commissar], "Police station"),
            ("court", staff["arbiter"], [r for r in residents if r.is_judge], "Supreme Court")):
        made.append(InboxFactory(game=game, kind=kind, organizer=organizer, created_at=now, members=members,
                                 title=in_language(game, msgid)))
    return made
