"""What the benchmark builds, every state change through the services (``do_*``) as a player or the site would
make it: a voting game (a city whose voting inbox takes the votes, and cities whose voting inbox and city inbox
hold 10, 500, 5,000 messages), players who read 20 and 200 inboxes, clocked games of 3, 10 and 30 cities whose
night is resolved, and many small games whose players post at once.

Accounts get no usable password (the bench logs them in by writing their sessions, ``bench.http``), so no
password is hashed. Time: the voting game's zone is chosen so that the real time is the game's morning (09:00 to
10:00), so that votes posted now fall in a voting window that closes at the game's midnight (L-DAY-3).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from cities import recruitment_services
from cities import services as city_services
from cities.models import City, Game, GameDay, GameStatus, Resident
from cities.scheduler import advance_clock
from inboxes import policies, posting
from inboxes import services as inbox_services
from inboxes.models import Inbox
from rulesets.lepra.inbox_services import do_open_game_inboxes
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.models import MafiaDraw, NightActionKind
from rulesets.lepra import seats
from rulesets.lepra.clock import services as clock_services
from rulesets.lepra.day import services as voting_services
from rulesets.lepra.night import services as night_services
from rulesets.lepra.setup import services as role_services
from rulesets.lepra.staff_kinds import StaffKind

#: Posted by the voters: a vote and its retraction (L-VOTE-2).
VOTE, RETRACT = "казнить", "не казнить"


def morning_zone(now: datetime) -> str:
    """A fixed-offset zone (``Etc/GMT±N``) in which ``now`` (aware) is between 09:00 and 10:00."""
    offset = (9 - now.astimezone(UTC).hour) % 24
    if offset > 14:
        offset -= 24
    if offset == 0:
        return "Etc/GMT"
    return f"Etc/GMT{'-' if offset > 0 else '+'}{abs(offset)}"  # Etc/GMT-3 is UTC+3


def make_users(prefix: str, count: int) -> list:
    """``count`` accounts ``<prefix>-<n>`` without a usable password."""
    User = get_user_model()
    return [User.objects.create_user(f"{prefix}-{i:04d}", f"{prefix}-{i}@bench.invalid", None,
                                     display_name=f"{prefix}_{i:04d}") for i in range(count)]


@dataclass
class VotingCity:
    """One city of the voting game: its residents, the nominee's voting inbox and the city inbox."""

    city: City
    tribune: object
    residents: list[Resident]
    voting_inbox: Inbox
    city_inbox: Inbox

    @property
    def voters(self) -> list[Resident]:
        """Everyone but the nominee (the first resident)."""
        return self.residents[1:]


@dataclass
class VotingWorld:
    """The voting game: ``cities`` by label (``vote`` and ``m<N>`` for N messages); ``readers`` maps an inbox count
    (20, 200) to a user who reads that many inboxes of the game."""

    game: Game
    procurator: object
    cities: dict[str, VotingCity] = field(default_factory=dict)
    readers: dict[int, object] = field(default_factory=dict)


