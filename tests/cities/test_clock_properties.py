"""Generated phase plans (DESIGN.md "The clock"; RULES.md L-DAY-3, L-NIGHT-6, L-POST-2): random court deadlines,
judge elections closing after midnight, long days and outages never resolve a night before it starts and never
count an action after its cut-off.

The pure rule (``cities.clock.night_after``) is checked over arbitrary instants; the whole clock over generated
runs of one night of the real Lepra night game (``tests/roles``) with the real resolution, each example in a
savepoint that is rolled back.
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from cities import clock, scheduler
from cities.models import GameDay, LifeStatus, Resident, ScheduledEvent
from cities.scheduler import dispatch_due_events
from kernel.errors import WrongState
from rulesets.lepra.models import NightResolution
from rulesets.lepra.clock.services import do_declare_long_day, do_replan_clock, do_start_game_clock
from rulesets.lepra.night.services import do_submit_night_decision

BASE = datetime(2027, 3, 2, tzinfo=UTC)


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


# ----------------------------------------------------------------------------------------------------------------
# The pure rule
# ----------------------------------------------------------------------------------------------------------------

instants = st.integers(min_value=0, max_value=3 * 24 * 60).map(lambda m: BASE + timedelta(minutes=m))


@given(ends_at=instants, hold=st.one_of(st.none(), st.integers(0, 20 * 60)), night=st.integers(30, 40 * 60),
       window=st.integers(0, 120))
def test_a_held_night_moves_its_end_and_the_next_day_in_order_L_DAY_3(ends_at, hold, night, window):
    next_starts_at = ends_at + timedelta(minutes=night)
    night_starts_at = None if hold is None else ends_at + timedelta(minutes=hold)
    resolved, following = clock.night_after(ends_at, night_starts_at, next_starts_at,
                                            edit_window=timedelta(minutes=window))
    planned = clock.night_end(ends_at, next_starts_at)
    assert resolved >= planned and following >= next_starts_at  # never earlier than the unmoved plan
    assert ends_at <= resolved <= following
    if night_starts_at is not None and night_starts_at > ends_at:
        assert resolved >= night_starts_at + clock.MIN_NIGHT  # resolved only after a real night
        assert following >= resolved + timedelta(minutes=window)  # the Procurator's edit window
    else:
        assert (resolved, following) == (planned, next_starts_at)


# ----------------------------------------------------------------------------------------------------------------
# The whole clock over generated runs
# ----------------------------------------------------------------------------------------------------------------

@pytest.fixture
def clocked_night(db):
    """Three cities of five on day 2 (2 March 2027 from 10:00 MSK) on the real clock, night 2 planned to end at
    09:00 MSK; handlers for deadlines of the day that only mark them."""
    from tests.rulesets.lepra.night.conftest import build_night_game

    ng = build_night_game("generated")
    do_start_game_clock(ng.game, first_day_starts_at=utc(2027, 3, 3, 7), acting_user=ng.procurator,
                        now=utc(2027, 3, 2, 8))
    ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True).exclude(game=ng.game).update(
        cancelled_at=utc(2027, 3, 2, 8))
    saved = dict(scheduler.HANDLERS)
    for kind in ("court_deadline", "election_close"):
        scheduler.HANDLERS[kind] = lambda event, now: "decided"
    yield ng
    scheduler.HANDLERS.clear()
    scheduler.HANDLERS.update(saved)


minutes_after_midnight = st.integers(min_value=0, max_value=13 * 60)  # until 13:00 MSK on 3 March
outage = st.tuples(st.integers(min_value=0, max_value=12 * 60), st.integers(min_value=30, max_value=8 * 60))


class _Rollback(Exception):
    pass


@settings(max_examples=8, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(court=st.one_of(st.none(), minutes_after_midnight), election=st.one_of(st.none(), minutes_after_midnight),
       long_day=st.booleans(), outages=st.lists(outage, max_size=2),
       decisions=st.lists(st.tuples(st.integers(min_value=-60, max_value=16 * 60), st.booleans()), max_size=5))
def test_generated_plans_never_resolve_a_night_before_it_starts_nor_count_a_late_action_L_NIGHT_6(
        clocked_night, court, election, long_day, outages, decisions):
    ng = clocked_night
    game, city = ng.game, ng.cities[0]
    midnight = utc(2027, 3, 2, 21)  # 00:00 MSK: day 2 ends (unless long)
    try:
        with transaction.atomic():
            if long_day:  # day 3 lasts two calendar days: its night and day 4 move too
                do_declare_long_day(game, 3, 2, acting_user=ng.procurator, now=utc(2027, 3, 2, 9))
            for kind, offset, key in (("court_deadline", court, "case"), ("election_close", election, "election")):
                if offset is not None:  # laid out during the day, like do_put_before_court / an election
                    ScheduledEvent.objects.create(game=game, kind=kind, due_at=midnight + timedelta(minutes=offset),
                                                  payload={key: 0}, created_at=utc(2027, 3, 2, 12))
            do_replan_clock(game, reason="test", now=utc(2027, 3, 2, 12))
            down = [(midnight + timedelta(minutes=s - 60), midnight + timedelta(minutes=s - 60 + n))
                    for s, n in outages]
            timeline = [(midnight + timedelta(minutes=m), "submit", i, target)
                        for i, (m, target) in enumerate(decisions)]
            tick = utc(2027, 3, 2, 19)
            while tick <= utc(2027, 3, 3, 18):
                if not any(a <= tick < b for a, b in down):
                    timeline.append((tick, "tick", 0, False))
                tick += timedelta(minutes=30)
            accepted, refused = [], []
            for at, what, i, second in sorted(timeline, key=lambda item: (item[0], item[1] == "tick", item[2])):
                if what == "tick":
                    dispatch_due_events(now=at)
                    continue
                game.refresh_from_db()
                if game.day_number != 2:  # day 3 has started: a decision now is for night 3, not tested here
                    continue
                target = ng.honest[1][1 if second else 0]
                try:
                    do_submit_night_decision(city, target, acting_user=ng.godfather[1].user, now=at)
                except WrongState:
                    refused.append((at, target.pk))
                else:
                    accepted.append((at, target.pk))
            day2 = GameDay.objects.get(game=game, number=2)
            resolution = NightResolution.objects.get(game=game, night=2)
            # A night is never resolved before it starts, and never before its planned end.
            assert day2.ended_at is not None and resolution.resolved_at >= day2.ended_at
            assert resolution.resolved_at >= day2.night_ends_at
            held_by = [midnight + timedelta(minutes=d) for d in (court, election) if d is not None]
            assert all(day2.ended_at >= d for d in held_by if d < utc(2027, 3, 3, 7))  # before day 3's 10:00
            # No action counts outside its night: accepted within the planned night, refused outside it.
            start, cutoff = day2.night_starts_at or day2.ends_at, day2.night_ends_at
            assert all(start <= at < cutoff for at, _t in accepted)
            assert all(not start <= at < cutoff for at, _t in refused)
            killed = {d["resident"] for d in resolution.outcome["deaths"]}
            assert killed == ({accepted[-1][1]} if accepted else set())
            for pk in {ng.honest[1][0].pk, ng.honest[1][1].pk} - killed:
                assert Resident.objects.get(pk=pk).status == LifeStatus.ALIVE
            # The daily post is drafted after the resolution, and the day starts after the night.
            day3 = GameDay.objects.get(game=game, number=3)
            assert day3.post.created_at >= resolution.resolved_at
            assert day3.started_at >= day3.post.created_at and day3.starts_at >= day2.night_ends_at
            raise _Rollback
    except _Rollback:
        pass
