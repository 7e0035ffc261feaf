"""A whole Lepra game played through the services (issue 6): 60 players in three cities of 20, set up by the
Procurator, then run by the game clock (``cities.scheduler.advance_clock``) from day 1 to the final post.

Players and staff only do what the rules give them, at game times inside ``time_machine.travel(..., tick=False)``:
day 1 the Arbiter schedules the judge elections, residents propose candidates, the Tribunes pass the lists and
residents post "Он - Ганди!" / "Он - Гитлер!" in the precincts; night 1 the Consigliere opens the godfather
elections and the mafia vote; from day 2 residents nominate, the Tribunes schedule the voting, residents post
"казнить" (and sometimes "не казнить") in the voting inboxes, the Arbiter puts each result before the court and the
judges vote (or the court's deadline executes the leader); from night 2 the godfathers decide kills and touring and
the commissars check. Every choice comes from one ``random.Random(seed)``, and every action's time is fixed, so a
seed gives one game. ``run_game`` returns a ``SimGame`` whose ``days`` record what happened, for the test to assert.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import time_machine
from django.contrib.auth import get_user_model

from cities import recruitment_services
from cities import services as city_services
from cities.models import Alignment, City, Game, GameDay, GameEvent, GameStatus, LifeStatus, Resident, ScheduledEvent
from cities.scheduler import advance_clock
from inboxes.models import Inbox, Membership
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from rulesets.lepra.models import CommissarCheck, MafiaDraw
from rulesets.lepra import seats
from rulesets.lepra.clock import services as clock_services
from rulesets.lepra.court import judge_services
from rulesets.lepra.court import services as court_services
from rulesets.lepra.day import services as voting_services
from rulesets.lepra.night import services as night_services
from rulesets.lepra.setup import services as role_services
from rulesets.lepra.models import CourtCase, DecisionSource, ExecutionDecision, JudgeElection
from rulesets.lepra.staff_kinds import StaffKind

#: Day 1 starts at 10:00 in Moscow (07:00 UTC) on Monday 1 March 2027; the setup happens two days before.
DAY1 = datetime(2027, 3, 1, 7, 0, tzinfo=UTC)
SETUP_AT = datetime(2027, 2, 27, 9, 0, tzinfo=UTC)
SEED = 20270301
SLUG = "lepra-sim"
PLAYERS = 60
MAX_DAYS = 14
GANDHI, HITLER, EXECUTE, RETRACT = "Он - Ганди!", "Он - Гитлер!", "казнить", "не казнить"
S = timedelta(seconds=1)
M = timedelta(minutes=1)
H = timedelta(hours=1)


@dataclass
class SimDay:
    """What happened on game day ``number`` and the night before it (names are residents' names)."""

    number: int
    night_deaths: list = field(default_factory=list)   # [(name, cause, touring_by_city_name or None, spirit)]
    elections: dict = field(default_factory=dict)       # city name -> winner name (elections closed that day)
    nominees: dict = field(default_factory=dict)        # city name -> [nominee names]
    executed: dict = field(default_factory=dict)        # city name -> (name, how): how "court"/"fallback"/"procurator"
    day_deaths: list = field(default_factory=list)      # [(name, cause)] in order, from the day start to night start
    memberships: dict = field(default_factory=dict)     # end of day: inbox label -> {name: state}
    post: tuple | None = None                           # (title, body) of the daily post published at day start


@dataclass
class SimGame:
    """The played game: ``game``, staff users by kind, ``days`` in order, the ``rng`` seed."""

    game: Game
    seed: int
    staff: dict
    days: list = field(default_factory=list)


class _Clock:
    """The game time of the simulation: ``time_machine`` travels with it (``tick=False``); ``step`` moves on."""

    def __init__(self, traveller, start: datetime):
        self.traveller, self.now = traveller, start
        traveller.move_to(start)

    def at(self, moment: datetime) -> datetime:
        assert moment >= self.now, (moment, self.now)
        self.now = moment
        self.traveller.move_to(moment)
        return moment

    def step(self, delta: timedelta = S) -> datetime:
        return self.at(self.now + delta)

    def advance(self, game: Game, until: datetime) -> None:
        """Let the scheduler run the plan up to ``until`` (each event at its own due time), then stand there."""
        self.at(until)
        advance_clock(until, game=game)


def _fresh(resident: Resident) -> Resident:
    return Resident.objects.get(pk=resident.pk)


def _living(city: City, **filters) -> list[Resident]:
    return list(Resident.objects.filter(city=city, status=LifeStatus.ALIVE, **filters).order_by("name"))


def _setup(clock: _Clock, rng: random.Random) -> tuple[Game, dict]:
    """The Procurator's setup (L-CITY, L-STAFF, L-ASSIGN, L-COMM): returns the game and the staff users."""
    make = get_user_model().objects.create_user
    proc = make("sim-proc", "sim-proc@example.com", "x-secret-123", display_name="Prokuror")
    game = city_services.do_create_game(title="Lepra simulated", slug=SLUG, acting_user=proc, city_count=3,
                                        rules_text="Lepra rules.", now=clock.step())
    recruitment_services.do_publish_recruitment_post(game, acting_user=proc, now=clock.step())
    for i in range(1, PLAYERS + 1):
        user = make(f"sim-p{i:02d}", f"sim-p{i:02d}@example.com", "x-secret-123", display_name=f"P{i:02d}")
        recruitment_services.do_sign_up(game, acting_user=user, now=clock.step())
    recruitment_services.do_close_signups(game, acting_user=proc, now=clock.step())
    recruitment_services.do_form_cities(game, acting_user=proc, rng=rng, names=["Alpha", "Beta", "Gamma"], now=clock.step())
    staff = {StaffKind.PROCURATOR: proc}
    for city in City.objects.filter(game=game).order_by("number"):
        user = make(f"sim-t{city.number}", f"sim-t{city.number}@example.com", "x-secret-123",
                    display_name=f"Tribune{city.number}")
        city_services.do_appoint_staff(game, user, StaffKind.TRIBUNE, city=city, acting_user=proc, now=clock.step())
        staff[f"tribune{city.number}"] = user
    for kind, name in ((StaffKind.ARBITER, "Arbiter"), (StaffKind.CONSIGLIERE, "Consigliere")):
        user = make(f"sim-{kind}", f"sim-{kind}@example.com", "x-secret-123", display_name=name)
        city_services.do_appoint_staff(game, user, kind, acting_user=proc, now=clock.step())
        staff[kind] = user
    recruitment_services.do_publish_city_lists(game, acting_user=proc, now=clock.step())
    role_services.do_start_mafia_draw(game, acting_user=proc, rng=rng, now=clock.step())
    assert MafiaDraw.objects.get(game=game).numbers is None
    role_services.do_name_mafia_numbers(game, None, acting_user=proc, rng=rng, now=clock.step())
    for city in City.objects.filter(game=game).order_by("number"):
        for _attempt in range(3):  # L-COMM-3
            offer = role_services.do_offer_commissar(city, acting_user=proc, rng=rng, now=clock.step())
            candidate = offer.candidate
            accept = candidate.alignment == Alignment.HONEST and rng.random() < 0.7
            role_services.do_answer_commissar_offer(offer, accept=accept, acting_user=candidate.user,
                                                    reason="" if accept else "no", now=clock.step())
            if accept:
                break
    # The session's demo game has events of its own due earlier; they are not this game's (rolled back anyway).
    ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True).exclude(game=game).update(
        cancelled_at=clock.now)
    clock_services.do_start_game_clock(game, first_day_starts_at=DAY1, acting_user=proc, now=clock.step())
    return Game.objects.get(pk=game.pk), staff