def build_voting_world(slug: str, *, vote_city_size: int, message_counts: list[int], volume_city_size: int,
                       inbox_counts: list[int], log=print) -> VotingWorld:
    """The voting game, running on day 2 with voting open in every city (one nominee each). Cities: ``vote``
    (``vote_city_size`` residents: the vote scenarios) and, per N in ``message_counts``, ``m<N>``
    (``volume_city_size`` residents) whose voting inbox holds N votes and retractions and whose city inbox holds N
    discussion messages. A resident of ``vote`` then reads exactly K inboxes per K in ``inbox_counts`` (secret
    inboxes of two are added for them)."""
    now = timezone.now()
    morning, opens = now - timedelta(hours=2), now - timedelta(hours=1)
    zone = morning_zone(now)
    procurator, arbiter = make_users(f"{slug}-staff", 2)
    game = city_services.do_create_game(title=f"Bench {slug}", slug=slug, acting_user=procurator, time_zone=zone,
                                        now=morning)
    city_services.do_appoint_staff(game, arbiter, StaffKind.ARBITER, acting_user=procurator, now=morning)
    world = VotingWorld(game=game, procurator=procurator)
    plan = [("vote", vote_city_size)] + [(f"m{n}", volume_city_size) for n in message_counts]
    seats: dict[str, tuple[City, object, list[Resident]]] = {}
    for label, size in plan:
        city = city_services.do_add_city(game, name=f"City {label}", acting_user=procurator, now=morning)
        tribune = make_users(f"{slug}-{label}-tribune", 1)[0]
        city_services.do_appoint_staff(game, tribune, StaffKind.TRIBUNE, city=city, acting_user=procurator,
                                       now=morning)
        residents = [city_services.do_seat_resident(city, user, acting_user=procurator, now=morning)
                     for user in make_users(f"{slug}-{label}", size)]
        seats[label] = (city, tribune, residents)
    game = city_services.do_set_game_status(game, GameStatus.RUNNING, day_number=2, acting_user=procurator,
                                            now=morning)
    do_open_game_inboxes(game, acting_user=procurator, now=morning)
    for label, (city, tribune, residents) in seats.items():
        voting_services.do_nominate(residents[0], acting_user=residents[1].user, now=morning)
        session = voting_services.do_schedule_voting(city, opens, _midnight_before(game, now), acting_user=tribune,
                                                     now=morning)
        voting_services.do_open_voting(session, acting_user=None, now=opens)
        world.cities[label] = VotingCity(
            city=city, tribune=tribune, residents=residents,
            voting_inbox=Inbox.objects.get(kind=LepraInboxKind.VOTING, resident=residents[0]),
            city_inbox=Inbox.objects.get(kind=LepraInboxKind.CITY, city=city, rolled_over_at__isnull=True))
    for n in message_counts:
        vc = world.cities[f"m{n}"]
        log(f"  filling city m{n}: {n} votes and retractions, {n} discussion messages")
        fill_votes(vc.voting_inbox, vc.voters, n)
        fill_thread(vc.city_inbox, vc.residents, n)
    vote_city = world.cities["vote"]
    for k, count in enumerate(inbox_counts):
        reader = vote_city.residents[-1 - k]
        partner = vote_city.residents[1]
        have = policies.readable_inboxes(reader.user, game).count()
        for i in range(max(0, count - have)):
            inbox_services.do_create_secret_inbox(game, title=f"Secret {count}-{i}", members=[partner],
                                                  acting_user=reader.user)
        world.readers[count] = reader.user
    return world


def _midnight_before(game: Game, now: datetime) -> datetime:
    """The game's midnight ending the calendar day of ``now`` (the latest close of a voting, L-DAY-3)."""
    return clock_services.voting_window_limits(game, game.day_number, now)[1]


def fill_votes(inbox: Inbox, voters: list[Resident], count: int) -> None:
    """``count`` posts in the voting ``inbox``: the voters in turn, each alternating «казнить» and «не казнить»
    (each accepted, L-VOTE-2), through ``do_post_message``."""
    standing: set[int] = set()
    with transaction.atomic():
        for i in range(count):
            voter = voters[i % len(voters)]
            text = RETRACT if voter.pk in standing else VOTE
            posting.do_post_message(inbox, text, acting_user=voter.user)
            standing.symmetric_difference_update({voter.pk})


def fill_thread(inbox: Inbox, authors: list[Resident], count: int) -> None:
    """``count`` discussion messages in ``inbox``, the authors in turn, through ``do_post_message``."""
    with transaction.atomic():
        for i in range(count):
            author = authors[i % len(authors)]
            posting.do_post_message(inbox, f"Message {i} of the discussion: who is the mafia?",
                                           acting_user=author.user)


@dataclass
class NightGame:
    """A clocked game at the start of night 2 with each city's kill decided: ``until`` is just after day 3 starts
    (advancing the clock to it resolves the night, drafts and publishes the daily post, starts day 3)."""

    game: Game
    procurator: object
    cities: int
    night_start: datetime
    until: datetime


