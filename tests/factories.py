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

from cities.models import City, Game, GameStatus, Resident, ScheduledEvent, Signup, StaffRole
from inboxes.models import Inbox, Membership, MembershipState, Message, ReadMark
from inboxes.rendering import render_markdown
from rulesets.lepra import seats
from rulesets.lepra.models import ImpeachmentDemand, ImpeachmentSignature, LepraSeat, NoConfidenceCase
from sanctions.models import PlayBan, PlayBanEvidence
from rulesets.lepra.models import Nomination, ProxyRequest, SpeechRequest, SuicideDeclaration

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
    """A living resident of ``city``, named after the account's display name. Lepra's ranks and their dates
    (``is_judge=True``, ``commissar_since=...``: the fields of ``rulesets.lepra.models.LepraSeat``) go to the
    resident's ``LepraSeat``, made with it."""

    class Meta:
        model = Resident

    city = factory.SubFactory(CityFactory)
    game = factory.LazyAttribute(lambda r: r.city.game)
    user = factory.SubFactory(UserFactory)
    name = factory.LazyAttribute(lambda r: r.user.display_name)

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        ranks = {name: kwargs.pop(name) for name in LEPRA_SEAT_FIELDS if name in kwargs}
        resident = super()._create(model_class, *args, **kwargs)
        if ranks:
            make_lepra_seats([(resident, ranks)])
        return resident


#: The fields of a Lepra seat a test may give a resident (``ResidentFactory``, ``make_lepra_seats``).
LEPRA_SEAT_FIELDS = ("is_commissar", "is_judge", "is_godfather", "is_spirit", "godfather_since", "godfather_until",
                     "commissar_since")


def make_lepra_seats(ranks_of: list[tuple[Resident, dict]]) -> list[LepraSeat]:
    """Write the ``LepraSeat`` rows of ``(resident, {field: value})`` pairs (fields of ``LEPRA_SEAT_FIELDS``), its
    copies of the resident's city, alignment and status taken from the resident; the residents' cached seats
    updated. One statement."""
    rows = []
    for resident, ranks in ranks_of:
        row = LepraSeat(resident=resident, city_id=resident.city_id, alignment=resident.alignment,
                        status=resident.status, **ranks)
        resident.lepra_seat = row
        rows.append(row)
    LepraSeat.objects.bulk_create(rows, update_conflicts=True, unique_fields=["resident"],
                                  update_fields=["city", "alignment", "status", *LEPRA_SEAT_FIELDS])
    return rows


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

    @factory.post_generation
    def banned(self, create, extracted, **kwargs):
        """``banned``: residents who read the inbox but may not post (L-INBOX-17), from its creation."""
        if create and extracted:
            Membership.objects.bulk_create([Membership(inbox=self, resident=r, state=MembershipState.BANNED,
                                                       since=self.created_at) for r in extracted])


class MessageFactory(DjangoModelFactory):
    """A message in ``inbox`` received at ``received_at``, its HTML rendered from ``body`` as the services do.
    With ``author_resident`` (and no other author given) the resident's account and name sign it, and the author's
    read mark moves to the message (``inboxes.posting.do_post_message``); with none, the site posts it
    ("Mafia Host", ``do_post_site_message``)."""

    class Meta:
        model = Message
        skip_postgeneration_save = True

    author_resident = None
    body = "Message."
    body_html = factory.LazyAttribute(lambda m: render_markdown(m.body))
    author_user = factory.LazyAttribute(lambda m: m.author_resident.user if m.author_resident else None)
    author_name = factory.LazyAttribute(lambda m: m.author_resident.name if m.author_resident else "Mafia Host")
    received_at = factory.LazyFunction(timezone.now)

    @factory.post_generation
    def read_mark(self, create, extracted, **kwargs):
        if create and self.author_user_id is not None:
            ReadMark.objects.update_or_create(user_id=self.author_user_id, inbox=self.inbox,
                                              defaults={"last_read_at": self.received_at})


class SpeechRequestFactory(DjangoModelFactory):
    """``resident``'s demand for a last word today (L-NOM-4): city, game and day from the seat."""

    class Meta:
        model = SpeechRequest

    game = factory.LazyAttribute(lambda r: r.resident.game)
    city = factory.LazyAttribute(lambda r: r.resident.city)
    day = factory.LazyAttribute(lambda r: r.resident.game.day_number)
    kind = "last_word"
    at = factory.LazyFunction(timezone.now)


