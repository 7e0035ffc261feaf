"""Several web nodes on one database and one Redis (DESIGN.md "Pages": a web node keeps no state of its own).

Two gunicorn nodes on two ports, a Celery worker and beat, one database (the test database, handed over as in
the other process tests) and one Redis namespace shared by the four processes (``MAFIA_CACHE_PREFIX``), the live
shortcut on. What one node does, the other knows: a login, a post (shown in the other node's poll within one
interval: its token stops standing), a form's key (the same form sent to both nodes stores one message), the
login rate limit (failures counted on both nodes together), and what the worker wrote.
"""
from __future__ import annotations

import html
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlencode

from http.cookiejar import CookieJar
from urllib.error import HTTPError, URLError
from urllib.request import HTTPCookieProcessor, HTTPRedirectHandler, Request, build_opener

import pytest
from django.conf import settings
from django.utils import timezone

from bench.http import free_port, server_env
from cities.models import PublicPost, ScheduledEvent
from cities.services import do_schedule_public_post
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from tests.conftest import load_personas

pytestmark = [pytest.mark.integration, pytest.mark.nodes, pytest.mark.django_db(transaction=True),
              pytest.mark.xdist_group("processes")]

BASE_DIR = Path(settings.BASE_DIR)
PASSWORD = "node-test-password-2026"


