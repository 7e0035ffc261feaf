"""M21's phase shift (RULES.md M-SETUP-2): every planned phase end falls on the game's phase-shift time, the one
nearest to the phase's nominal end; the setup post, the game page and the clock say the same time."""
from __future__ import annotations

from datetime import UTC, datetime, time

import pytest
from django.test import Client

from cities.models import ScheduledEvent
from kernel.errors import InvalidInput
from rulesets.m21 import services
from rulesets.m21.models import DayStatus
from rulesets.m21.service_common import phase_end

from .day_helpers import build_game

pytestmark = pytest.mark.django_db

LONDON = "Europe/London"
SHIFT = time(22, 0)


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_a_hammer_at_05_03_ends_the_night_at_the_next_phase_shift_M_SETUP_2():
    # Nominal end 05:03 the next morning: 22:00 the same evening is 7 h 03 before it, 22:00 the next 16 h 57 after.
    assert phase_end(utc(2026, 1, 7, 5, 3), 24, LONDON, SHIFT) == utc(2026, 1, 7, 22, 0)


def test_a_day_started_at_05_00_ends_at_the_phase_shift_nearest_48_hours_M_SETUP_2():
    assert phase_end(utc(2026, 1, 5, 5, 0), 48, LONDON, SHIFT) == utc(2026, 1, 6, 22, 0)


def test_a_tie_between_two_phase_shifts_takes_the_later_M_SETUP_2():
    # 36 h from 22:00 is 10:00: the 22:00 before and the 22:00 after are both 12 h away.
    assert phase_end(utc(2026, 1, 5, 22, 0), 36, LONDON, SHIFT) == utc(2026, 1, 7, 22, 0)


def test_a_phase_never_ends_at_its_own_start_M_SETUP_2():
    # A 2-hour night started at the shift would round back to its start: it ends at the next shift.
    assert phase_end(utc(2026, 1, 5, 22, 0), 2, LONDON, SHIFT) == utc(2026, 1, 6, 22, 0)


def test_the_phase_shift_stays_at_22_00_london_across_a_change_of_summer_time_M_SETUP_2():
    # Autumn (clocks back on Sun 25 Oct 2026): 22:00 BST Saturday is 21:00 UTC; 22:00 GMT Monday is 22:00 UTC.
    assert phase_end(utc(2026, 10, 24, 21, 0), 48, LONDON, SHIFT) == utc(2026, 10, 26, 22, 0)
    # Spring (clocks forward on Sun 29 Mar 2026): 22:00 GMT Saturday -> 22:00 BST Monday = 21:00 UTC.
    assert phase_end(utc(2026, 3, 28, 22, 0), 48, LONDON, SHIFT) == utc(2026, 3, 30, 21, 0)
    # A night across the change: 22:00 BST Saturday + 24 h is 21:00 GMT Sunday; the shift is 22:00 GMT.
    assert phase_end(utc(2026, 10, 24, 21, 0), 24, LONDON, SHIFT) == utc(2026, 10, 25, 22, 0)


def test_the_phase_shift_is_the_hosts_setting_in_the_games_zone_M_SETUP_2():
    assert phase_end(utc(2026, 1, 5, 5, 0), 48, "Europe/Moscow", time(20, 0)) == utc(2026, 1, 7, 17, 0)


def deadline_events(game, kind):
    return list(ScheduledEvent.objects.filter(game=game, kind=kind, cancelled_at__isnull=True)
                .order_by("due_at").values_list("due_at", flat=True))


def test_a_first_day_started_at_05_00_ends_at_22_00_on_the_post_the_page_and_the_clock_M_SETUP_2():
    start = utc(2026, 1, 5, 5, 0)
    table = build_game(first_day_starts_at=start)
    day = table.day(1)
    deadline = utc(2026, 1, 6, 22, 0)
    assert day.deadline == deadline
    assert deadline_events(table.game, "m21_day_deadline") == [deadline]
    setup_post = table.game.m21.setup_post.body
    assert ("Day 1 starts Mon 5 Jan 2026, 05:00 GMT and ends at the deadline, "
            "Tue 6 Jan 2026, 22:00 GMT, unless the hammer falls first.") in setup_post
    assert "phases shift at 22:00 Europe/London: every phase ends at the phase shift nearest" in setup_post
    assert table.thread.messages.filter(
        body__startswith="**Day 1 has begun.** It ends at the deadline, Tue 6 Jan 2026, 22:00 GMT").exists()
    client = Client()
    client.force_login(table.users["Alice"])
    page = client.get(f"/games/{table.game.slug}/m21/").content.decode()
    assert 'datetime="2026-01-06T22:00:00+00:00"' in page


def test_after_a_hammer_at_05_03_the_night_and_the_next_day_end_on_phase_shifts_M_SETUP_2():
    table = build_game()
    # Day 1 began at 22:00 on 5 Jan; the hammer falls at 05:03 on 7 Jan.
    table.now = utc(2026, 1, 7, 5, 2, 55)
    voters = [n for n in table.users if n != "Bob"][:4]
    for name in voters:
        table.post(name, "##VOTE Bob\n##END")
    day = table.day(1)
    assert day.status == DayStatus.DECIDED and day.ended_at.replace(second=0) == utc(2026, 1, 7, 5, 2)
    night_end = utc(2026, 1, 7, 22, 0)
    assert deadline_events(table.game, "m21_night_end") == [night_end]
    assert table.thread.messages.filter(
        body="**Night 1 has begun.** It ends at Wed 7 Jan 2026, 22:00 GMT.").exists()
    table.run_clock(night_end)
    day2 = table.day(2)
    assert (day2.starts_at, day2.deadline) == (night_end, utc(2026, 1, 9, 22, 0))


def test_the_hosts_extension_moves_one_deadline_and_the_next_phase_lands_on_a_phase_shift_M_SETUP_2():
    table = build_game()
    new = services.do_extend_m21_phase(table.game, 3, acting_user=table.host, now=table.tick())
    assert new == utc(2026, 1, 8, 1, 0)
    assert deadline_events(table.game, "m21_day_deadline") == [new]
    table.run_clock(new)
    # The night starts at 01:00 and its nominal end is 01:00 the next night: the 22:00 before it is nearer.
    assert deadline_events(table.game, "m21_night_end") == [utc(2026, 1, 8, 22, 0)]


def test_a_night_across_the_autumn_change_of_summer_time_ends_at_22_00_london_M_SETUP_2():
    # Day 1 starts at 22:00 BST on Friday 23 Oct 2026 (21:00 UTC); the clocks go back on Sunday 25 Oct, so 48 h
    # later is 21:00 GMT on Sunday and the nearest phase shift is 22:00 GMT (22:00 UTC).
    start = utc(2026, 10, 23, 21, 0)
    table = build_game(first_day_starts_at=start)
    deadline = utc(2026, 10, 25, 22, 0)
    assert table.day(1).deadline == deadline
    assert deadline_events(table.game, "m21_day_deadline") == [deadline]
    table.run_clock(deadline)
    assert deadline_events(table.game, "m21_night_end") == [utc(2026, 10, 26, 22, 0)]
    assert table.thread.messages.filter(
        body="**Night 1 has begun.** It ends at Mon 26 Oct 2026, 22:00 GMT.").exists()


@pytest.mark.django_db
def test_a_first_day_more_than_a_year_ahead_is_refused_in_words_M_SETUP_2():
    with pytest.raises(InvalidInput, match="The first day must start within a year."):
        build_game(slug="m21-far", first_day_starts_at=datetime(9999, 12, 31, 23, 59, tzinfo=UTC))
