"""The scenarios of the benchmark, the rounds, the figures and the report (``manage.py bench``).

Everything is measured in one run against one server: each round runs every scenario once, in an order rotated
by one from the round before (so that neither the floor nor Mafia Host always runs first, on a warmer or a
noisier machine), and each figure is the minimum and the median over all rounds. Statements per request come from
the server (``X-Bench-Statements``); night resolutions run in this process on the same database, with their
statements counted here.
"""
from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.urls import reverse

from cities.models import Game, GameEvent, GameStatus
from cities.scheduler import advance_clock, dispatch_due_events
from kernel.public_ids import new_idempotency_key
from rulesets.lepra.game_end_services import do_end_game_early

from . import world as bench_world
from .http import Client, start_server
from .models import FloorRow


@dataclass(frozen=True)
class Size:
    """How much the bench builds and measures. ``full`` is the size of the published figures; ``tiny`` runs in
    the test suite (``tests/test_bench.py``) so that the bench cannot rot."""

    rounds: int
    single_requests: int  # per round, for each one-client scenario
    clients: int  # the concurrent clients of the throughput scenarios
    requests_per_client: int  # per round, in the throughput scenarios
    page_requests: int  # per round, for each page scenario
    vote_city_size: int
    volume_city_size: int
    message_counts: tuple[int, ...]
    inbox_counts: tuple[int, ...]
    night_cities: tuple[int, ...]
    night_city_size: int
    burst_games: int
    burst_players: int  # per game
    workers: int  # gunicorn sync workers


SIZES = {
    "full": Size(rounds=3, single_requests=30, clients=16, requests_per_client=8, page_requests=10,
                 vote_city_size=40, volume_city_size=200, message_counts=(10, 500, 5000), inbox_counts=(20, 200),
                 night_cities=(3, 10, 30), night_city_size=5, burst_games=50, burst_players=20, workers=4),
    "small": Size(rounds=3, single_requests=15, clients=16, requests_per_client=4, page_requests=5,
                  vote_city_size=20, volume_city_size=50, message_counts=(10, 500), inbox_counts=(20, 60),
                  night_cities=(3, 10), night_city_size=5, burst_games=10, burst_players=10, workers=4),
    "tiny": Size(rounds=2, single_requests=2, clients=2, requests_per_client=2, page_requests=1,
                 vote_city_size=5, volume_city_size=3, message_counts=(2, 6), inbox_counts=(10, 12),
                 night_cities=(1, 2), night_city_size=5, burst_games=2, burst_players=3, workers=2),
}


# ----------------------------------------------------------------------------------------------------------------
# Figures
# ----------------------------------------------------------------------------------------------------------------

@dataclass
class Figure:
    """The samples of one scenario: seconds per request (or per run), statements, errors, and for throughput
    scenarios the requests per second of each round."""

    name: str
    seconds: list[float] = field(default_factory=list)
    statements: list[int] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        out = {"n": len(self.seconds), "errors": len(self.errors), "error_samples": self.errors[:5]}
        if self.seconds:
            ordered = sorted(self.seconds)
            out.update(min_ms=ordered[0] * 1000, median_ms=statistics.median(ordered) * 1000,
                       p95_ms=ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000)
        if self.statements:
            out.update(statements_median=statistics.median(self.statements), statements_max=max(self.statements))
        if self.rates:
            out.update(rate_min=min(self.rates), rate_median=statistics.median(self.rates),
                       rate_max=max(self.rates))
        return out


class Figures(dict):
    def __missing__(self, name: str) -> Figure:
        self[name] = Figure(name)
        return self[name]


def expect(figure: Figure, response, status: int, what: str) -> bool:
    """Record ``response`` in ``figure`` when it has ``status``; else an error naming ``what``."""
    if response.status != status:
        figure.errors.append(f"{what}: HTTP {response.status} {response.body[:200]!r}")
        return False
    figure.seconds.append(response.seconds)
    if response.statements is not None:
        figure.statements.append(response.statements)
    return True