def _cities(game: Game) -> list[City]:
    return list(City.objects.filter(game=game).order_by("number"))


def _prepare_elections(clock: _Clock, game: Game, sim: SimGame, rng: random.Random) -> list:
    """Elections not yet open (day 1, or after a judge's death): residents propose candidates in their personal
    inboxes and the Tribune passes the list to the Arbiter (L-JUDGE-2, L-JUDGE-3). Returns the elections."""
    elections = list(JudgeElection.objects.filter(game=game, opened_at__isnull=True, closed_at__isnull=True,
                                                  cancelled_at__isnull=True).select_related("city")
                     .order_by("city__number"))
    for election in elections:
        city = election.city
        living = _living(city)
        pool = rng.sample(living, min(3, len(living)))
        for proposer in rng.sample(living, min(5, len(living))):
            judge_services.do_propose_candidate(rng.choice(pool), acting_user=proposer.user, now=clock.step())
        judge_services.do_pass_candidates(election, acting_user=sim.staff[f"tribune{city.number}"], now=clock.step())
    return elections


def _vote_in_precincts(clock: _Clock, game: Game, rng: random.Random, election) -> None:
    """The precincts are open: living residents of the city post Gandhi or Hitler ballots (L-JUDGE-4)."""
    election.refresh_from_db()
    for precinct in election.precincts.select_related("inbox", "candidate").order_by("inbox_id"):
        for voter in _living(election.city):
            if rng.random() < 0.45:
                text = GANDHI if rng.random() < 0.7 else HITLER
                do_post_message(precinct.inbox, text, acting_user=voter.user, now=clock.step())


