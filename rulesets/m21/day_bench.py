"""The M21 day's benchmark (``manage.py bench_m21_day``): what a ``##VOTE`` post, the game thread's page and the
game page cost on a day with few posts and on one with many, side by side. The day is stored as it goes (M-VOTE-8,
``M21Day.tally``), so neither a post nor a page should grow with the day's posts.

Each game is built through the services (20 players, the default setup, day 1 open at the real time, ``posts``
game-thread posts spread over the hour before, a third of them votes); the requests go through Django's test
client in this process (the view, the policy, the post hook, the templates and the database; no web server), logged
in as a player. Figures are medians in milliseconds; the ratios are the largest day's over the smallest's.
"""
from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.contrib.auth import get_user_model
from django.db import connection, reset_queries
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from cities.models import Game
from cities.scheduler import advance_clock
from cities.recruitment_services import do_close_signups, do_sign_up
from inboxes.posting import do_post_message

from . import services

SETUP = {"citizen": 11, "judge": 1, "reporter": 1, "cop": 1, "coroner": 1,
         "goon": 2, "godfather": 1, "hooker": 1, "ninja": 1}


@dataclass
class BenchGame:
    """One benchmark game: its slug, its players' accounts (seating order) and the game thread."""

    game: Game
    players: list
    thread: object
    names: list[str] = field(default_factory=list)


def build_bench_game(prefix: str, posts: int, *, now: datetime | None = None) -> BenchGame:
    """An M21 game of 20 whose day 1 is open at ``now`` (default: the real time) with ``posts`` posts in the game
    thread by its players over the hour before (every third a ``##VOTE``, never an ``##END``: no hammer)."""
    now = now or timezone.now()
    User = get_user_model()
    start = now - timedelta(hours=2)
    host = User.objects.create_user(f"{prefix}-host", f"{prefix}-host@bench.invalid", None,
                                    display_name=f"{prefix} host")
    game = services.do_create_m21_game(title=f"Bench {prefix}", slug=prefix, acting_user=host, now=start)
    players = [User.objects.create_user(f"{prefix}-p{i:02d}", f"{prefix}-p{i}@bench.invalid", None,
                                        display_name=f"{prefix.title()}{chr(65 + i)}x") for i in range(20)]
    for user in players:
        do_sign_up(game, acting_user=user, now=start)
    game = do_close_signups(game, acting_user=host, now=start)
    services.do_choose_m21_setup(game, SETUP, acting_user=host, now=start)
    day1 = start + timedelta(minutes=30)
    services.do_deal_m21_roles(game, first_day_starts_at=day1, acting_user=host, rng=random.Random(1), now=start)
    advance_clock(day1, game=game)
    game = Game.objects.get(pk=game.pk)
    thread = services.thread_of(game)
    names = [u.public_name for u in players]
    step = timedelta(hours=1) / max(posts, 1)
    at = day1 + timedelta(minutes=1)
    for i in range(posts):
        text = f"##VOTE {names[(i * 7 + 3) % 20]}" if i % 3 == 0 else f"Talk {i}: nothing to see here."
        do_post_message(thread, text, acting_user=players[i % 20], now=at)
        at += step
    return BenchGame(game=game, players=players, thread=thread, names=names)


@dataclass
class Figure:
    """The samples of one measure: milliseconds per request and statements per request."""

    ms: list[float] = field(default_factory=list)
    statements: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"n": len(self.ms), "median_ms": round(statistics.median(self.ms), 2) if self.ms else None,
                "statements": int(statistics.median(self.statements)) if self.statements else None,
                "errors": self.errors}


def _measure(figure: Figure, request: Callable[[], object], expected: int) -> None:
    reset_queries()  # the log is bounded: once full after the build, a capture would count nothing
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        response = request()
        figure.ms.append((time.perf_counter() - started) * 1000)
    figure.statements.append(len(queries))
    if response.status_code != expected:
        figure.errors.append(f"HTTP {response.status_code}")


def run_day_bench(post_counts: tuple[int, ...] = (30, 2000), *, repeats: int = 20, prefix: str = "m21bench",
                  log: Callable[[str], None] = print) -> dict:
    """Build one game per entry of ``post_counts`` and measure, ``repeats`` times each and interleaved: a
    ``##VOTE`` post (the form's POST, answered by a redirect), the game thread's page and the game page, read by a
    player. Returns ``{"figures": {name: Figure.as_dict()}, "ratios": {measure: largest/smallest}}``."""
    games = {}
    for n in post_counts:
        started = time.perf_counter()
        games[n] = build_bench_game(f"{prefix}-{n}", n)
        log(f"built the day with {n} posts in {time.perf_counter() - started:.1f} s")
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        # As autovacuum keeps a live database: the build's dead row versions (the day's row is updated by every
        # post) cleared and the planner's statistics fresh, so the pages are measured as production runs them.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    figures: dict[str, Figure] = {}
    clients = {}
    for n, bench in games.items():
        voter, reader = Client(), Client()
        voter.force_login(bench.players[0])
        reader.force_login(bench.players[1])
        clients[n] = (voter, reader)
    for r in range(repeats):
        for n, bench in games.items():
            voter, reader = clients[n]
            thread_url = reverse("inbox_thread", args=[bench.thread.public_id])
            game_url = reverse("m21_game", args=[bench.game.slug])
            target = bench.names[2 + r % 2]
            _measure(figures.setdefault(f"vote post, {n} posts", Figure()),
                     partial(voter.post, thread_url, {"text": f"##VOTE {target}"}), 302)
            _measure(figures.setdefault(f"thread page, {n} posts", Figure()), partial(reader.get, thread_url), 200)
            _measure(figures.setdefault(f"game page, {n} posts", Figure()), partial(reader.get, game_url), 200)
    lo, hi = min(post_counts), max(post_counts)
    result = {name: figure.as_dict() for name, figure in figures.items()}
    ratios = {}
    for measure in ("vote post", "thread page", "game page"):
        small, large = result[f"{measure}, {lo} posts"]["median_ms"], result[f"{measure}, {hi} posts"]["median_ms"]
        ratios[f"{measure}: {hi} / {lo} posts"] = round(large / small, 2) if small else None
    return {"figures": result, "ratios": ratios}


def format_day_bench(report: dict) -> str:
    """The report as lines of text: each figure, then the ratios."""
    lines = [f"{name:28} {f['median_ms']:>8} ms  {f['statements']:>3} statements  n={f['n']}"
             + (f"  errors: {f['errors'][:3]}" if f["errors"] else "") for name, f in report["figures"].items()]
    lines += [f"{name}: {ratio}x" for name, ratio in report["ratios"].items()]
    return "\n".join(lines)
