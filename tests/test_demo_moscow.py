"""The demo of ``make run`` is in Europe/Moscow and on day 2 with its voting ahead, whatever the hour it is loaded
at (L-DAY-1..3)."""
import random
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Concat

from cities import clock
from cities.models import Game, GameDay, GameStatus
from rulesets.lepra.demo import DEMO_SLUG, DEMO_TIME_ZONE, DEMO_VOTING, demo_day_two, load_demo_game
from tests.conftest import DEMO_SEED
from rulesets.lepra.models import VotingSession


@pytest.mark.parametrize("moscow_hour", [0, 3, 7, 8, 10, 13, 15, 16, 19, 21, 23])
def test_the_demo_is_in_moscow_on_day_two_with_voting_ahead_at_any_hour_L_DAY_1_L_DAY_3(moscow_hour):
    zone = ZoneInfo("Europe/Moscow")
    now = datetime(2026, 11, 20, moscow_hour, 30, tzinfo=zone).astimezone(UTC)
    starts, calendar_days = demo_day_two(now)
    ends = clock.day_end(zone, starts, calendar_days=calendar_days)
    voting_day = clock.local_date(zone, ends) - timedelta(days=1)
    opens, closes = (clock.at_local(zone, voting_day, wall) for wall in DEMO_VOTING)
    assert DEMO_TIME_ZONE == "Europe/Moscow"
    assert starts.astimezone(zone).time() == time(7, 0) and starts + timedelta(hours=1) <= now
    assert now + timedelta(hours=2) <= opens < closes <= ends
    assert calendar_days == (1 if 8 <= moscow_hour < 16 else 2)


@pytest.mark.parametrize("moscow_hour", [23, 2])
def test_the_lively_demo_loaded_late_is_on_a_long_day_two_in_moscow_with_voting_ahead_L_DAY_2(
        moscow_hour, django_db_blocker, django_db_setup):
    """Loaded by ``make run`` at 23:00 or 02:00 Moscow (time_machine): the game is in Europe/Moscow, running on
    day 2 (a long day of two calendar days that started at 07:00), and every city's voting is ahead."""
    zone = ZoneInfo("Europe/Moscow")
    moment = datetime(2026, 11, 20, moscow_hour, 0, tzinfo=zone)
    with django_db_blocker.unblock(), transaction.atomic(), time_machine.travel(moment, tick=False):
        Game.objects.filter(slug=DEMO_SLUG).update(slug="quiet-demo")
        get_user_model().objects.update(username=Concat(Value("q-"), F("username")),
                                        email=Concat(Value("q-"), F("email")),
                                        display_name_key=Concat(Value("q-"), F("display_name_key")))
        EmailAddress.objects.update(email=Concat(Value("q-"), F("email")))
        demo = load_demo_game(rng=random.Random(DEMO_SEED), lively=True)
        game = Game.objects.get(pk=demo.game.pk)
        assert (game.time_zone, game.status, game.day_number) == ("Europe/Moscow", GameStatus.RUNNING, 2)
        day2 = GameDay.objects.get(game=game, number=2)
        started = day2.started_at.astimezone(zone)
        assert (started.time(), day2.calendar_days) == (time(7, 0), 2)
        assert started.date() == (moment.date() if moscow_hour >= 8 else moment.date() - timedelta(days=1))
        assert day2.started_at < moment < day2.ends_at
        voting_date = started.date() + timedelta(days=1)
        for city in game.cities.all():
            session = VotingSession.objects.get(city=city, day=2)
            assert session.opens_at.astimezone(zone) == datetime.combine(voting_date, time(18, 0), tzinfo=zone)
            assert session.closes_at.astimezone(zone) == datetime.combine(voting_date, time(22, 0), tzinfo=zone)
            assert session.opens_at > moment
        transaction.set_rollback(True)
