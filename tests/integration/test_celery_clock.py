"""The game clock with real processes (DESIGN.md "The clock"; RULES.md L-POST-2).

These tests start real subprocesses against the test database: a Celery worker and beat (the beat entry of
``mafia_site.celery`` every second), and two ``manage.py run_due_events`` racing each other. They run on both
stacks of DESIGN.md "Settings and services":

- no environment: SQLite (the test settings' file database, handed to the subprocesses as ``SQLITE_PATH``) and
  kombu's filesystem broker in a private ``MAFIA_VAR_DIR``;
- ``DATABASE_URL`` / ``REDIS_URL``: PostgreSQL (pytest-django's ``test_<name>`` database, handed over as
  ``DATABASE_URL``) and Redis.

The tests are transactional (the subprocesses must see committed rows); the session's demo game
(tests/conftest.py) has a scheduled post that is due in real time, so the ``only_our_events`` fixture cancels
pending events that are not ours (the flush after the test removes them anyway).
"""
from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from collections import Counter
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from cities.models import GameEvent, PublicPost, ScheduledEvent
from cities.services import do_create_game, do_schedule_public_post
from tests.integration.celery_helpers import (
    POLL_SECONDS,
    _celery_command,
    _Gate,
    subprocess_env,
)

# xdist_group: all tests that start processes run on one worker, one at a time (tests/conftest.py).
pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("processes")]


# ----------------------------------------------------------------------------------------------------------------
# Subprocesses
# ----------------------------------------------------------------------------------------------------------------


def make_game(slug: str):
    procurator = get_user_model().objects.create_user(f"{slug}-procurator", f"{slug}@example.com", "x-secret-123")
    return do_create_game(title=f"Game {slug}", slug=slug, acting_user=procurator), procurator


# ----------------------------------------------------------------------------------------------------------------
# Beat + worker
# ----------------------------------------------------------------------------------------------------------------

def test_celery_beat_and_worker_publish_a_scheduled_post_once_at_due_time_L_POST_2(processes, only_our_events,
                                                                                   tmp_path):
    game, procurator = make_game("celery-clock")
    env = subprocess_env(tmp_path)
    celery = _celery_command()
    processes.start("worker", [*celery, "-A", "mafia_site", "worker", "--loglevel=INFO", "--pool=solo",
                               "-n", f"clocktest-{uuid.uuid4().hex[:8]}@%h",
                               "--without-mingle", "--without-gossip", "--without-heartbeat"], env)
    processes.start("beat", [*celery, "-A", "mafia_site", "beat", "--loglevel=INFO",
                             "-s", str(tmp_path / "beat-schedule")], env)
    processes.wait_for_line("worker", " ready.", timeout=60)

    now = timezone.now()
    publish_at = now + timedelta(seconds=2)
    post = do_schedule_public_post(game, title="Reminder", body="Nominations close tonight.", publish_at=publish_at,
                                   acting_user=procurator, now=now)

    deadline = time.monotonic() + 30
    published_at = None
    while published_at is None:
        processes.check_alive()
        assert time.monotonic() < deadline, f"not published 30 s after scheduling\n{processes.output()}"
        time.sleep(POLL_SECONDS)
        published_at = PublicPost.objects.values_list("published_at", flat=True).get(pk=post.pk)
    assert published_at >= publish_at, f"published at {published_at}, before its due time {publish_at}"

    ticks_at_publication = processes.log("worker").count("mafia_site.tasks.dispatch_due_events[")
    time.sleep(3)  # more ticks arrive: none may publish again
    processes.check_alive()

    output = processes.output()
    assert GameEvent.objects.filter(game=game, kind="scheduler.publish_post").count() == 1, output
    assert GameEvent.objects.filter(game=game, kind="scheduler.post_published").count() == 1, output
    assert not GameEvent.objects.filter(game=game, kind="scheduler.event_failed").exists(), output
    event = ScheduledEvent.objects.get(game=game)
    assert event.done_at == published_at and event.attempts == 1, output
    assert ScheduledEvent.objects.filter(game=game, done_at__isnull=False).count() == 1, output
    assert PublicPost.objects.get(pk=post.pk).published_at == published_at, output
    # The beat really ticked (1 s) after the publication: the "exactly once" above survived repeated ticks.
    worker_log = processes.log("worker")
    assert worker_log.count("mafia_site.tasks.dispatch_due_events[") > ticks_at_publication, output
    # And over all ticks, the task reported exactly one event run.
    returned = re.findall(r"mafia_site\.tasks\.dispatch_due_events\[[^\]]+\] succeeded in \S+s: (\d+)", worker_log)
    assert len(returned) >= 2 and sum(map(int, returned)) == 1, output


# ----------------------------------------------------------------------------------------------------------------
# Two dispatchers at once
# ----------------------------------------------------------------------------------------------------------------


def test_two_dispatchers_at_once_run_each_due_event_exactly_once_DESIGN_clock(processes, only_our_events, tmp_path):
    games = [make_game(f"race-{i}") for i in range(4)]
    past = timezone.now() - timedelta(minutes=10)
    posts: list[PublicPost] = []
    for i in range(20):
        game, procurator = games[i % len(games)]
        posts.append(do_schedule_public_post(game, title=f"Post {i}", body=f"Text {i}.", acting_user=procurator,
                                             now=past, publish_at=past + timedelta(seconds=1 + i)))
    game_ids = [game.pk for game, _ in games]
    events = list(ScheduledEvent.objects.filter(game__in=game_ids).order_by("due_at", "id"))
    assert len(events) == 20 and all(e.due_at < timezone.now() for e in events)

    gate = _Gate(2)
    env = {**subprocess_env(tmp_path), "PGAPPNAME": gate.app_name}
    held = gate.hold()
    try:
        racers = [processes.start(name, [sys.executable, "manage.py", "run_due_events"], env)
                  for name in ("dispatcher-a", "dispatcher-b")]
        gate.wait_until_blocked(racers, processes)
    finally:
        held.__exit__(None, None, None)  # both go at once
    for proc in racers:
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"a dispatcher did not finish within 60 s\n{processes.output()}")
    output = processes.output()
    assert [proc.returncode for proc in racers] == [0, 0], output

    ran = []
    for name in ("dispatcher-a", "dispatcher-b"):
        counts = re.findall(r"^Ran (\d+) due event\(s\)\.$", processes.log(name), re.M)
        assert len(counts) == 1, output
        ran.append(int(counts[0]))
    print(f"dispatcher a ran {ran[0]}, dispatcher b ran {ran[1]}")
    assert sum(ran) == 20, output

    runs = Counter(GameEvent.objects.filter(game__in=game_ids, kind="scheduler.publish_post")
                   .values_list("payload__event", flat=True))
    assert runs == Counter({e.pk: 1 for e in events}), output
    assert GameEvent.objects.filter(game__in=game_ids, kind="scheduler.post_published").count() == 20, output
    assert not GameEvent.objects.filter(game__in=game_ids, kind="scheduler.event_failed").exists(), output
    assert ScheduledEvent.objects.filter(game__in=game_ids, done_at__isnull=False, attempts=1).count() == 20, output
    for post in posts:
        post.refresh_from_db()
        assert post.published_at is not None and post.published_at >= post.publish_at, (post, output)
    # Per-game order held under the race: each game's events ran in due order (audit rows are written in run order).
    for game_id in game_ids:
        run_order = list(GameEvent.objects.filter(game=game_id, kind="scheduler.publish_post").order_by("id")
                         .values_list("payload__event", flat=True))
        assert run_order == [e.pk for e in events if e.game_id == game_id], output
