"""Chaos with the real stack (DESIGN.md "The clock"): a real Celery worker and beat run a game's day 2 voting, night 2
and day 3 start, once undisturbed and once through chaos; every outcome must be the same.

The game (the night game of ``tests/roles``: 3 cities of 5, godfathers, judges, commissars) is built through the
services with all human input made in the past: nominations and accepted proxy votes in two cities (a proxy-only
tie, L-VOTE-5), the Tribunes' voting windows on day 2, the godfathers' kills for night 2. Day 3 is a long day, so
the plan after its start lies in the future. The stack ran until 21:00 on day 2 (the votings opened, proxies were
cast, city 2 voted) and was down across the votings' close, the night's end and the day start (a vote sent after
the planned close, while the stack was down, is refused); then:

- undisturbed: one worker and one beat catch up;
- chaos: two beats at once; the worker's connection is terminated (``pg_terminate_backend``) in the middle of the
  voting close; the worker is killed (SIGKILL) in the middle of the night's resolution, after its kills were
  written; a new worker starts; then everything is stopped and started again.

Compared: deaths, the voting results (votes counted, leader, ties), the daily post's draft, the order of the runs,
exactly one audit row per run. Measured and printed: the time the game needs to recover after the worker is killed
(the night's resolution done), and the longest a player's post waits while a handler is stuck holding its locks.
The chaos worker is ``tests/integration/chaos_app.py``. PostgreSQL for the full form (the dropped connection and
the post timings need real row locks); on SQLite the same run without those two steps.
"""
from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from datetime import datetime, timedelta
from datetime import time as wall_time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from cities.models import City, GameDay, GameEvent, Resident, ScheduledEvent, StaffRole
from cities.scheduler import advance_clock
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from kernel.errors import RuleViolation
from rulesets.lepra.clock.services import do_declare_long_day, do_start_game_clock
from rulesets.lepra.day.services import do_accept_proxy, do_nominate, do_request_proxy, do_schedule_voting
from rulesets.lepra.night.services import do_submit_night_decision
from rulesets.lepra.models import VotingSession
from rulesets.lepra.staff_kinds import StaffKind
from tests.integration.celery_helpers import _celery_command, subprocess_env

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

MOSCOW = ZoneInfo("Europe/Moscow")
ON_POSTGRES = connection.vendor == "postgresql"


def _at(day, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, wall_time(hour, minute), tzinfo=MOSCOW)


def build_scenario(slug: str):
    """The game described in the module docstring; returns the ``NightGame``."""
    from tests.rulesets.lepra.night.conftest import build_night_game

    ng = build_night_game(slug)
    game = ng.game
    today = timezone.now().astimezone(MOSCOW).date()
    day2, day3 = today - timedelta(days=2), today - timedelta(days=1)
    morning = _at(day2, 9)
    do_start_game_clock(game, first_day_starts_at=_at(day3, 10), acting_user=ng.procurator, now=morning)
    do_declare_long_day(game, 3, 3, acting_user=ng.procurator, now=morning)
    users = get_user_model().objects
    for number, (nominees, proxies) in {1: ((ng.honest[1][0], ng.mafia[1][0]),
                                            ((ng.judge[1], 1), (ng.honest[1][1], 0), (ng.commissar[1], 0),
                                             (ng.honest[1][0], 1))),
                                        2: ((ng.honest[2][1],), ((ng.judge[2], 0), (ng.commissar[2], 0)))}.items():
        city = ng.cities[number - 1]
        tribune = StaffRole.objects.get(city=city, kind=StaffKind.TRIBUNE).user
        nominators = [r for r in Resident.objects.filter(city=city).order_by("pk") if r not in nominees]
        for i, nominee in enumerate(nominees):
            do_nominate(nominee, acting_user=users.get(pk=nominators[i].user_id), now=_at(day2, 11, i))
        for i, (voter, which) in enumerate(proxies):
            proxy = do_request_proxy(nominees[which], acting_user=users.get(pk=voter.user_id), now=_at(day2, 12, i))
            do_accept_proxy(proxy, acting_user=tribune, now=_at(day2, 13, i))
        do_schedule_voting(city, _at(day2, 18), _at(day2, 22), acting_user=tribune, now=_at(day2, 14))
    # The stack ran until 21:00 on day 2 (the same dispatcher, in this process): the votings opened, the proxies
    # were cast at the opening; city 2 votes; then the stack went down, across the close and the night's end.
    advance_clock(_at(day2, 21), game=game)
    voting2 = Inbox.objects.get(game=game, kind=LepraInboxKind.VOTING, resident=ng.honest[2][1])
    for minute, (voter, text) in enumerate(((ng.honest[2][0], "казнить"), (ng.mafia[2][0], "казнить"),
                                            (ng.judge[2], "не казнить"), (ng.judge[2], "казнить"))):
        do_post_message(voting2, text, acting_user=users.get(pk=voter.user_id), now=_at(day2, 19, minute))
    with pytest.raises(RuleViolation):  # after the planned close, the page answers while the stack is down
        do_post_message(voting2, "не казнить", acting_user=users.get(pk=ng.mafia[2][0].user_id),
                        now=_at(day2, 22, 5))
    # Night 2 (planned from 00:00): the godfathers decide while the stack is down; a decision is judged by the
    # planned night, whatever the handlers' delay.
    do_submit_night_decision(ng.cities[0], ng.honest[1][1], acting_user=ng.godfather[1].user, now=_at(day3, 1))
    do_submit_night_decision(ng.cities[1], ng.honest[2][0], acting_user=ng.godfather[2].user, now=_at(day3, 2))
    return ng