class NominationFactory(DjangoModelFactory):
    """``nominator`` nominates ``nominee`` today (L-NOM-1), recorded as the site's message in the nominator's
    personal inbox, in the game's language, as ``rulesets.lepra.day.services.do_nominate`` records it."""

    class Meta:
        model = Nomination
        skip_postgeneration_save = True

    game = factory.LazyAttribute(lambda n: n.nominator.game)
    city = factory.LazyAttribute(lambda n: n.nominator.city)
    day = factory.LazyAttribute(lambda n: n.nominator.game.day_number)
    at = factory.LazyFunction(timezone.now)

    @factory.post_generation
    def record(self, create, extracted, **kwargs):
        personal = Inbox.objects.filter(kind="personal", resident=self.nominator, rolled_over_at__isnull=True,
                                        killed_at__isnull=True).first()
        if create and personal is not None:
            text = in_language(self.game, "%(nominator)s nominates %(nominee)s for execution (day %(day)s).",
                               nominator=self.nominator.name, nominee=self.nominee.name, day=self.day)
            MessageFactory(inbox=personal, body=text, received_at=self.at)


class ProxyRequestFactory(DjangoModelFactory):
    """``resident`` asks the Tribune for a proxy vote for ``nominee`` today (L-NOM-6)."""

    class Meta:
        model = ProxyRequest

    game = factory.LazyAttribute(lambda r: r.resident.game)
    city = factory.LazyAttribute(lambda r: r.resident.city)
    day = factory.LazyAttribute(lambda r: r.resident.game.day_number)
    requested_at = factory.LazyFunction(timezone.now)


class SuicideDeclarationFactory(DjangoModelFactory):
    """``resident`` declares suicide today (L-NOM-5), not yet confirmed."""

    class Meta:
        model = SuicideDeclaration

    game = factory.LazyAttribute(lambda r: r.resident.game)
    city = factory.LazyAttribute(lambda r: r.resident.city)
    day = factory.LazyAttribute(lambda r: r.resident.game.day_number)
    declared_at = factory.LazyFunction(timezone.now)


class ImpeachmentDemandFactory(DjangoModelFactory):
    """A demand by ``initiator`` to impeach ``tribune`` (the StaffRole of the initiator's city), signed by the
    initiator (L-IMPEACH-1); below the 30 % threshold unless ``reached_at`` is given."""

    class Meta:
        model = ImpeachmentDemand
        skip_postgeneration_save = True

    game = factory.LazyAttribute(lambda d: d.initiator.game)
    city = factory.LazyAttribute(lambda d: d.initiator.city)
    tribune_user = factory.LazyAttribute(lambda d: d.tribune.user)
    created_at = factory.LazyFunction(timezone.now)

    @factory.post_generation
    def signature(self, create, extracted, **kwargs):
        if create:
            ImpeachmentSignature.objects.create(demand=self, resident=self.initiator, at=self.created_at)


class NoConfidenceCaseFactory(DjangoModelFactory):
    """A complaint of no confidence (L-IMPEACH-3) filed at ``filed_at``, with its ``inbox``."""

    class Meta:
        model = NoConfidenceCase

    game = factory.LazyAttribute(lambda c: c.inbox.game)
    city = factory.LazyAttribute(lambda c: c.inbox.city)
    filed_at = factory.LazyFunction(timezone.now)


class PlayBanFactory(DjangoModelFactory):
    """A play ban of ``user`` (L-SANCTION-2) from ``starts_at``; ``evidence``: messages; with ``ends_at`` the
    scheduler's ``play_ban_end`` event, as ``sanctions.services.do_record_play_ban`` writes them."""

    class Meta:
        model = PlayBan
        skip_postgeneration_save = True

    offence = "omerta"
    description = "Offence."
    starts_at = factory.LazyFunction(timezone.now)

    @factory.post_generation
    def evidence(self, create, extracted, **kwargs):
        if not create:
            return
        PlayBanEvidence.objects.bulk_create([PlayBanEvidence(ban=self, message=m) for m in extracted or ()])
        if self.ends_at is not None:
            ScheduledEvent.objects.create(game=self.game, kind="play_ban_end", due_at=self.ends_at,
                                          payload={"ban": self.pk}, created_at=self.starts_at)


def in_language(game: Game, msgid: str, **params) -> str:
    """``msgid`` translated as the services title an inbox of ``game`` (its language), formatted with ``params``."""
    with override(game.language):
        text = gettext(msgid)
    return text % params if params else text


def standing_inboxes(game: Game, staff: dict, residents: list[Resident], *, now) -> list[Inbox]:
    """The inboxes the game's start opens (L-INBOX table; ``rulesets.lepra.inbox_services.do_open_game_inboxes``): per city the
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
            ("police", staff["procurator"], [r for r in residents if seats.is_commissar(r)], "Police station"),
            ("court", staff["arbiter"], [r for r in residents if seats.is_judge(r)], "Supreme Court")):
        made.append(InboxFactory(game=game, kind=kind, organizer=organizer, created_at=now, members=members,
                                 title=in_language(game, msgid)))
    return made
