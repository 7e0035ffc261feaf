"""Fixtures of the judge tests (issue 5): a fresh Lepra game of 3 cities x 8 residents, running on day 1 with its
standing inboxes open and no judges yet, and helpers that run elections through the services."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from cities.models import City, GameStatus, LifeStatus, Resident, StaffRole
from cities.services import do_set_game_status
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from rulesets.lepra.inbox_services import do_open_game_inboxes
from rulesets.lepra.court.judge_services import (
    do_close_election,
    do_open_election,
    do_propose_candidate,
    do_schedule_judge_election,
)
from rulesets.lepra.staff_kinds import StaffKind
from tests.setup_factory import build_game

DAY1 = datetime(2026, 11, 19, 7, 0, tzinfo=UTC)  # 10:00 in Moscow, the morning of day 1
OPENS = DAY1 + timedelta(hours=6)  # 16:00 in Moscow
CLOSES = DAY1 + timedelta(hours=10)  # 20:00 in Moscow
PRO, CON = "Он - Ганди!", "Он - Гитлер!"


@dataclass
class JudgeGame:
    game: object
    procurator: object
    arbiter: object
    tribunes: dict  # city number -> user
    cities: dict  # city number -> City

    def residents(self, number: int) -> list[Resident]:
        """The living residents of city ``number``, by name."""
        return list(Resident.objects.filter(city=self.cities[number], status=LifeStatus.ALIVE).select_related("user")
                    .order_by("name"))

    def refresh(self):
        self.game.refresh_from_db()
        return self.game

    def set_day(self, day: int, now: datetime):
        self.game = do_set_game_status(self.game, GameStatus.RUNNING, day_number=day, acting_user=self.procurator,
                                       now=now)
        return self.game

    def elect(self, number: int, winner: Resident, *, day_start: datetime = DAY1, others: int = 0):
        """Schedule, propose ``winner`` (and ``others`` more candidates), open and close an election in city
        ``number`` that ``winner`` wins with one pro; returns the closed election."""
        people = self.residents(number)
        election = do_schedule_judge_election(self.cities[number], day_start + timedelta(hours=6),
                                              day_start + timedelta(hours=10), acting_user=self.arbiter, now=day_start)
        proposers = [r for r in people if r.pk != winner.pk]
        do_propose_candidate(winner, acting_user=proposers[0].user, now=day_start + timedelta(minutes=1))
        for i in range(others):
            do_propose_candidate(proposers[i + 2], acting_user=proposers[i + 1].user,
                                 now=day_start + timedelta(minutes=2 + i))
        do_open_election(election, acting_user=None, now=day_start + timedelta(hours=6))
        precinct = Inbox.objects.get(kind=LepraInboxKind.PRECINCT, resident=winner, killed_at__isnull=True)
        do_post_message(precinct, PRO, acting_user=proposers[0].user, now=day_start + timedelta(hours=7))
        return do_close_election(election, acting_user=None, now=day_start + timedelta(hours=10))


@pytest.fixture
def jg(db) -> JudgeGame:
    return _judge_game()


@pytest.fixture
def jg_tx(transactional_db) -> JudgeGame:
    """``jg`` in a transactional test (threads see each other's commits)."""
    return _judge_game()


def _judge_game() -> JudgeGame:
    built = build_game("numbers", slug="judges", cities=3, size=8, seed=5)
    game = built.game
    do_open_game_inboxes(game, acting_user=built.procurator, now=DAY1 - timedelta(hours=1))
    game = do_set_game_status(game, GameStatus.RUNNING, day_number=1, acting_user=built.procurator,
                              now=DAY1 - timedelta(minutes=30))
    return JudgeGame(
        game=game, procurator=built.procurator, arbiter=StaffRole.objects.get(game=game, kind=StaffKind.ARBITER).user,
        tribunes={r.city.number: r.user for r in StaffRole.objects.filter(game=game, kind=StaffKind.TRIBUNE)
                  .select_related("city", "user")},
        cities={c.number: c for c in City.objects.filter(game=game)},
    )
