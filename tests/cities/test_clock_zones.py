"""Time zone and daylight-saving traps of the phase plan (issue 6 tests; RULES.md L-DAY-1, L-DAY-3).

A Europe/Moscow game's 00:00 limit is 21:00 UTC every day of the year (Moscow keeps UTC+3); a Europe/London game
across the last Sunday of October (31 October 2027: BST ends at 02:00, clocks go back to 01:00) keeps its local
times: day start 10:00 and the 00:00 limit, on both sides of the change.
"""
from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cities import clock
from cities.models import GameDay, ScheduledEvent
from rulesets.lepra.clock.services import voting_window_limits
from tests.cities.clock_helpers import advance, clocked_game, night_handler

MOSCOW, LONDON = ZoneInfo("Europe/Moscow"), ZoneInfo("Europe/London")


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


@given(st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2035, 12, 31), timezones=st.just(UTC)))
def test_moscow_00_00_limit_is_21_00_utc_every_day_L_DAY_3(moment):
    midnight = clock.midnight_after(MOSCOW, moment)
    assert (midnight.hour, midnight.minute, midnight.second, midnight.microsecond) == (21, 0, 0, 0)
    assert midnight.tzinfo == UTC
    assert timedelta(0) < midnight - moment <= timedelta(days=1)


def test_moscow_plan_of_a_whole_year_ends_every_day_at_21_00_utc_L_DAY_3():
    days = clock.plan_days(MOSCOW, time(10, 0), 1, utc(2027, 1, 1, 7), 365)
    assert [d.ends_at for d in days] == [utc(2027, 1, 1, 21) + timedelta(days=n) for n in range(365)]
    assert [d.starts_at for d in days] == [utc(2027, 1, 1, 7) + timedelta(days=n) for n in range(365)]
    assert all(d.night_ends_at == d.starts_at + timedelta(hours=23) for d in days)


def test_london_plan_keeps_local_times_across_the_last_sunday_of_october_L_DAY_1():
    days = clock.plan_days(LONDON, time(10, 0), 1, utc(2027, 10, 29, 9), 4)
    assert [(d.starts_at, d.ends_at, d.night_ends_at) for d in days] == [
        (utc(2027, 10, 29, 9), utc(2027, 10, 29, 23), utc(2027, 10, 30, 8)),   # Friday, BST
        (utc(2027, 10, 30, 9), utc(2027, 10, 30, 23), utc(2027, 10, 31, 9)),   # Saturday, BST; its night is 25 h
        (utc(2027, 10, 31, 10), utc(2027, 11, 1, 0), utc(2027, 11, 1, 9)),     # Sunday, GMT from 02:00 BST
        (utc(2027, 11, 1, 10), utc(2027, 11, 2, 0), utc(2027, 11, 2, 9)),      # Monday, GMT
    ]
    for d in days:
        assert d.starts_at.astimezone(LONDON).time() == time(10, 0)
        assert d.ends_at.astimezone(LONDON).time() == time(0, 0)
        assert d.night_ends_at.astimezone(LONDON).time() == time(9, 0)


def test_long_day_over_the_clock_change_ends_at_local_00_00_L_DAY_2():
    assert clock.day_end(LONDON, utc(2027, 10, 30, 9), calendar_days=2) == utc(2027, 11, 1, 0)
    assert clock.day_end(LONDON, utc(2027, 10, 30, 9), calendar_days=3) == utc(2027, 11, 2, 0)
    # A shortened day of 4 hours on the Sunday is 4 real hours, and never past local 00:00.
    assert clock.day_end(LONDON, utc(2027, 10, 31, 10), shortened_hours=4) == utc(2027, 10, 31, 14)
    assert clock.day_end(LONDON, utc(2027, 10, 31, 22), shortened_hours=4) == utc(2027, 11, 1, 0)


def test_day_start_in_the_spring_gap_is_the_instant_before_the_gap_L_DAY_1():
    # 28 March 2027: London clocks jump from 01:00 to 02:00; a 01:30 day start resolves with the pre-gap offset.
    assert clock.at_local(LONDON, date(2027, 3, 28), time(1, 30)) == utc(2027, 3, 28, 1, 30)
    assert clock.at_local(LONDON, date(2027, 3, 29), time(1, 30)) == utc(2027, 3, 29, 0, 30)


@pytest.mark.django_db
def test_london_game_runs_its_days_at_10_00_local_across_the_clock_change_L_DAY_1():
    with night_handler():
        built = clocked_game("london-game", time_zone="Europe/London", first_day=utc(2027, 10, 29, 9))
        game = built.game
        advance(game, utc(2027, 11, 1, 10))
        game.refresh_from_db()
        assert game.day_number == 4
        starts = list(ScheduledEvent.objects.filter(game=game, kind="day_start", done_at__isnull=False)
                      .order_by("due_at").values_list("due_at", "done_at"))
        assert starts == [(t, t) for t in (utc(2027, 10, 29, 9), utc(2027, 10, 30, 9), utc(2027, 10, 31, 10),
                                           utc(2027, 11, 1, 10))]
        ends = list(GameDay.objects.filter(game=game, number__lte=3).order_by("number").values_list("ended_at",
                                                                                                     flat=True))
        assert ends == [utc(2027, 10, 29, 23), utc(2027, 10, 30, 23), utc(2027, 11, 1, 0)]
        assert voting_window_limits(game, 4, utc(2027, 11, 1, 11)) == (utc(2027, 11, 1, 17), utc(2027, 11, 2, 0))


@pytest.mark.django_db
def test_moscow_game_voting_limit_is_21_00_utc_on_every_planned_day_L_DAY_3():
    with night_handler():
        built = clocked_game("moscow-game")
        game = built.game
        advance(game, utc(2027, 3, 8, 7))
        for day in GameDay.objects.filter(game=game, number__lte=8):
            assert voting_window_limits(game, day.number, day.starts_at)[1] == utc(2027, 3, day.number, 21)
