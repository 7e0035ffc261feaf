"""A whole M21 game played through the services (RULES.md Part 2): 20 players with the default setup (M-SETUP-1),
signed up, the setup drawn by the site and dealt, then run by the game clock (``cities.scheduler.advance_clock``,
the scheduler's due events: day start, day deadline, casting window, night start, night end) until victory
(M-WIN-1).

Players do only what the rules give them, at game times inside ``time_machine.travel(..., tick=False)``: by day
they post in the game thread with ``##VOTE name`` (full or lower-case names, now and then a name matching nobody),
``##UNVOTE``, ``##END`` (sometimes without a vote) and ``##UNEND``, and chatter without commands; a tied day waits
for the Judge's casting vote, which the Judge sometimes gives; by night the living mafia post ``kill name`` lines in
the mafia thread and sometimes assign a stash item; every player with a night action picks one of the options the
night page offers (``night_services.options_for``), sometimes changes or withdraws it. Every choice comes from one
``random.Random(seed)`` and every action's time is fixed, so a seed gives one game. ``run_game`` returns a
``SimGame`` for the test to check against independent recounts.
"""
from __future__ import annotations

import random
from unittest import mock
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import time_machine
from django.contrib.auth import get_user_model

from cities.models import Game, GameStatus, LifeStatus, Resident, ScheduledEvent
from cities.recruitment_services import do_close_signups, do_sign_up
from cities.scheduler import advance_clock
from inboxes.models import Inbox, Message
from rulesets.m21.kinds import M21InboxKind
from inboxes.posting import do_post_message
from rulesets.m21 import night_services, services
from rulesets.m21.models import DayStatus, M21Day
from rulesets.m21.roles import ROLES
from voting.forum_vote import FORUM_NO_LYNCH

#: Day 1 starts at the phase shift, 22:00 in London (UTC in winter), on Monday 4 January 2027; setup two days before.
DAY1 = datetime(2027, 1, 4, 22, 0, tzinfo=UTC)
SETUP_AT = DAY1 - timedelta(days=2)
SEED = 20270104
SLUG = "m21-sim"
#: 20 names far apart from each other, so that a vote written in full matches exactly one of them (M-VOTE-1).
NAMES = ("Abigail", "Benedict", "Cordelia", "Desmond", "Eleanor", "Fitzgerald", "Genevieve", "Horatio", "Imogen",
         "Jasper", "Katarina", "Leopold", "Marguerite", "Nathaniel", "Octavia", "Percival", "Rosalind", "Sebastian",
         "Theodora", "Valentine")
MAX_DAYS = 20
M = timedelta(minutes=1)
H = timedelta(hours=1)
CHATTER = ("Good morning, town.", "I have a feeling about this one.", "Who has not posted yet?", "Hmm.",
           "Let us not rush.", "That vote looks scummy to me.")


@dataclass
class SimDay:
    """Day ``number``: who lived at its start, how it ended (``how``), who was imprisoned, whether the Judge cast."""

    number: int
    living: list = field(default_factory=list)
    how: str = ""
    imprisoned: str | None = None
    judge_cast: bool = False


@dataclass
class SimNight:
    """Night ``number``: who lived at its start and who died in it."""

    number: int
    living: list = field(default_factory=list)
    deaths: list = field(default_factory=list)


@dataclass
class SimGame:
    """The played game: ``game``, its host, the deal (name -> role key), days and nights in order, the winner."""

    game: Game
    seed: int
    host: object
    roles: dict
    days: list = field(default_factory=list)
    nights: list = field(default_factory=list)
    winner: str | None = None
    posts: int = 0
    submissions: int = 0
    judge_used: bool = False