def outcome(game) -> dict:
    """Everything the players see of the run, with residents as their index in the game (by id)."""
    residents = list(Resident.objects.filter(game=game).order_by("pk"))
    index = {str(r.pk): i for i, r in enumerate(residents)}
    names = {r.name: f"<{i}>" for i, r in enumerate(residents)}

    def anonymous(text: str) -> str:
        for name in sorted(names, key=len, reverse=True):
            text = text.replace(name, names[name])
        return text

    results = {}
    for session in VotingSession.objects.filter(game=game).select_related("city").order_by("city__number"):
        result = session.result or {}
        results[session.city.number] = {
            "leader": index.get(result.get("leader")), "tied": [index[k] for k in result.get("tied_leaders", [])],
            "counts": sorted((index[t["nominee"]], t["count"], tuple(sorted(index[v] for v in t["voters"])))
                             for t in result.get("nominees", [])),
            "opened": session.opened_at is not None, "closed": session.closed_at is not None}
    draft = GameDay.objects.get(game=game, number=3).post
    game.refresh_from_db()
    return {
        "day": game.day_number,
        "dead": sorted((i, r.status) for i, r in enumerate(residents) if r.status != "alive"),
        "results": results,
        "post": (anonymous(draft.title), anonymous(draft.body)) if draft else None,
        "runs": [(e.kind, e.payload.get("day") or e.payload.get("night")) for e in
                 ScheduledEvent.objects.filter(game=game, done_at__isnull=False).order_by("done_at", "id")],
    }


def caught_up(game) -> bool:
    game.refresh_from_db()
    return game.day_number == 3 and not ScheduledEvent.objects.filter(
        game=game, done_at__isnull=True, cancelled_at__isnull=True, due_at__lte=timezone.now()).exists()


def wait_for(predicate, processes, timeout: float, what: str) -> None:  # noqa: F811
    deadline = time.monotonic() + timeout
    while not predicate():
        processes.check_alive()
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not reached within {timeout} s\n{processes.output()}")
        time.sleep(0.2)


def assert_each_run_audited_once(game) -> None:
    done = list(ScheduledEvent.objects.filter(game=game, done_at__isnull=False).values_list("pk", flat=True))
    runs = list(GameEvent.objects.filter(game=game, kind__startswith="scheduler.").exclude(
        kind__in=["scheduler.event_failed", "scheduler.event_crashed", "scheduler.event_waits",
                  "scheduler.post_published", "scheduler.retry_requested"]).values_list("payload__event", flat=True))
    assert sorted(runs) == sorted(done)


#: The back-off of a crashed attempt in this test's processes (``MAFIA_EVENT_CRASH_RETRY_SECONDS``).
CRASH_RETRY_SECONDS = 10


class Stack:
    """Worker(s) and beat(s) of one run, on the test's database and a private broker."""

    def __init__(self, processes, tmp_path: Path, name: str) -> None:  # noqa: F811
        self.processes, self.tmp_path, self.name = processes, tmp_path, name
        self.chaos_dir = tmp_path / f"chaos-{name}"
        self.chaos_dir.mkdir()
        # A crashed attempt is retried after CRASH_RETRY_SECONDS (the site's default is 30 s): the recovery this
        # test waits for after it kills the worker.
        self.env = {**subprocess_env(tmp_path), "CHAOS_DIR": str(self.chaos_dir),
                    "MAFIA_EVENT_CRASH_RETRY_SECONDS": str(CRASH_RETRY_SECONDS)}
        self.count = 0

    def worker(self, app_name: str):
        self.count += 1
        label = f"{self.name}-worker-{self.count}"
        proc = self.processes.start(label, [*_celery_command(), "-A", "tests.integration.chaos_app", "worker",
                                            "--loglevel=INFO", "--pool=solo", "-n", f"{label}-{uuid.uuid4().hex[:6]}@%h",
                                            "--without-mingle", "--without-gossip", "--without-heartbeat"],
                                    {**self.env, "PGAPPNAME": app_name})
        self.processes.wait_for_line(label, "CHAOS handlers installed", timeout=90)
        return label, proc

    def beat(self, n: int):
        label = f"{self.name}-beat-{n}-{self.count}"
        self.count += 1
        return label, self.processes.start(label, [*_celery_command(), "-A", "mafia_site", "beat", "--loglevel=INFO",
                                                   "-s", str(self.tmp_path / f"{label}-schedule")], self.env)

    def stop_all(self) -> None:
        for _name, proc, _log in self.processes.started:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _name, proc, _log in self.processes.started:
            try:
                proc.wait(timeout=30)
            except Exception:  # noqa: BLE001 - a process that ignores SIGTERM is killed
                proc.kill()
                proc.wait(timeout=15)
        self.processes.started.clear()