def build_night_game(slug: str, *, cities: int, size: int, first_day: datetime, seed: int = 1) -> NightGame:
    """A Lepra game of ``cities`` x ``size`` residents set up as the Procurator does it (sign-ups, cities, staff,
    city lists, the mafia draw), its clock started at ``first_day`` (aware UTC, day 1's start), run to the start
    of night 2; then the Consigliere decides a kill in every city (L-NIGHT-2)."""
    rng = random.Random(seed)
    setup_at = first_day - timedelta(days=1)
    procurator = make_users(f"{slug}-proc", 1)[0]
    # Beyond the form's cap on a fixed city count (L-CITY-1), the cities are planned by size: ``cities x size``
    # sign-ups of ``size`` residents a city make exactly ``cities`` cities.
    planned = {"city_count": cities} if cities <= city_services.MAX_CITIES else {"city_size": size}
    game = city_services.do_create_game(title=f"Bench {slug}", slug=slug, acting_user=procurator, now=setup_at,
                                        **planned)
    recruitment_services.do_publish_recruitment_post(game, acting_user=procurator, now=setup_at)
    for user in make_users(slug, cities * size):
        recruitment_services.do_sign_up(game, acting_user=user, now=setup_at)
    recruitment_services.do_close_signups(game, acting_user=procurator, now=setup_at)
    recruitment_services.do_form_cities(game, acting_user=procurator, rng=rng, now=setup_at,
                                 names=[f"City {n}" for n in range(1, cities + 1)])
    for city in City.objects.filter(game=game).order_by("number"):
        tribune = make_users(f"{slug}-t{city.number}", 1)[0]
        city_services.do_appoint_staff(game, tribune, StaffKind.TRIBUNE, city=city, acting_user=procurator,
                                       now=setup_at)
    arbiter, consigliere = make_users(f"{slug}-staff", 2)
    city_services.do_appoint_staff(game, arbiter, StaffKind.ARBITER, acting_user=procurator, now=setup_at)
    city_services.do_appoint_staff(game, consigliere, StaffKind.CONSIGLIERE, acting_user=procurator, now=setup_at)
    recruitment_services.do_publish_city_lists(game, acting_user=procurator, now=setup_at)
    role_services.do_start_mafia_draw(game, acting_user=procurator, rng=rng, now=setup_at)
    committed = MafiaDraw.objects.get(game=game).committed_at
    role_services.do_name_mafia_numbers(game, None, acting_user=procurator, rng=rng,
                                        now=committed + timedelta(seconds=1))
    clock_services.do_start_game_clock(game, first_day_starts_at=first_day, acting_user=procurator,
                                      now=committed + timedelta(seconds=2))
    advance_clock(GameDay.objects.get(game=game, number=1).starts_at + timedelta(minutes=1), game=game)
    day2 = GameDay.objects.get(game=game, number=2)  # planned when day 1 starts
    night_start = day2.ends_at + timedelta(minutes=1)
    advance_clock(night_start, game=game)
    for city in City.objects.filter(game=game).order_by("number"):
        target = (Resident.objects.filter(seats.rank_q("is_judge", False), city=city, status="alive",
                                          alignment="honest")
                  .order_by("pk").first())
        night_services.do_submit_night_decision(city, target, kind=NightActionKind.KILL, acting_user=consigliere,
                                               now=night_start)
    day3 = GameDay.objects.get(game=game, number=3)  # planned when day 2 starts
    return NightGame(game=Game.objects.get(pk=game.pk), procurator=procurator, cities=cities, night_start=night_start,
                     until=day3.starts_at + timedelta(minutes=1))


@dataclass
class BurstGame:
    """A small running game: its players (Residents) and their city inbox."""

    game: Game
    players: list[Resident]
    city_inbox: Inbox


def build_burst_game(slug: str, *, players: int) -> BurstGame:
    """A game of one city of ``players`` residents, running on day 2 with its standing inboxes open."""
    now = timezone.now()
    procurator, arbiter, tribune = make_users(f"{slug}-staff", 3)
    game = city_services.do_create_game(title=f"Bench {slug}", slug=slug, acting_user=procurator,
                                        time_zone=morning_zone(now), now=now)
    city = city_services.do_add_city(game, name="Square", acting_user=procurator, now=now)
    city_services.do_appoint_staff(game, arbiter, StaffKind.ARBITER, acting_user=procurator, now=now)
    city_services.do_appoint_staff(game, tribune, StaffKind.TRIBUNE, city=city, acting_user=procurator, now=now)
    residents = [city_services.do_seat_resident(city, user, acting_user=procurator, now=now)
                 for user in make_users(slug, players)]
    game = city_services.do_set_game_status(game, GameStatus.RUNNING, day_number=2, acting_user=procurator, now=now)
    do_open_game_inboxes(game, acting_user=procurator, now=now)
    return BurstGame(game=game, players=residents,
                     city_inbox=Inbox.objects.get(kind=LepraInboxKind.CITY, city=city, rolled_over_at__isnull=True))
