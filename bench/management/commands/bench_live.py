"""``manage.py bench_live``: the live scenario (``bench.live``): open tabs polling while eight players vote, for
each number of tabs, with every poll built in full (the site without the shortcut) and with the shortcut."""
from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from bench.http import start_server
from bench.live import Load, build_live_world, cpu_per_request
from cities.models import Game

MODES = {"full": "0", "shortcut": "1"}


class Command(BaseCommand):
    help = ("Build games through the services, then for each number of open tabs start gunicorn and measure the "
            "votes, thread polls and badge polls of tabs that poll as the pages do while 8 players vote, without "
            "and with the live shortcut. The tabs open one after another over the ramp (--ramp, by default the "
            "first three quarters of the warm-up) or at --open-rate tabs per second, as an audience arrives, each "
            "with its page and its badge built in full (about 17 ms of a worker's CPU); the openings must drain "
            "before the measured window: give a rate the machine keeps up with besides the polls (20 a second "
            "leaves most of 2 cores to them). "
            "Needs PostgreSQL and Redis (DATABASE_URL, REDIS_URL) for figures that mean anything; run it on a "
            "database of its own: it adds games and accounts.")

    def add_arguments(self, parser):
        parser.add_argument("--tabs", default="500,1000,3000", help="numbers of open tabs, comma-separated")
        parser.add_argument("--modes", default="full,shortcut", help="full, shortcut or both (comma-separated)")
        parser.add_argument("--warmup", type=float, default=45.0,
                            help="seconds before the measured window: the tabs open, then their openings drain")
        parser.add_argument("--ramp", type=float, default=None,
                            help="seconds over which the tabs open, evenly spread (default: 3/4 of --warmup; at "
                                 "most --warmup)")
        parser.add_argument("--open-rate", type=float, default=None,
                            help="tabs opened per second instead of --ramp: each run's ramp lasts tabs/rate "
                                 "seconds, and its warm-up is stretched to 4/3 of the ramp when shorter")
        parser.add_argument("--duration", type=float, default=60.0, help="seconds measured per run")
        parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
        parser.add_argument("--label", default="live", help="prefix of the games' addresses (unique per database)")
        parser.add_argument("--out", type=Path, default=None, help="the JSON report (default var/bench/live.json)")

    def handle(self, *args, tabs, modes, warmup, ramp, open_rate, duration, workers, label, out, **options):
        try:
            counts = sorted({int(n) for n in tabs.split(",") if n.strip()})
        except ValueError:
            raise CommandError("--tabs takes positive numbers, comma-separated") from None
        chosen = [m.strip() for m in modes.split(",") if m.strip()]
        if not counts or any(n < 1 for n in counts) or not chosen or any(m not in MODES for m in chosen):
            raise CommandError("--tabs takes positive numbers; --modes takes full and/or shortcut")
        if warmup < 0 or duration <= 0 or (ramp is not None and not 0 <= ramp <= warmup):
            raise CommandError("--warmup and --duration take positive seconds, --ramp at most the warm-up")
        if open_rate is not None and (open_rate <= 0 or ramp is not None):
            raise CommandError("--open-rate takes a positive number of tabs per second, instead of --ramp")
        if Game.objects.filter(slug__startswith=f"{label}-").exists():
            raise CommandError(f"this database already has games labelled {label!r}: give another --label")
        if connection.vendor != "postgresql" or not settings.REDIS_URL:
            self.stderr.write("warning: without PostgreSQL and Redis these figures say little about a deployment")
        world = build_live_world(label, max(counts), log=self.stdout.write)
        results = []
        costs = {}
        for mode in chosen:
            server = start_server(workers=1, log_dir=Path(settings.VAR_DIR) / "bench",
                                  env={"MAFIA_LIVE_SHORTCUT": MODES[mode]})
            try:
                costs[mode] = cpu_per_request(server, world)
            finally:
                server.stop()
            self.stdout.write(f"CPU per request, {mode}: {costs[mode]}")
        for n in counts:
            for mode in chosen:
                server = start_server(workers=workers, log_dir=Path(settings.VAR_DIR) / "bench",
                                      env={"MAFIA_LIVE_SHORTCUT": MODES[mode]})
                try:
                    ramp_n, warmup_n = ramp, warmup
                    if open_rate is not None:
                        ramp_n = n / open_rate
                        warmup_n = max(warmup, ramp_n * 4 / 3)
                    load = Load(server.base_url, type(world)(vote_path=world.vote_path, voters=world.voters,
                                                             tabs=world.tabs[:n]),
                                warmup=warmup_n, duration=duration, ramp=ramp_n)
                    self.stdout.write(f"{n} tabs, {mode}: opening over {load.ramp_seconds:.0f} s of a "
                                      f"{warmup_n:.0f} s warm-up, {duration:.0f} s measured")
                    figures = load.run()
                finally:
                    server.stop()
                figures["mode"] = mode
                results.append(figures)
                self.stdout.write(format_row(figures))
        self.stdout.write(format_table(results))
        path = out or Path(settings.VAR_DIR) / "bench" / "live.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"cpu_per_request": costs, "runs": results}, indent=2))
        self.stdout.write(f"report: {path}")


def format_row(f: dict) -> str:
    """One line of figures: tabs, mode, per kind median/p95 ms and refused, answered per second."""
    def kind(k):
        x = f[k]
        return f"{k} {x['median_ms']}/{x['p95_ms']} ms ({x['refused']} refused of {x['sent']})"
    opened = f["opened"]
    return (f"{f['tabs']:>5} tabs {f['mode']:>8}: {kind('vote')}; {kind('poll')}; {kind('badge')}; "
            f"{f['answered_per_s']} answered/s; polls 204: {f['poll']['empty_204']}, badge 204: "
            f"{f['badge']['empty_204']}; opened over {opened['ramp_s']} s: {opened['median_ms']}/"
            f"{opened['p95_ms']} ms ({opened['refused']} refused of {opened['sent']})")


def format_table(results: list[dict]) -> str:
    """The figures as a Markdown table (what the README quotes)."""
    lines = ["| tabs | polls | vote median / p95 ms | poll median / p95 ms | badge median / p95 ms | answered/s "
             "| refused |", "|---|---|---|---|---|---|---|"]
    for f in results:
        refused = sum(f[k]["refused"] for k in ("vote", "poll", "badge"))
        cell = lambda k: f"{f[k]['median_ms']} / {f[k]['p95_ms']}"  # noqa: E731
        lines.append(f"| {f['tabs']} | {f['mode']} | {cell('vote')} | {cell('poll')} | {cell('badge')} "
                     f"| {f['answered_per_s']} | {refused} |")
    return "\n".join(lines)