class _NoRedirect(HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a redirect is an answer to look at, not to follow


class Browser:
    """A browser's session: its cookies, no redirect followed. ``request`` returns ``(status, text)``."""

    def __init__(self):
        self.cookies = CookieJar()
        self._opener = build_opener(HTTPCookieProcessor(self.cookies), _NoRedirect())

    def request(self, method: str, url: str, data: dict | None = None, headers: dict | None = None):
        body = urlencode(data).encode() if data is not None else None
        request = Request(url, data=body, method=method, headers=headers or {})
        try:
            with self._opener.open(request, timeout=30) as response:
                return response.status, response.read().decode()
        except HTTPError as error:
            return error.code, error.read().decode(errors="replace")

    def get(self, url: str, headers: dict | None = None):
        return self.request("GET", url, headers=headers)

    def post(self, url: str, data: dict, headers: dict | None = None):
        return self.request("POST", url, data, headers)

    def cookie_names(self) -> set[str]:
        return {cookie.name for cookie in self.cookies}


class Stack:
    """The processes of the test; ``stop()`` ends them (SIGTERM, then SIGKILL), their logs in ``tmp_path``."""

    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path
        self.started: list[tuple[str, subprocess.Popen, Path]] = []

    def start(self, name: str, args: list[str], env: dict[str, str]) -> None:
        log = self.tmp_path / f"{name}.log"
        with log.open("wb") as sink:
            proc = subprocess.Popen(args, cwd=BASE_DIR, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        self.started.append((name, proc, log))

    def output(self) -> str:
        return "\n".join(f"===== {name} (exit {proc.poll()}) =====\n{log.read_text(errors='replace')[-3000:]}"
                         for name, proc, log in self.started)

    def check_alive(self) -> None:
        for name, proc, _log in self.started:
            if proc.poll() is not None:
                pytest.fail(f"{name} exited with {proc.returncode}\n{self.output()}")

    def stop(self) -> None:
        for _name, proc, _log in self.started:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _name, proc, _log in self.started:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


@pytest.fixture
def redis_url(tmp_path):
    """The Redis of ``REDIS_URL``, else a private ``redis-server`` on a free port (tests/integration/conftest.py
    deselects this module when there is neither)."""
    if settings.REDIS_URL:
        yield settings.REDIS_URL
        return
    port = free_port()
    proc = subprocess.Popen([shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def stack(transactional_db, tmp_path, redis_url):
    """Two web nodes, a worker and a beat on this test's database and one Redis namespace; returns the nodes'
    base URLs, the stack and the demo's personas. The demo is loaded first and its pending events (due at the
    demo's fixed past times) are cancelled, so that no clock event changes a page between two of the test's
    requests."""
    demo = load_personas()
    ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True).update(cancelled_at=timezone.now())
    env = server_env()
    var_dir = tmp_path / "var"
    var_dir.mkdir()
    env.update(DJANGO_SETTINGS_MODULE="mafia_site.settings.test", REDIS_URL=redis_url,
               MAFIA_CACHE_PREFIX=f"nodes-{uuid.uuid4().hex[:8]}", MAFIA_LIVE_SHORTCUT="1",
               MAFIA_VAR_DIR=str(var_dir), MAFIA_DISPATCH_INTERVAL_SECONDS="1",
               DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost")
    processes = Stack(tmp_path)
    nodes = []
    for name in ("node1", "node2"):
        port = free_port()
        processes.start(name, [sys.executable, "-m", "gunicorn", "mafia_site.wsgi:application", "--workers", "2",
                               "--bind", f"127.0.0.1:{port}", "--timeout", "60", "--chdir", str(BASE_DIR)], env)
        nodes.append(f"http://127.0.0.1:{port}")
    celery = [str(Path(sys.executable).with_name("celery"))]
    processes.start("worker", [*celery, "-A", "mafia_site", "worker", "--loglevel=INFO", "--pool=solo",
                               "-n", f"nodes-{uuid.uuid4().hex[:8]}@%h", "--without-mingle", "--without-gossip",
                               "--without-heartbeat"], env)
    processes.start("beat", [*celery, "-A", "mafia_site", "beat", "--loglevel=INFO",
                             "-s", str(tmp_path / "beat-schedule")], env)
    for base in nodes:
        deadline = time.monotonic() + 60
        while True:
            processes.check_alive()
            try:
                if Browser().get(f"{base}/healthz")[0] == 200:
                    break
            except (URLError, OSError):
                pass
            assert time.monotonic() < deadline, f"{base} did not answer\n{processes.output()}"
            time.sleep(0.2)
    yield nodes, processes, demo
    processes.stop()
    print(processes.output())  # shown by pytest for a failing test


def _csrf(browser: Browser, url: str) -> str:
    status, text = browser.get(url)
    assert status == 200, text[:500]
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', text).group(1)


def _login(browser: Browser, base: str, username: str, password: str) -> tuple[int, str]:
    token = _csrf(browser, f"{base}/accounts/login/")
    return browser.post(f"{base}/accounts/login/", {"login": username, "password": password,
                                                    "csrfmiddlewaretoken": token},
                        headers={"Referer": f"{base}/accounts/login/"})


def _poll_url(text: str) -> str:
    found = re.search(r'id="live-poll"[^>]*hx-get="([^"]+)"', text)
    assert found, text[-1500:]
    return html.unescape(found.group(1))


def test_two_web_nodes_share_logins_posts_form_keys_rate_limits_and_the_workers_writes_L_INBOX_20(stack):
    nodes, processes, demo = stack
    node1, node2 = nodes
    player = demo.honest
    player.set_password(PASSWORD)
    player.save()
    square = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    thread = f"/inboxes/{square.public_id}/"

    # A login on node 1 is a session on node 2.
    browser = Browser()
    assert _login(browser, node1, player.username, PASSWORD)[0] == 302
    status, page = browser.get(f"{node2}{thread}")
    assert status == 200 and 'id="post-form"' in page, page[:500]

    # Node 2's open page idles on 204s until node 1 takes a post; its next poll shows it.
    poll = _poll_url(page)
    hx = {"HX-Request": "true"}
    assert browser.get(f"{node2}{poll}", headers=hx)[0] == 204
    token = _csrf(browser, f"{node1}{thread}")
    form = {"text": "Привет со второго узла", "idempotency_key": secrets.token_hex(16), "csrfmiddlewaretoken": token}
    status, text = browser.post(f"{node1}{thread}", form, headers={"Referer": f"{node1}{thread}"})
    assert status == 302, text[:500]
    status, shown = browser.get(f"{node2}{poll}", headers=hx)
    assert status == 200 and "Привет со второго узла" in shown

    # The same form sent again, to node 2 this time: one message, the first one.
    assert browser.post(f"{node2}{thread}", form, headers={"Referer": f"{node2}{thread}"})[0] == 302
    assert Message.objects.filter(inbox=square, body="Привет со второго узла").count() == 1

    # What the worker writes (a scheduled post, published by the beat's dispatcher) is read on both nodes.
    now = timezone.now()
    post = do_schedule_public_post(demo.game, title="Объявление узлам", body="Проверка узлов.",
                                   publish_at=now + timedelta(seconds=2), acting_user=demo.procurator, now=now)
    deadline = time.monotonic() + 30
    while not PublicPost.objects.filter(pk=post.pk, published_at__isnull=False).exists():
        processes.check_alive()
        assert time.monotonic() < deadline, f"not published\n{processes.output()}"
        time.sleep(0.2)
    for base in nodes:
        assert "Объявление узлам" in Browser().get(f"{base}/games/{demo.game.slug}/")[1]

    # The login rate limit counts the failures of both nodes: five wrong passwords, alternately, and then the
    # right one is refused on either node.
    victim = demo.mafioso
    victim.set_password(PASSWORD)
    victim.save()
    for attempt in range(5):
        assert _login(Browser(), nodes[attempt % 2], victim.username, "wrong-password")[0] == 200
    for base in nodes:
        browser = Browser()
        status, text = _login(browser, base, victim.username, PASSWORD)
        assert status in (200, 429) and "sessionid" not in browser.cookie_names(), status
        assert "Too many failed login attempts" in text or "Слишком много" in text, text[:2000]
    processes.check_alive()