class _Clock:
    """The game time of the simulation: ``time_machine`` travels with it (``tick=False``)."""

    def __init__(self, traveller, start: datetime):
        self.traveller, self.now = traveller, start
        traveller.move_to(start)

    def at(self, moment: datetime) -> datetime:
        assert moment >= self.now, (moment, self.now)
        self.now = moment
        self.traveller.move_to(moment)
        return moment

    def step(self, delta: timedelta = timedelta(seconds=1)) -> datetime:
        return self.at(self.now + delta)

    def advance(self, game: Game, until: datetime) -> None:
        """Let the scheduler run every due event up to ``until`` (each at its own due time), then stand there."""
        self.at(max(until, self.now))
        advance_clock(self.now, game=game)


def _living(game: Game) -> list[Resident]:
    return list(Resident.objects.filter(game=game, status=LifeStatus.ALIVE).select_related("m21_seat", "user")
                .order_by("name"))


def _setup(clock: _Clock, rng: random.Random) -> tuple[Game, object, dict]:
    """The host creates the game, 20 players sign up, the site draws the default setup and deals (M-SETUP-1/4)."""
    make = get_user_model().objects.create_user
    host = make("m21sim-host", "m21sim-host@example.com", "x-secret-123", display_name="Sim Host")
    game = services.do_create_m21_game(title="Prohibition Wars (simulated)", slug=SLUG, acting_user=host,
                                       now=clock.step())
    for i, name in enumerate(NAMES, start=1):
        user = make(f"m21sim-p{i:02d}", f"m21sim-p{i:02d}@example.com", "x-secret-123", display_name=name)
        do_sign_up(game, acting_user=user, now=clock.step())
    do_close_signups(game, acting_user=host, now=clock.step())
    game.refresh_from_db()
    services.do_draw_m21_setup(game, cop_insanity="1/4", acting_user=host, rng=rng, now=clock.step())
    roles = services.do_deal_m21_roles(game, first_day_starts_at=DAY1, acting_user=host, rng=rng, now=clock.step())
    # Events of other games of the session's database (a demo) are not this game's (rolled back anyway).
    ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True).exclude(game=game).update(
        cancelled_at=clock.now)
    return Game.objects.get(pk=game.pk), host, roles


def _is_mafia(resident: Resident) -> bool:
    return ROLES[resident.m21_seat.role].is_mafia


def _found_guilty(game: Game, living: list[Resident]) -> Resident | None:
    """A living player whom a living cop's role PM reports GUILTY (M-NIGHT-6), or None."""
    names = {r.name: r for r in living}
    for cop in living:
        if cop.m21_seat.role != "cop" or cop.m21_seat.role_pm_id is None:
            continue
        for body in Message.objects.filter(inbox_id=cop.m21_seat.role_pm_id, author_resident__isnull=True,
                                           body__contains=": GUILTY.").order_by("-received_at").values_list(
                                               "body", flat=True):
            name = body.split("Your investigation of ", 1)[-1].rsplit(": GUILTY.", 1)[0]
            if name in names:
                return names[name]
    return None


def _vote_line(rng: random.Random, name: str) -> str:
    written = name if rng.random() < 0.8 else name.lower()
    return f"##VOTE {written}"