def _record_elections(elections: list, day: SimDay) -> None:
    for election in elections:
        election.refresh_from_db()
        assert election.closed_at is not None, election
        day.elections[election.city.name] = election.winner.name if election.winner else None


def _godfathers(clock: _Clock, game: Game, sim: SimGame, rng: random.Random) -> None:
    """Night: where a city has no living godfather, its election runs (opened by the Consigliere on night 1, by the
    site after a death); the mafia vote; the Consigliere closes it and appoints one if it failed (L-NIGHT-3)."""
    consigliere = sim.staff[StaffKind.CONSIGLIERE]
    for city in _cities(game):
        mafia = _living(city, alignment=Alignment.MAFIA)
        if not mafia or night_services.living_godfather(city) is not None:
            continue
        election = night_services.open_godfather_election(city)
        if election is None:
            election = night_services.do_open_godfather_election(city, acting_user=consigliere, now=clock.step())
        favourite = rng.choice(mafia)
        for voter in mafia:
            choice = favourite if rng.random() < 0.75 else rng.choice(mafia)
            night_services.do_vote_godfather(election, choice, acting_user=voter.user, now=clock.step())
        if night_services.do_close_godfather_election(election, acting_user=consigliere, now=clock.step()) is None:
            night_services.do_appoint_godfather(city, rng.choice(mafia), acting_user=consigliere, now=clock.step())


def _night_actions(clock: _Clock, game: Game, sim: SimGame, rng: random.Random) -> None:
    """From night 2: each godfather decides the kill (and the touring city's the touring kill); each living
    commissar checks a resident not checked before (L-NIGHT-1/4/5)."""
    night = game.day_number
    touring = night_services.touring_city_for(game, night)
    for city in _cities(game):
        godfather = night_services.living_godfather(city)
        if godfather is None:
            continue
        honest = _living(city, alignment=Alignment.HONEST)
        target = rng.choice(honest) if honest and rng.random() < 0.9 else None
        night_services.do_submit_night_decision(city, target, acting_user=godfather.user, now=clock.step())
        if touring is not None and touring.pk == city.pk:
            others = list(Resident.objects.filter(seats.rank_q("is_judge", False), game=game, status=LifeStatus.ALIVE)
                          .exclude(city=city).order_by("name"))
            target = rng.choice(others) if others and rng.random() < 0.8 else None
            night_services.do_submit_night_decision(city, target, acting_user=godfather.user, kind="tour",
                                                   now=clock.step())
    for commissar in Resident.objects.filter(seats.rank_q("is_commissar"), game=game, status=LifeStatus.ALIVE).order_by("name"):
        checked = set(CommissarCheck.objects.filter(commissar=commissar).values_list("target_id", flat=True))
        pool = [r for r in _living(commissar.city) if r.pk != commissar.pk and r.pk not in checked]
        if pool:
            night_services.do_check_resident(rng.choice(pool), acting_user=commissar.user, now=clock.step())


