"""Statement budget of a night's end and the next day's start (DESIGN.md "Tests": query-count aware; the
benchmark's "night resolution + daily post", README "Benchmark"): resolving night 2 of a Lepra game, its deaths,
the judge elections of the night and the morning (every city's at once: one clock batch each, the elections
failing without candidates and scheduled again), the daily post and the rollover of the city inboxes run a fixed
number of statements whatever the number of cities: the same work at 3, 10 and 30 cities costs exactly the same (no
N+1 over deaths, cities, inboxes, judges or clock events). Counted as the bench counts them, less the savepoints of
the test's own transaction."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection

from bench import world as bench_world
from cities.models import GameEvent, Resident
from cities.scheduler import advance_clock, dispatch_due_events
from rulesets.lepra.models import JudgeElection

#: The pinned budget: a night's end and the next day's start run ``BASE + PER_CITY * cities`` statements. Lower
#: them when a cut lands; never raise them without saying why in the commit.
BASE = 144
PER_CITY = 0


def _statements_of_the_night(cities: int) -> tuple[int, object]:
    night = bench_world.build_night_game(f"stmts{cities}", cities=cities, size=5,
                                         first_day=datetime(2031, 1, 5, 9, tzinfo=UTC))
    dispatch_due_events(now=night.night_start)
    statements: list[str] = []

    def counter(execute, sql, params, many, context):
        head = sql.lstrip().upper()
        # SQLite caps a statement's parameters, so Django sends one bulk INSERT in batches there: a batch that
        # continues the INSERT before it is the same statement on PostgreSQL, counted once.
        continued = head.startswith("INSERT") and statements and \
            statements[-1].split(" VALUES ")[0] == sql.split(" VALUES ")[0]
        if not head.startswith(("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT")) and not continued:
            statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(counter):
        advance_clock(night.until, game=night.game)
    return len(statements), night


@pytest.mark.parametrize("cities", [3, 10, 30])
def test_night_end_and_day_start_cost_the_same_at_3_10_and_30_cities_L_NIGHT_6(db, cities):
    count, night = _statements_of_the_night(cities)
    # The night resolved with one victim per city (L-NIGHT-6) and day 3 started with its daily post (L-POST-2).
    assert GameEvent.objects.filter(game=night.game, kind="night.resolved", payload__night=2).count() == 1
    assert GameEvent.objects.filter(game=night.game, kind="clock.day_started", payload__day=3).count() == 1
    assert Resident.objects.filter(game=night.game, status="dead").count() == cities
    # Every city's election of the night opened and closed (failed, no candidate: L-JUDGE-5) and the next round
    # is scheduled in every city (L-DAY-4), each clock event run and audited on its own.
    for kind in ("scheduler.election_open", "scheduler.election_close", "election.closed"):
        assert GameEvent.objects.filter(game=night.game, kind=kind, at__gt=night.night_start).count() == cities
    assert JudgeElection.objects.filter(game=night.game, closed_at__isnull=True, cancelled_at__isnull=True,
                                        opened_at__isnull=True).count() == cities
    assert count == BASE + PER_CITY * cities
