"""A hammer posted by two tabs at once ends the day once (M-VOTE-3, DESIGN.md "Messages are the record"): two
players post the hammering ``##VOTE X ##END`` at the same moment from threads, and one of them submits the game
thread's form twice; the day ends exactly once, one night is scheduled, one result is announced, no 500.

Row locks for real on PostgreSQL (``DATABASE_URL`` set); on SQLite the writers serialize on the file lock."""
from __future__ import annotations

import threading

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse

from cities.models import GameEvent, ScheduledEvent
from kernel.errors import RuleViolation
from rulesets.m21.models import DayStatus, M21PostReceipt
from tests.rulesets.m21.day_helpers import build_game


@pytest.mark.postgres
def test_a_hammer_posted_by_two_tabs_at_once_ends_the_day_once_M_VOTE_3(transactional_db):
    table = build_game(slug="m21-race")
    target = "Grace"
    for name in ("Alice", "Bob", "Carol"):
        table.post(name, f"##VOTE {target}\n##END")
    thread = table.thread
    moment = table.tick()
    url = reverse("inbox_thread", args=[thread.public_id])
    jobs = [("service", "Dave"), ("service", "Erin"), ("form", "Dave"), ("form", "Frank")]
    barrier = threading.Barrier(len(jobs))
    errors, outcomes = [], []
    lock = threading.Lock()

    def run(kind, name):
        try:
            user = get_user_model().objects.get(pk=table.users[name].pk)
            barrier.wait(timeout=60)
            if kind == "service":
                from inboxes.posting import do_post_message
                try:
                    do_post_message(thread, f"##VOTE {target}\n##END", acting_user=user, now=moment)
                    result = "stored"
                except RuleViolation as exc:
                    result = str(exc)
            else:
                client = Client()
                client.force_login(user)
                result = client.post(url, {"text": f"##VOTE {target}\n##END"}).status_code
            with lock:
                outcomes.append((kind, name, result))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            with lock:
                errors.append(f"{kind} {name}: {type(exc).__name__}: {exc}")
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=job) for job in jobs]
    # The form posts are received at the game's moment too (the clock is the process's, every thread's): the day
    # is applied in the order the posts are stored, so a post received after the deadline would close it there.
    with time_machine.travel(moment, tick=False):
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    assert errors == []
    assert len(outcomes) == len(jobs) and not any(r == 500 for *_, r in outcomes)
    day = table.day(1)
    assert (day.status, day.how, day.imprisoned.name) == (DayStatus.DECIDED, "end_hammer", target)
    assert GameEvent.objects.filter(game=table.game, kind="m21.day_decided").count() == 1
    assert ScheduledEvent.objects.filter(game=table.game, kind="m21_night_end").count() == 1
    assert thread.messages.filter(body__startswith="**Day 1 is over:**").count() == 1
    lines = [line["message"] for r in M21PostReceipt.objects.filter(day=day).order_by("message__received_at",
                                                                                         "message_id")
             for line in r.lines]
    hammer_lines = [line for line in lines if line.endswith("wants the day to end.")]
    assert len(hammer_lines) == 4  # Alice, Bob, Carol, and the one hammer that fell
    assert lines.count("No day is open: this carries no vote.") == 2 * (len(jobs) - 1)