def _known_mafia(city: City) -> set[int]:
    """The mafia the city's commissar has found (he tells nobody; he nominates and votes accordingly)."""
    return set(CommissarCheck.objects.filter(city=city, is_mafia=True).values_list("target_id", flat=True))


def _plan_voting(clock: _Clock, game: Game, sim: SimGame, rng: random.Random, plan: GameDay, day: SimDay) -> list:
    """Day 2 on, in the morning (L-NOM, L-DAY-3): each Tribune sets the voting times; residents nominate.
    Returns the voting sessions."""
    sessions = []
    for city in _cities(game):
        living = _living(city)
        if not any(r.alignment == Alignment.MAFIA for r in living) or not any(
                r.alignment == Alignment.HONEST for r in living):
            continue  # L-WIN-2
        sessions.append(voting_services.do_schedule_voting(
            city, plan.starts_at + 8 * H, plan.starts_at + 11 * H,
            acting_user=sim.staff[f"tribune{city.number}"], now=clock.step()))
        known = _known_mafia(city)
        candidates = [r for r in living if not seats.is_judge(r)]
        for nominator in rng.sample(living, min(4, len(living))):
            if seats.is_commissar(nominator) and any(r.pk in known for r in candidates):
                nominee = next(r for r in candidates if r.pk in known)
            elif nominator.alignment == Alignment.MAFIA:
                nominee = rng.choice([r for r in candidates if r.alignment == Alignment.HONEST] or candidates)
            else:
                nominee = rng.choice([r for r in candidates if r.pk != nominator.pk])
            voting_services.do_nominate(nominee, acting_user=nominator.user, now=clock.step())
        day.nominees[city.name] = [r.name for r in voting_services.nominees_of(city, plan.number)]
    return sessions


def _vote_for_execution(clock: _Clock, game: Game, rng: random.Random, session) -> None:
    """The voting inboxes are open: residents (and spirits) post казнить, a few retract (L-VOTE-1/2)."""
    city = session.city
    inboxes = {i.resident_id: i for i in Inbox.objects.filter(city=city, day_number=session.day,
                                                             kind=LepraInboxKind.VOTING, killed_at__isnull=True)}
    if not inboxes:
        return
    nominees = Resident.objects.in_bulk(list(inboxes))
    known = _known_mafia(city)
    voters = list(Resident.objects.filter(city=city, status=LifeStatus.ALIVE)
                  | Resident.objects.filter(seats.rank_q("is_spirit"), city=city))
    voters.sort(key=lambda r: r.name)
    rng.shuffle(voters)
    for voter in voters:
        if rng.random() < 0.15:
            continue  # absent
        if voter.alignment == Alignment.MAFIA and voter.status == LifeStatus.ALIVE:
            pool = [pk for pk, r in nominees.items() if r.alignment == Alignment.HONEST] or list(nominees)
        elif seats.is_commissar(voter):
            pool = [pk for pk in nominees if pk in known] or list(nominees)
        else:
            pool = list(nominees)
        pool = [pk for pk in sorted(pool) if pk != voter.pk] or sorted(pool)
        choice = rng.choice(pool)
        do_post_message(inboxes[choice], EXECUTE, acting_user=voter.user, now=clock.step(7 * S))
        if rng.random() < 0.1:
            do_post_message(inboxes[choice], RETRACT, acting_user=voter.user, now=clock.step(7 * S))
            if rng.random() < 0.5:
                other = rng.choice(sorted(nominees))
                do_post_message(inboxes[other], EXECUTE, acting_user=voter.user, now=clock.step(7 * S))