def _play_day(clock: _Clock, game: Game, sim: SimGame, rng: random.Random, day: M21Day) -> None:
    """The living post in the game thread, 2 to 4 times each at random times of the day, until the hammer or the
    deadline (M-VOTE-1..8). A "wagon" day gathers on one suspect with END marks; others spread their votes."""
    living = _living(game)
    town = [r for r in living if not _is_mafia(r)]
    wagon_day = rng.random() < 0.55
    suspects = rng.sample(living, min(3, len(living)))
    # Town instinct: now and then a mafioso's slip makes them one of the day's suspects.
    mafia = [r for r in living if _is_mafia(r)]
    if mafia and rng.random() < 0.35:
        slip = rng.choice(mafia)
        suspects = [slip, *[r for r in suspects if r.pk != slip.pk]][:3]
    # A cop who found a guilty player (their own role PM says so) puts them first; the town often follows.
    found = _found_guilty(game, living)
    if found is not None and rng.random() < 0.6:
        suspects = [found, *[r for r in suspects if r.pk != found.pk]][:3]
    wagon = suspects[0]
    span = (day.deadline - day.starts_at - 2 * H).total_seconds()
    schedule = sorted((day.starts_at + 10 * M + timedelta(seconds=int(rng.random() * span)), r.pk, r)
                      for r in living for _ in range(rng.randint(2, 4)))
    voting: dict[int, bool] = {}
    for at, _pk, author in schedule:
        clock.at(max(clock.now + timedelta(seconds=1), at))
        day.refresh_from_db()
        if day.status != DayStatus.OPEN or clock.now >= day.deadline:
            return
        lines = []
        roll = rng.random()
        if roll < 0.12:
            lines.append(rng.choice(CHATTER))
        elif roll < 0.16 and not voting.get(author.pk):
            lines.append("##END")  # refused: END needs a vote in place (M-VOTE-7)
        elif roll < 0.19:
            lines.append("##VOTE Zyxwvq")  # matches nobody: refused with no candidates (M-VOTE-1)
        elif roll < 0.24 and voting.get(author.pk):
            lines.append("##UNVOTE")
            voting[author.pk] = False
        else:
            if _is_mafia(author):
                pool = [r for r in suspects if not _is_mafia(r)] or town or living
            else:
                pool = suspects
            if wagon_day and rng.random() < 0.7:
                target = wagon
            elif rng.random() < 0.06 and services.vote_rules(game.m21).no_lynch_allowed:
                target = None
            else:
                target = rng.choice(pool)
            lines.append("##VOTE No Lynch" if target is None else _vote_line(rng, target.name))
            voting[author.pk] = True
            if wagon_day and target is wagon and rng.random() < 0.6:
                lines.append("##END")
            elif rng.random() < 0.05:
                lines += ["##END", "##UNEND"]
        if rng.random() < 0.3:
            lines.insert(0, rng.choice(CHATTER))
        do_post_message(day.thread, "\n".join(lines), acting_user=author.user, now=clock.now)
        sim.posts += 1


def _casting_vote(clock: _Clock, game: Game, sim: SimGame, rng: random.Random, day: M21Day, record: SimDay) -> None:
    """A tied day waits for the Judge (M-ROLE judge): a living Judge with the power left casts within the window
    (seven times in ten), choosing one of the tied candidates."""
    day.refresh_from_db()
    if day.status != DayStatus.AWAITING_CASTING_VOTE or sim.judge_used or rng.random() >= 0.7:
        return
    judge = next((r for r in _living(game) if r.m21_seat.role == "judge"), None)
    if judge is None:
        return
    choice = rng.choice(day.result["end"]["tied"])
    target = None if choice == FORUM_NO_LYNCH else Resident.objects.get(game=game, name=choice)
    clock.at(max(clock.now + timedelta(seconds=1), day.ended_at + timedelta(minutes=rng.randint(1, 14))))
    services.do_cast_judge_vote(game, target, acting_user=judge.user, now=clock.now)
    record.judge_cast = sim.judge_used = True