# ----------------------------------------------------------------------------------------------------------------
# The run
# ----------------------------------------------------------------------------------------------------------------

def form(text: str) -> dict[str, str]:
    """A post form as a browser sends it: the text and the form's own key (a fresh one per rendering of the page,
    ``inboxes.forms.PostMessageForm``), which the site looks up to answer a re-submission."""
    return {"text": text, "idempotency_key": new_idempotency_key()}


@dataclass
class Voter:
    """A client voting in one voting inbox, alternating «казнить» and «не казнить» (it knows its standing)."""

    client: Client
    path: str
    standing: bool = False

    def post(self, figures: Figures, *, follow: bool = False, prefix: str = "") -> None:
        text = bench_world.RETRACT if self.standing else bench_world.VOTE
        name = prefix + ("retraction" if self.standing else "vote")
        if follow:
            first, second = self.client.post_and_follow(self.path, form(text))
            fig = figures[name + " + redirect"]
            if first.status == 302 and second is not None and second.status == 200:
                fig.seconds.append(first.seconds + second.seconds)
                self.standing = not self.standing
            else:
                fig.errors.append(f"HTTP {first.status}/{second.status if second else None}")
            return
        response = self.client.request("POST", self.path, form(text))
        if expect(figures[name], response, 302, text):
            self.standing = not self.standing


def _threads(jobs: list[Callable[[], None]]) -> float:
    """Run ``jobs`` each in its own thread, released together; returns the wall seconds until all finished."""
    barrier = threading.Barrier(len(jobs) + 1)
    failures: list[BaseException] = []

    def run(job):
        barrier.wait()
        try:
            job()
        except Exception as exc:  # noqa: BLE001 - re-raised by the caller once every thread has finished
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(job,), daemon=True) for job in jobs]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
    return time.perf_counter() - started


def analyze_tables() -> None:
    """Refresh the planner's statistics after the build, as a live database's autovacuum keeps them (PostgreSQL:
    ``VACUUM ANALYZE``, which also sets the visibility map that index-only scans need; SQLite: ``ANALYZE``).
    Without it the tables just filled look empty to the planner, which then sorts a whole thread to show its
    newest page. Skipped inside a transaction (where PostgreSQL refuses ``VACUUM``)."""
    if not connection.get_autocommit():
        return
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")