def _court(clock: _Clock, game: Game, sim: SimGame, rng: random.Random, plan: GameDay, sessions: list) -> None:
    """After the voting (L-COURT, L-VOTE-7): the Arbiter puts each result before the court, the judges vote, the
    deadline executes the leader when they do not decide; a city without votes waits for the Procurator."""
    closes = plan.starts_at + 11 * H
    arbiter = sim.staff[StaffKind.ARBITER]
    cases = []
    for session in sessions:
        session.refresh_from_db()
        if Game.objects.get(pk=game.pk).status != GameStatus.RUNNING:
            return
        if (session.result or {}).get("leader") is None:
            if voting_services.awaiting_procurator(session.city, plan.number):
                pool = [r for r in _living(session.city) if not seats.is_judge(r)]
                voting_services.do_decide_execution(session.city, rng.choice(pool),
                                                    acting_user=sim.staff[StaffKind.PROCURATOR], now=clock.step())
            continue
        cases.append(court_services.do_put_before_court(session, closes + H, acting_user=arbiter,
                                                         now=clock.step()))
    for case in cases:
        for judge in Resident.objects.filter(seats.rank_q("is_judge"), game=game, status=LifeStatus.ALIVE).order_by("name"):
            case.refresh_from_db()
            if case.decided_at is not None or Game.objects.get(pk=game.pk).status != GameStatus.RUNNING:
                break
            if rng.random() < 0.6:
                choice = Resident.objects.get(pk=int(rng.choice(case.candidates)))
                court_services.do_court_vote(case, choice, acting_user=judge.user, now=clock.step())


def _play_day(clock: _Clock, game: Game, sim: SimGame, rng: random.Random, plan: GameDay, day: SimDay) -> None:
    """The residents' and staff's day, in time order: the morning's proposals, voting times and nominations;
    then each opening (precincts, voting inboxes) at its time; then the closings and the court."""
    if plan.number == 1:
        for city in _cities(game):
            judge_services.do_schedule_judge_election(
                city, plan.starts_at + 7 * H, plan.starts_at + 11 * H,
                acting_user=sim.staff[StaffKind.ARBITER], now=clock.step())
    elections = _prepare_elections(clock, game, sim, rng)
    sessions = _plan_voting(clock, game, sim, rng, plan, day) if plan.number >= 2 else []
    steps = ([(e.opens_at, 0, e) for e in elections] + [(s.opens_at, 1, s) for s in sessions]
             + ([(max(s.closes_at for s in sessions), 2, None)] if sessions else []))
    for at, what, row in sorted(steps, key=lambda t: (t[0], t[1], t[2].pk if t[2] is not None else 0)):
        clock.advance(game, max(clock.now, at))
        if Game.objects.get(pk=game.pk).status != GameStatus.RUNNING:
            return
        if what == 0:
            _vote_in_precincts(clock, game, rng, row)
        elif what == 1:
            _vote_for_execution(clock, game, rng, row)
        else:
            _court(clock, game, sim, rng, plan, sessions)
    closings = sorted({e.closes_at for e in elections} | {plan.starts_at + 12 * H for _s in sessions})
    if closings:
        clock.advance(game, max(clock.now, closings[-1]))
    _record_elections(elections, day)


def _snapshot(game: Game) -> dict:
    """The current city, mafia, cemetery, court and police inboxes' memberships: label -> {resident name: state}."""
    out = {}
    inboxes = Inbox.objects.filter(game=game, kind__in=[LepraInboxKind.CITY, LepraInboxKind.MAFIA, LepraInboxKind.CEMETERY,
                                                        LepraInboxKind.COURT, LepraInboxKind.POLICE],
                                   rolled_over_at__isnull=True).select_related("city").order_by("kind", "city__number", "-id")
    for inbox in inboxes:
        label = f"{inbox.kind}:{inbox.city.name}" if inbox.city_id else inbox.kind
        if label in out:
            continue
        out[label] = {m.resident.name: m.state for m in Membership.objects.filter(inbox=inbox).select_related("resident")}
    return out