def _play_night(clock: _Clock, game: Game, sim: SimGame, rng: random.Random, night) -> None:
    """The night (M-NIGHT-1, M-MAFIA-1/2): the living mafia vote in their thread and may assign a stash item; every
    living player with a night action submits one of the options the night page offers, some change or withdraw."""
    living = _living(game)
    mafia = [r for r in living if _is_mafia(r)]
    town = [r for r in living if not _is_mafia(r)]
    thread = Inbox.objects.get(game=game, kind=M21InboxKind.MAFIA_THREAD)
    favourite = rng.choice(town) if town else None
    start = max(clock.now, night.starts_at) + 5 * M
    clock.at(start)
    for mafioso in rng.sample(mafia, len(mafia)):
        if favourite is None or rng.random() < 0.1:
            continue  # asleep tonight
        target = favourite if rng.random() < 0.7 else rng.choice(town)
        text = f"kill {target.name}" if rng.random() < 0.5 else f"**kill {target.name.lower()}**"
        if rng.random() < 0.2:
            text = f"kill {rng.choice(town).name}\n" + text  # the post's last line counts (M-MAFIA-1)
        do_post_message(thread, f"I say we go for it.\n{text}", acting_user=mafioso.user, now=clock.step(M))
        sim.posts += 1
    stash = night_services.stash_items(game)
    if mafia and stash and rng.random() < 0.5:
        assigner, holder = rng.choice(mafia), rng.choice(mafia)
        night_services.do_assign_stash_item(game, item=rng.choice(stash), holder=holder.name,
                                            acting_user=assigner.user, now=clock.step(M))
    current = night_services.open_night(game)
    # The living, and a player busted out last night, who may use one unused action tonight (M-NIGHT-7).
    actors = list(Resident.objects.filter(game=game).exclude(status=LifeStatus.DEAD).select_related("m21_seat", "user")
                  .order_by("name"))
    for seat in rng.sample(actors, len(actors)):
        options = night_services.options_for(seat, current)
        if not options or rng.random() < 0.15:
            continue
        for _attempt in range(2 if rng.random() < 0.2 else 1):
            option = rng.choice(options)
            target = rng.choice(option.targets) if option.needs_target else None
            item = rng.choice(option.items) if option.items else None
            night_services.do_submit_night_action(game, option=option.key, target=target, item=item,
                                                  acting_user=seat.user, now=clock.step(M))
            sim.submissions += 1
        if rng.random() < 0.05:
            standing = night_services.current_choices(current, seat)
            if standing:
                night_services.do_withdraw_night_action(game, option=rng.choice(sorted(standing)),
                                                        acting_user=seat.user, now=clock.step(M))
                sim.submissions += 1


def run_game(seed: int = SEED) -> SimGame:
    """Set up and play the whole game to victory; returns the ``SimGame``."""
    rng = random.Random(seed)
    # The seed each night records is drawn from the system's random source in play; here from a generator of the
    # game's seed, so that the whole game, its nights' draws included, is the same on every run and database.
    night_seeds = random.Random(seed + 1)
    with mock.patch("rulesets.m21.night_services.system_rng", lambda: night_seeds), \
            time_machine.travel(SETUP_AT, tick=False) as traveller:
        clock = _Clock(traveller, SETUP_AT)
        game, host, roles = _setup(clock, rng)
        sim = SimGame(game=game, seed=seed, host=host, roles=roles)
        clock.advance(game, DAY1)
        for number in range(1, MAX_DAYS + 1):
            game.refresh_from_db()
            if game.status != GameStatus.RUNNING:
                break
            day = M21Day.objects.get(game=game, number=number)
            record = SimDay(number, living=[r.name for r in _living(game)])
            sim.days.append(record)
            _play_day(clock, game, sim, rng, day)
            day.refresh_from_db()
            if day.status == DayStatus.OPEN:
                clock.advance(game, day.deadline)
            _casting_vote(clock, game, sim, rng, day, record)
            day.refresh_from_db()
            if day.status == DayStatus.AWAITING_CASTING_VOTE:
                clock.advance(game, day.casting_window_ends_at)
            clock.advance(game, clock.now + M)  # the night starts at the next tick after the decision
            day.refresh_from_db()
            record.how, record.imprisoned = day.how, day.imprisoned.name if day.imprisoned else None
            game.refresh_from_db()
            if game.status != GameStatus.RUNNING:
                break
            night = night_services.open_night(game)
            assert night is not None, f"day {number} decided but no night {number} started"
            night_record = SimNight(number, living=[r.name for r in _living(game)])
            sim.nights.append(night_record)
            _play_night(clock, game, sim, rng, night)
            clock.advance(game, night.planned_end)
            night.refresh_from_db()
            assert night.resolved_at is not None, (night.number, night.planned_end, clock.now)
            night_record.deaths = [d["player"] for d in (night.outcome or {}).get("deaths", [])]
        sim.game = Game.objects.get(pk=game.pk)
        sim.winner = services.m21_winner(sim.game)
        return sim
