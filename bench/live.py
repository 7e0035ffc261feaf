"""The live scenario of the benchmark (``manage.py bench_live``): open tabs polling while players vote.

Each *tab* is a distinct logged-in user who opens one thread page, as a browser does: the page (built in full),
then the top bar's unread badge (its ``load`` trigger), then polls as the page's htmx does: the thread every
``MAFIA_LIVE_POLL_SECONDS`` and the badge every ``MAFIA_LIVE_BADGE_SECONDS``, each following the URL its last full
answer gave and keeping it on a 204. Tabs are residents of games of ``PLAYERS_PER_GAME`` whose city squares are
quiet, but for the voting city's residents, whose tabs show the voting inbox where the voters post. Meanwhile
``VOTERS`` voters post «казнить» / «не казнить» there, each every ``VOTE_SECONDS``.

The tabs open one after another over the *ramp* (by default the first three quarters of the warm-up), evenly
spread, as an audience arrives: opening a tab builds two full answers (the page and the badge), and opening them
all at once would queue thousands of full answers in front of everything else, a backlog no real evening sees.
The rest of the warm-up lets the last openings drain. The figures are those of the requests sent during the
measured window: latency (median, p95) of votes, thread polls and badge polls, the requests answered per second,
and the requests refused (a refused connection, a reset, a timeout or an HTTP status other than the expected
ones); the openings are counted apart (``opened``). The load runs in this process (asyncio, one connection per
request: gunicorn's sync workers close it after each answer), against gunicorn on the bench's database.
"""
from __future__ import annotations

import asyncio
import os
import random
import re
import statistics
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.urls import reverse

from inboxes.models import Message

from . import world as bench_world
from .http import session_cookie_for
from .runner import form

PLAYERS_PER_GAME = 100
VOTERS = 8
VOTE_SECONDS = 2.0
REQUEST_TIMEOUT = 30.0
_POLL_URL = re.compile(rb'id="live-poll"[^>]*hx-get="([^"]+)"')
_BADGE_URL = re.compile(rb'id="unread-badge"[^>]*hx-get="([^"]+)"')


@dataclass
class LiveWorld:
    """What the live scenario needs: the voting inbox's path, the voters' sessions, and per tab a session, a
    thread path with its current message count, and the game's badge path."""

    vote_path: str
    voters: list[str]
    tabs: list[tuple[str, str, int, str]]