def _last_event_id(game: Game) -> int:
    return GameEvent.objects.filter(game=game).order_by("-id").values_list("id", flat=True).first() or 0


def _deaths_since(game: Game, mark: int) -> list[tuple]:
    """The deaths recorded after audit row ``mark``, in order: (name, cause, touring mafia's city or None,
    spirit)."""
    touring = {}
    for event in GameEvent.objects.filter(game=game, kind="night.resolved", id__gt=mark):
        for death in event.payload["deaths"]:
            if death["touring"]:
                touring[death["resident"]] = City.objects.get(pk=death["by_city"]).name
    out = []
    for event in GameEvent.objects.filter(game=game, kind="resident.died", id__gt=mark).order_by("id"):
        resident = Resident.objects.get(pk=event.payload["resident"])
        out.append((resident.name, event.payload["cause"], touring.get(resident.pk), seats.is_spirit(resident)))
    return out


def run_game(seed: int = SEED) -> SimGame:
    """Set up and play the whole game; returns the ``SimGame`` once the final daily post is published."""
    rng = random.Random(seed)
    with time_machine.travel(SETUP_AT, tick=False) as traveller:
        clock = _Clock(traveller, SETUP_AT)
        game, staff = _setup(clock, rng)
        sim = SimGame(game=game, seed=seed, staff=staff)
        for number in range(1, MAX_DAYS + 2):
            plan = GameDay.objects.get(game=game, number=number)
            mark = _last_event_id(game)
            clock.advance(game, plan.starts_at)
            game = Game.objects.get(pk=game.pk)
            day = SimDay(number)
            plan.refresh_from_db()
            if plan.post_id is not None:
                day.post = (plan.post.title, plan.post.body)
            day.night_deaths = _deaths_since(game, mark)
            sim.days.append(day)
            if game.status == GameStatus.FINISHED:
                break
            clock.at(plan.starts_at + 10 * M)
            mark = _last_event_id(game)
            _play_day(clock, game, sim, rng, plan, day)
            plan.refresh_from_db()
            clock.advance(game, max(clock.now, plan.ends_at + M))
            game = Game.objects.get(pk=game.pk)
            day.day_deaths = _deaths_since(game, mark)
            for case in CourtCase.objects.filter(game=game, day=number).select_related("city", "sentenced"):
                if case.sentenced is not None:
                    day.executed[case.city.name] = (case.sentenced.name, "fallback" if case.fallback else "court")
            for decision in ExecutionDecision.objects.filter(game=game, day=number,
                                                             source=DecisionSource.PROCURATOR).select_related("city",
                                                                                                              "resident"):
                day.executed[decision.city.name] = (decision.resident.name, "procurator")
            day.memberships = _snapshot(game)
            if game.status != GameStatus.RUNNING:
                continue  # the final daily post comes at the next day start
            clock.at(plan.ends_at + 10 * M)
            _godfathers(clock, game, sim, rng)
            if number >= 2:
                _night_actions(clock, game, sim, rng)
            # A failed election's successor may fall in the night (L-JUDGE-5, L-DAY-4): candidates, ballots.
            following = GameDay.objects.get(game=game, number=number + 1).starts_at
            elections = [e for e in _prepare_elections(clock, game, sim, rng) if e.closes_at < following]
            for election in elections:
                clock.advance(game, max(clock.now, election.opens_at))
                _vote_in_precincts(clock, game, rng, election)
            if elections:
                clock.advance(game, max(e.closes_at for e in elections))
                _record_elections(elections, day)
        sim.game = Game.objects.get(pk=game.pk)
        return sim