class Bench:
    """One run of the benchmark at ``size``; ``run()`` returns the report (a dict) and writes it as JSON."""

    def __init__(self, size: Size, *, label: str = "bench", log: Callable[[str], None] = print,
                 out_dir: Path | None = None, night_only: bool = False):
        self.size = size
        self.night_only = night_only  # only the night scenario: no voting world, no server, no burst
        self.label = label
        self.log = log
        self.out_dir = out_dir or Path(settings.VAR_DIR) / "bench"
        self.figures = Figures()

    # -- building ------------------------------------------------------------------------------------------------

    def build(self) -> None:
        size, slug = self.size, self.label
        started = time.perf_counter()
        if not self.night_only:
            self.log(f"building the voting game ({size.vote_city_size} voters; cities of {size.volume_city_size} "
                     f"with {', '.join(map(str, size.message_counts))} messages)")
            self.world = bench_world.build_voting_world(
                f"{slug}-web", vote_city_size=size.vote_city_size, message_counts=list(size.message_counts),
                volume_city_size=size.volume_city_size, inbox_counts=list(size.inbox_counts), log=self.log)
        self.log(f"building {size.rounds} x {len(size.night_cities)} clocked games of "
                 f"{', '.join(map(str, size.night_cities))} cities")
        # Each game's calendar is its own, in the past (so never reaching the voting game's events, due in real
        # time), two months apart in the order the games are measured. ``advance_clock`` runs every game's due
        # events, so the games are built latest calendar first (advancing one to its night never reaches a game
        # built before it) and measured earliest first, each ended after its measure (its few leftover events are
        # run before the next game's timer starts).
        order = [(r, cities) for r in range(size.rounds) for cities in size.night_cities]
        base = datetime(2001, 3, 1, 7, 0, tzinfo=UTC)
        self.night_games: dict[tuple[int, int], bench_world.NightGame] = {}
        for k, (r, cities) in reversed(list(enumerate(order))):
            self.night_games[(r, cities)] = bench_world.build_night_game(
                f"{slug}-night{cities}-r{r}", cities=cities, size=size.night_city_size,
                first_day=base + timedelta(days=60 * k))
        if not self.night_only:
            self.log(f"building {size.burst_games} games of {size.burst_players} players")
            self.burst = [bench_world.build_burst_game(f"{slug}-burst{g}", players=size.burst_players)
                          for g in range(size.burst_games)]
        analyze_tables()
        self.build_seconds = time.perf_counter() - started
        self.log(f"built in {self.build_seconds:.1f} s")

    def clients(self, base_url: str) -> None:
        from .http import session_cookie_for

        world, size = self.world, self.size

        def client(user=None) -> Client:
            return Client(base_url, session_key=session_cookie_for(user) if user is not None else None)

        vote = world.cities["vote"]
        path = reverse("inbox_thread", args=[vote.voting_inbox.public_id])
        voters = vote.voters
        self.single_voter = Voter(client(voters[0].user), path)
        self.redirect_voter = Voter(client(voters[1].user), path)
        self.crowd = [Voter(client(v.user), path) for v in voters[2:2 + size.clients]]
        if len(self.crowd) < size.clients:
            raise RuntimeError(f"the vote city needs {size.clients + 3} residents")
        self.floor_single = client(voters[0].user)
        self.floor_crowd = [client(v.user) for v in voters[2:2 + size.clients]]
        self.poster = client(vote.residents[-1].user)
        self.poster_path = reverse("inbox_thread", args=[vote.city_inbox.public_id])
        self.readers = {}
        for n in size.message_counts:
            vc = world.cities[f"m{n}"]
            self.readers[n] = (client(vc.residents[1].user), reverse("inbox_thread", args=[vc.city_inbox.public_id]),
                               reverse("inbox_thread", args=[vc.voting_inbox.public_id]))
        self.inbox_readers = {count: client(user) for count, user in world.readers.items()}
        self.my_inboxes_path = reverse("my_inboxes", args=[world.game.slug])
        self.burst_clients = [(client(p.user), reverse("inbox_thread", args=[g.city_inbox.public_id]))
                              for g in self.burst for p in g.players]

    # -- scenarios -----------------------------------------------------------------------------------------------

    def scenarios(self) -> list[tuple[str, Callable[[int], None]]]:
        size = self.size
        floor_path = reverse("bench_floor_post", urlconf="bench.urls")  # the server's URLs, whatever this process has

        def floor_single(r):
            for _ in range(size.single_requests):
                expect(self.figures["floor post"], self.floor_single.request("POST", floor_path, {"text": "x"}),
                       302, "floor")

        def vote_single(r):
            for _ in range(size.single_requests):
                self.single_voter.post(self.figures)

        def floor_redirect(r):
            fig = self.figures["floor post + redirect"]
            for _ in range(size.single_requests):
                first, second = self.floor_single.post_and_follow(floor_path, {"text": "x"})
                if first.status == 302 and second is not None and second.status == 200:
                    fig.seconds.append(first.seconds + second.seconds)
                else:
                    fig.errors.append(f"HTTP {first.status}")

        def vote_redirect(r):
            for _ in range(size.single_requests):
                self.redirect_voter.post(self.figures, follow=True)

        def floor_crowd(r):
            fig = self.figures[f"floor post, {size.clients} clients"]

            def job(c):
                def run():
                    for _ in range(size.requests_per_client):
                        expect(fig, c.request("POST", floor_path, {"text": "x"}), 302, "floor")
                return run
            wall = _threads([job(c) for c in self.floor_crowd])
            fig.rates.append(size.clients * size.requests_per_client / wall)

        def vote_crowd(r):
            figs = Figures()

            def job(v):
                def run():
                    for _ in range(size.requests_per_client):
                        v.post(figs)
                return run
            wall = _threads([job(v) for v in self.crowd])
            fig = self.figures[f"vote post, {size.clients} clients"]
            for f in figs.values():
                fig.seconds += f.seconds
                fig.statements += f.statements
                fig.errors += f.errors
            fig.rates.append(size.clients * size.requests_per_client / wall)

        def discussion(r):
            for i in range(size.single_requests):
                expect(self.figures["discussion post"],
                       self.poster.request("POST", self.poster_path, form(f"Round {r}, message {i}.")), 302,
                       "discussion")

        def pages(r):
            # The thread lengths interleaved, request by request: their ratio is the page growth figure, so a drift
            # of the machine during the scenario (an autovacuum after the crowd's writes) falls on all of them.
            for _ in range(size.page_requests):
                for n, (c, thread_path, voting_path) in self.readers.items():
                    expect(self.figures[f"thread page, {n} messages"], c.request("GET", thread_path), 200, "thread")
                    expect(self.figures[f"voting inbox page, {n} messages"], c.request("GET", voting_path), 200,
                           "voting inbox")

        def my_inboxes(r):
            for count, c in self.inbox_readers.items():
                for _ in range(size.page_requests):
                    expect(self.figures[f"my inboxes, {count} inboxes"], c.request("GET", self.my_inboxes_path),
                           200, "my inboxes")

        def night(r):
            for cities in size.night_cities:
                self.resolve_night(self.night_games[(r, cities)])

        def burst(r):
            fig = self.figures[f"burst: {len(self.burst_clients)} players in {len(self.burst)} games posting at once"]

            def job(c, path):
                def run():
                    try:
                        expect(fig, c.request("POST", path, form(f"Round {r}: here.")), 302, "burst post")
                    except (OSError, http.client.HTTPException) as exc:
                        fig.errors.append(f"{type(exc).__name__}: {exc}")
                return run
            wall = _threads([job(c, path) for c, path in self.burst_clients])
            fig.rates.append(len(self.burst_clients) / wall)

        return [("floor post", floor_single), ("vote post", vote_single), ("floor + redirect", floor_redirect),
                ("vote + redirect", vote_redirect), ("floor, clients", floor_crowd), ("vote, clients", vote_crowd),
                ("discussion post", discussion), ("pages", pages), ("my inboxes", my_inboxes),
                ("night", night), ("burst", burst)]

    def resolve_night(self, night: bench_world.NightGame) -> None:
        """Advance ``night``'s clock through night 2's end and day 3's start (resolution, deaths, daily post,
        roll-over), timing it and counting its statements."""
        fig = self.figures[f"night resolution + daily post, {night.cities} cities"]
        dispatch_due_events(now=night.night_start)  # what earlier games left, untimed
        count = 0

        def counter(execute, sql, params, many, context):
            nonlocal count
            count += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counter):
            started = time.perf_counter()
            advance_clock(night.until, game=night.game)
            seconds = time.perf_counter() - started
        resolved = GameEvent.objects.filter(game=night.game, kind="night.resolved", payload__night=2).exists()
        started_day = GameEvent.objects.filter(game=night.game, kind="clock.day_started", payload__day=3).exists()
        if resolved and started_day:
            fig.seconds.append(seconds)
            fig.statements.append(count)
        else:
            fig.errors.append(f"night 2 resolved: {resolved}; day 3 started: {started_day}")
        if not Game.objects.filter(pk=night.game.pk, status=GameStatus.FINISHED).exists():
            do_end_game_early(night.game, reason="The benchmark has measured this night.",
                              acting_user=night.procurator, now=night.until)

    # -- the whole run -------------------------------------------------------------------------------------------

    def run(self) -> dict:
        size = self.size
        self.log(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
        with connection.schema_editor() as editor:
            if FloorRow._meta.db_table not in connection.introspection.table_names():
                editor.create_model(FloorRow)
        server = None
        try:
            self.build()
            if self.night_only:
                scenarios = [(name, run) for name, run in self.scenarios() if name == "night"]
            else:
                server = start_server(workers=size.workers, log_dir=self.out_dir)
                self.log(f"gunicorn: {size.workers} sync workers at {server.base_url}")
                self.clients(server.base_url)
                scenarios = self.scenarios()
            wall = time.perf_counter()
            for r in range(size.rounds):
                k = r % len(scenarios)
                order = scenarios[k:] + scenarios[:k]
                self.log(f"round {r + 1}/{size.rounds}: {', '.join(name for name, _ in order)}")
                for _name, scenario in order:
                    scenario(r)
            measured = time.perf_counter() - wall
        finally:
            if server is not None:
                server.stop()
            with connection.schema_editor() as editor:
                editor.delete_model(FloorRow)
        report = self.report(measured)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        path = self.out_dir / f"report-{self.label}.json"
        path.write_text(json.dumps(report, indent=2, ensure_ascii=False))
        report["path"] = str(path)
        return report

    def report(self, measured: float) -> dict:
        size = self.size
        figures = {name: fig.summary() for name, fig in self.figures.items()}

        def ratio(a: str, b: str, key: str = "median_ms") -> float | None:
            fa, fb = figures.get(a, {}), figures.get(b, {})
            return fa[key] / fb[key] if fa.get(key) and fb.get(key) else None

        crowd = f", {size.clients} clients"
        ratios = {
            "vote post / floor post (median, 1 client)": ratio("vote", "floor post"),
            "vote post / floor post (min, 1 client)": ratio("vote", "floor post", "min_ms"),
            "vote + redirect / floor + redirect (median)": ratio("vote + redirect", "floor post + redirect"),
            f"vote throughput / floor throughput ({size.clients} clients, median)":
                ratio("vote post" + crowd, "floor post" + crowd, "rate_median"),
        }
        pages = {}
        for kind in ("thread page", "voting inbox page"):
            lo, hi = size.message_counts[0], size.message_counts[-1]
            pages[f"{kind}: {hi} / {lo} messages (median)"] = ratio(f"{kind}, {hi} messages", f"{kind}, {lo} messages")
        nights = [figures.get(f"night resolution + daily post, {c} cities", {}) for c in size.night_cities]
        per_city = {f"{c} cities": (n["median_ms"] / c if n.get("median_ms") else None)
                    for c, n in zip(size.night_cities, nights, strict=True)}
        return {
            "label": self.label,
            "at": datetime.now(UTC).isoformat(),
            "database": connection.vendor,
            "size": asdict(size),
            "build_seconds": round(self.build_seconds, 1),
            "measured_seconds": round(measured, 1),
            "figures": figures,
            "ratios": ratios,
            "page_growth": pages,
            "night_ms_per_city": per_city,
        }


def format_report(report: dict) -> str:
    """The report as the table ``manage.py bench`` prints."""
    lines = [(f"Mafia Host bench ({report['label']}, {report['database']}, {report['size']['rounds']} rounds, "
              f"{report['size']['workers']} gunicorn workers)"),
             f"{'what':<62} {'n':>5} {'min ms':>9} {'median':>9} {'p95':>9} {'stmts':>6} {'req/s':>7} {'err':>4}"]
    def num(f: dict, key: str, fmt: str = "{:9.1f}") -> str:
        return fmt.format(f[key]) if key in f else " " * len(fmt.format(0))

    for name, f in sorted(report["figures"].items()):
        lines.append(f"{name:<62} {f['n']:>5} {num(f, 'min_ms')} {num(f, 'median_ms')} "
                     f"{num(f, 'p95_ms')} {num(f, 'statements_median', '{:6.0f}')} {num(f, 'rate_median', '{:7.1f}')}"
                     f" {f['errors']:>4}")
    lines.append("")
    for title, values in (("ratios", report["ratios"]), ("page growth", report["page_growth"]),
                          ("night ms per city (median)", report["night_ms_per_city"])):
        lines.append(title + ":")
        for key, value in values.items():
            lines.append(f"  {key}: {value:.2f}" if value is not None else f"  {key}: n/a")
    return "\n".join(lines)