def post_waits(game) -> float:
    """Seconds the longest of three player posts waits (a city inbox, a personal inbox, the office) while a
    handler of ``game`` is stuck; a post that fails counts as the time it took."""
    longest = 0.0
    users = get_user_model().objects
    living = Resident.objects.filter(game=game, status="alive", city__number=3).order_by("pk").first()
    city = City.objects.get(game=game, number=3)
    targets = [
        (Inbox.objects.filter(city=city, kind=LepraInboxKind.CITY, killed_at__isnull=True).order_by("-pk").first(),
         users.get(pk=living.user_id)),
        (Inbox.objects.filter(kind=LepraInboxKind.PERSONAL, resident=living, killed_at__isnull=True).first(),
         users.get(pk=living.user_id)),
        (Inbox.objects.filter(game=game, kind=LepraInboxKind.OFFICE).first(),
         StaffRole.objects.get(game=game, kind=StaffKind.PROCURATOR).user),
    ]
    for inbox, user in targets:
        started = time.perf_counter()
        try:
            do_post_message(inbox, "Мы ещё здесь?", acting_user=user)
        except Exception as exc:  # noqa: BLE001 - measured, then reported
            print(f"post in {inbox.kind} failed: {type(exc).__name__}: {exc}")
        longest = max(longest, time.perf_counter() - started)
    return longest


def test_chaos_run_ends_with_the_same_outcome_as_an_undisturbed_run_DESIGN_clock(
        processes, only_our_events, tmp_path):
    # The undisturbed run.
    calm = build_scenario("calm").game
    stack = Stack(processes, tmp_path, "calm")
    stack.worker("calm-worker")
    stack.beat(1)
    wait_for(lambda: caught_up(calm), processes, 120, "the undisturbed catch-up")
    stack.stop_all()
    expected = outcome(calm)
    assert expected["day"] == 3 and len(expected["dead"]) == 2, expected
    assert expected["results"][1]["tied"] and expected["results"][1]["closed"], expected  # the proxy-only tie
    assert [c[1] for c in expected["results"][2]["counts"]] == [4], expected  # the late retraction not counted
    assert_each_run_audited_once(calm)

    # The chaos run: the same game, the stack down across the voting window and the night end.
    game = build_scenario("chaos").game
    stack = Stack(processes, tmp_path, "chaos")
    if ON_POSTGRES:
        (stack.chaos_dir / "hang-voting_close").touch()
    (stack.chaos_dir / "hang-night_end-2").touch()
    first, worker = stack.worker("chaos-worker-1")
    stack.beat(1)
    stack.beat(2)  # two beats at once: every tick twice
    measures = {}
    if ON_POSTGRES:
        processes.wait_for_line(first, "CHAOS HANG voting_close", timeout=120)
        measures["post_wait_voting_close_s"] = post_waits(game)
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
                           ["chaos-worker-1"])
            assert cursor.fetchone()[0] >= 1
    processes.wait_for_line(first, "CHAOS HANG night_end-2", timeout=180)
    night_end = ScheduledEvent.objects.get(game=game, kind="night_end", payload__night=2)
    if ON_POSTGRES:
        measures["post_wait_night_end_s"] = post_waits(game)
    os.kill(worker.pid, signal.SIGKILL)  # the worker dies inside the night's resolution, after its kills
    killed_at = timezone.now()
    worker.wait(timeout=30)
    processes.started[:] = [s for s in processes.started if s[1] is not worker]
    night_end.refresh_from_db()
    assert night_end.done_at is None and night_end.attempts >= 1  # the attempt left its trace
    assert not GameEvent.objects.filter(game=game, kind="night.resolved").exists()  # nothing half-applied
    stack.worker("chaos-worker-2")
    wait_for(lambda: ScheduledEvent.objects.filter(pk=night_end.pk, done_at__isnull=False).exists(), processes,
             180, "the night's resolution after the kill")
    night_end.refresh_from_db()
    measures["recovery_after_kill_s"] = (night_end.done_at - killed_at).total_seconds()
    # Everything stops again, and starts again.
    stack.stop_all()
    time.sleep(2)
    stack.worker("chaos-worker-3")
    stack.beat(3)
    wait_for(lambda: caught_up(game), processes, 180, "the chaos catch-up")
    stack.stop_all()
    print(f"CHAOS MEASURES {measures}")

    assert outcome(game) == expected
    assert_each_run_audited_once(game)
    assert GameEvent.objects.filter(game=game, kind="scheduler.event_crashed", payload__event=night_end.pk).exists()
    # The crash back-off (doubled at most once more while the event waits) and a tick, with slack.
    assert measures["recovery_after_kill_s"] < 2 * CRASH_RETRY_SECONDS + 5
    if ON_POSTGRES:
        assert max(measures["post_wait_voting_close_s"], measures["post_wait_night_end_s"]) < 2, measures
    print(f"python {sys.version.split()[0]}; database {connection.vendor}")