def build_live_world(label: str, tabs: int, log=print) -> LiveWorld:
    """Build (through the services) a voting game whose voting city has ``VOTERS`` + 4 residents, and games of
    ``PLAYERS_PER_GAME`` for the rest of ``tabs`` distinct users; log every user in (a database session each)."""
    world = bench_world.build_voting_world(f"{label}-vote", vote_city_size=VOTERS + 4, message_counts=[],
                                           volume_city_size=0, inbox_counts=[], log=log)
    vote = world.cities["vote"]
    vote_path = reverse("inbox_thread", args=[vote.voting_inbox.public_id])
    seats = [(r.user, vote.voting_inbox, world.game) for r in vote.residents]
    games = max(0, -(-(tabs - len(seats)) // PLAYERS_PER_GAME))
    for g in range(games):
        log(f"  building tab game {g + 1} of {games}")
        game = bench_world.build_burst_game(f"{label}-tabs{g}", players=PLAYERS_PER_GAME)
        seats += [(p.user, game.city_inbox, game.game) for p in game.players]
    seats = seats[:tabs]
    log(f"  logging {len(seats)} tabs in")
    rows = []
    for user, inbox, game in seats:
        count = Message.objects.filter(inbox=inbox).count()
        rows.append((session_cookie_for(user), reverse("inbox_thread", args=[inbox.public_id]), count,
                     reverse("unread_badge", args=[game.slug])))
    voters = [session_cookie_for(r.user) for r in vote.voters[:VOTERS]]
    return LiveWorld(vote_path=vote_path, voters=voters, tabs=rows)


def _children_cpu_seconds(parent: int) -> float:
    """The CPU seconds (user + system) used so far by the processes whose parent is ``parent`` (gunicorn's
    workers), read from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:  # fields after the name: state, ppid, ..., utime (12), stime (13)
            total += int(fields[11]) + int(fields[12])
    return total / ticks


def cpu_per_request(server, world: LiveWorld, count: int = 400) -> dict:
    """The web workers' CPU (ms) per request and the SQL statements of one request, each measured over ``count``
    requests sent one after another by one client: an idle thread poll, an idle badge poll, the floor's page
    (``bench.views.floor_page``: the stack with a session and its user, nothing else), an idle thread poll
    built in full (no token) and the thread's page (what opening a tab builds, with a badge built in full).
    Returns ``{kind: {"cpu_ms": .., "statements": ..}}``."""
    from .http import Client

    session, thread, messages, badge = world.tabs[-1]
    client = Client(server.base_url, session_key=session)
    poll = f"{thread}live/?after={messages}"

    def follow(path: str, pattern, fallback: str) -> str:
        response = client.request("GET", path)
        found = pattern.search(response.body)
        return found.group(1).decode().replace("&amp;", "&") if found else fallback

    kinds = {"idle poll": follow(thread, _POLL_URL, poll), "idle badge": follow(badge, _BADGE_URL, badge),
             "floor page": reverse("bench_floor_page"), "poll built in full": poll, "thread page": thread}
    out = {}
    for kind, path in kinds.items():
        for _ in range(20):  # warm: the worker's caches, the prepared statements
            client.request("GET", path)
        before = _children_cpu_seconds(server.process.pid)
        statements = None
        for _ in range(count):
            response = client.request("GET", path)
            statements = response.statements
        used = _children_cpu_seconds(server.process.pid) - before
        out[kind] = {"cpu_ms": round(used * 1000 / count, 2), "statements": statements, "status": response.status}
    client.close()
    return out


@dataclass
class Sample:
    kind: str
    sent: float
    seconds: float
    status: int
    ok: bool


@dataclass
class Load:
    """One run of the scenario against ``base_url``."""

    base_url: str
    world: LiveWorld
    warmup: float
    duration: float
    #: Seconds over which the tabs open, from the start (None: three quarters of the warm-up).
    ramp: float | None = None
    samples: list[Sample] = field(default_factory=list)
    opened: list[Sample] = field(default_factory=list)
    start: float = 0.0

    @property
    def ramp_seconds(self) -> float:
        """Seconds over which the tabs open: ``ramp``, or three quarters of the warm-up."""
        return self.warmup * 0.75 if self.ramp is None else self.ramp

    async def _request(self, method: str, path: str, session: str, body: dict | None = None,
                       htmx: bool = True) -> tuple[int, bytes]:
        parts = urlsplit(self.base_url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            csrf = "c" * 32
            cookies = f"{settings.CSRF_COOKIE_NAME}={csrf}; {settings.SESSION_COOKIE_NAME}={session}"
            lines = [f"{method} {path} HTTP/1.1", f"Host: {parts.netloc}", f"Cookie: {cookies}",
                     "Accept-Language: ru", "HX-Request: true", "Connection: close"]
            payload = b""
            if body is not None:
                payload = urlencode({**body, "csrfmiddlewaretoken": csrf}).encode()
                lines += ["Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(payload)}",
                          f"Referer: {self.base_url}{path}"]
                lines.remove("HX-Request: true")  # a vote as a plain form: 302 to the thread
            elif not htmx:
                lines.remove("HX-Request: true")  # a page the browser opens
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
        head, _, content = raw.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
        return status, content

    async def _timed(self, kind: str, method: str, path: str, session: str, expected: tuple[int, ...],
                     body: dict | None = None) -> tuple[int, bytes]:
        sent = time.perf_counter()
        try:
            status, content = await asyncio.wait_for(self._request(method, path, session, body), REQUEST_TIMEOUT)
        except (TimeoutError, OSError):
            status, content = 0, b""
        seconds = time.perf_counter() - sent
        if sent - self.start >= self.warmup and sent - self.start < self.warmup + self.duration:
            self.samples.append(Sample(kind, sent, seconds, status, status in expected))
        return status, content

    def _running(self) -> bool:
        return time.perf_counter() - self.start < self.warmup + self.duration

    async def _open(self, path: str, session: str, pattern, fallback: str, htmx: bool) -> str:
        """Open ``path`` as the browser does when the tab opens; the poll URL the answer gives (``fallback`` when
        it gives none: a refused opening)."""
        sent = time.perf_counter()
        try:
            status, content = await asyncio.wait_for(self._request("GET", path, session, htmx=htmx),
                                                     REQUEST_TIMEOUT)
        except (TimeoutError, OSError):
            status, content = 0, b""
        self.opened.append(Sample("open", sent, time.perf_counter() - sent, status, status == 200))
        found = pattern.search(content) if status == 200 else None
        return found.group(1).decode().replace("&amp;", "&") if found else fallback

    async def _tab(self, session: str, thread: str, count: int, badge: str, opens_at: float) -> None:
        await asyncio.sleep(max(0.0, opens_at - time.perf_counter()))
        if not self._running():
            return
        poll = await self._open(thread, session, _POLL_URL, f"{thread}live/?after={count}", htmx=False)
        badge_url = await self._open(badge, session, _BADGE_URL, badge, htmx=True)
        poll_every, badge_every = settings.MAFIA_LIVE_POLL_SECONDS, settings.MAFIA_LIVE_BADGE_SECONDS
        next_poll = opens_at + poll_every  # htmx's "every": the first poll one interval after the page loads
        next_badge = opens_at + badge_every
        while self._running():
            now = time.perf_counter()
            wake = min(next_poll, next_badge)
            if wake > now:
                await asyncio.sleep(wake - now)
                continue
            if next_poll <= next_badge:
                next_poll += poll_every
                status, content = await self._timed("poll", "GET", poll, session, (200, 204))
                found = _POLL_URL.search(content) if status == 200 else None
                if found:
                    poll = found.group(1).decode().replace("&amp;", "&")
            else:
                next_badge += badge_every
                status, content = await self._timed("badge", "GET", badge_url, session, (200, 204))
                found = _BADGE_URL.search(content) if status == 200 else None
                if found:
                    badge_url = found.group(1).decode().replace("&amp;", "&")

    async def _voter(self, session: str, rng: random.Random) -> None:
        standing = False
        await asyncio.sleep(rng.uniform(0, VOTE_SECONDS))
        while self._running():
            began = time.perf_counter()
            text = bench_world.RETRACT if standing else bench_world.VOTE
            status, _ = await self._timed("vote", "POST", self.world.vote_path, session, (302,), form(text))
            # A refusal during the warm-up means the voter's standing was not what it thought (an earlier run
            # left it voting): it now knows better.
            if status == 302 or began - self.start < self.warmup:
                standing = not standing
            await asyncio.sleep(max(0.0, VOTE_SECONDS - (time.perf_counter() - began)))

    async def _run(self) -> None:
        rng = random.Random(7)
        self.start = time.perf_counter()
        n = len(self.world.tabs)
        order = list(range(n))
        rng.shuffle(order)  # the voting city's tabs among the others
        jobs = [self._tab(*tab, self.start + self.ramp_seconds * (order[i] + rng.random()) / n)
                for i, tab in enumerate(self.world.tabs)]
        jobs += [self._voter(session, random.Random(rng.random())) for session in self.world.voters]
        await asyncio.gather(*jobs)

    def run(self) -> dict:
        """Run the scenario; returns the figures (see ``summary``)."""
        asyncio.run(self._run())
        return self.summary()

    def summary(self) -> dict:
        """Per kind (vote, poll, badge): requests sent in the window, answered as expected, refused, median and p95
        latency (ms), the 204 share of polls; the requests answered per second over all kinds; and the tabs'
        openings over the whole run (``opened``: the ramp's seconds, pages and badges sent, answered, refused,
        median and p95 ms)."""
        out: dict = {"tabs": len(self.world.tabs), "window_s": self.duration}
        answered = 0
        for kind in ("vote", "poll", "badge"):
            rows = [s for s in self.samples if s.kind == kind]
            good = sorted(s.seconds for s in rows if s.ok)
            answered += len(good)
            out[kind] = {
                "sent": len(rows), "answered": len(good), "refused": len(rows) - len(good),
                "median_ms": round(statistics.median(good) * 1000, 1) if good else None,
                "p95_ms": round(good[int(0.95 * (len(good) - 1))] * 1000, 1) if good else None,
                "empty_204": sum(1 for s in rows if s.status == 204),
            }
        out["answered_per_s"] = round(answered / self.duration, 1)
        opened = sorted(s.seconds for s in self.opened if s.ok)
        out["opened"] = {"ramp_s": round(self.ramp_seconds, 1), "sent": len(self.opened), "answered": len(opened),
                         "refused": len(self.opened) - len(opened),
                         "median_ms": round(statistics.median(opened) * 1000, 1) if opened else None,
                         "p95_ms": round(opened[int(0.95 * (len(opened) - 1))] * 1000, 1) if opened else None}
        return out
