"""The bench's server and clients: gunicorn on loopback with the bench settings on the bench's own database, and
small HTTP/1.1 keep-alive clients that carry a session and a CSRF token, as a logged-in browser does.

Sessions are written by the bench (the database session store, which every session engine of the site can read:
``cached_db`` falls back to it), signed with the secret key handed to the server.
"""
from __future__ import annotations

import http.client
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env() -> dict[str, str]:
    """The environment of the server: bench settings, this process's secret key, and this process's database
    (the database itself, also when it is a test database: a file for SQLite, its name in ``DATABASE_URL``)."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "SQLITE_PATH"}}
    env.update(DJANGO_SETTINGS_MODULE="mafia_site.settings.bench", DJANGO_SECRET_KEY=settings.SECRET_KEY,
               PYTHONUNBUFFERED="1")
    name = connection.settings_dict["NAME"]
    if connection.vendor == "postgresql":
        params = connection.settings_dict
        user = quote(params.get("USER") or "")
        password = f":{quote(params['PASSWORD'])}" if params.get("PASSWORD") else ""
        host = params.get("HOST") or "127.0.0.1"
        port = f":{params['PORT']}" if params.get("PORT") else ""
        env["DATABASE_URL"] = f"postgres://{user}{password}@{host}{port}/{quote(name)}"
    elif connection.vendor == "sqlite":
        if not name or ":memory:" in str(name) or "mode=memory" in str(name):
            raise RuntimeError("the bench needs a database another process can open (a SQLite file or PostgreSQL)")
        env["SQLITE_PATH"] = str(name)
    else:
        raise RuntimeError(f"no server hand-over for the {connection.vendor} database")
    return env


@dataclass
class Server:
    """A running gunicorn (``workers`` sync workers) on ``base_url``; ``stop()`` ends it by its pid."""

    process: subprocess.Popen
    base_url: str
    log_path: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def start_server(*, workers: int, log_dir: Path, timeout: float = 60, env: dict[str, str] | None = None) -> Server:
    """Start gunicorn (``mafia_site.wsgi``) with ``workers`` sync workers on a free loopback port and wait until
    ``/healthz`` answers; ``env`` adds to the server's environment (``server_env``). Raises ``RuntimeError`` with
    the server's log when it does not start."""
    port = free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"gunicorn-{port}.log"
    base_dir = Path(settings.BASE_DIR)
    args = [sys.executable, "-m", "gunicorn", "mafia_site.wsgi:application", "--workers", str(workers),
            "--bind", f"127.0.0.1:{port}", "--worker-class", "sync", "--timeout", "120", "--backlog", "2048",
            "--chdir", str(base_dir)]
    with open(log_path, "wb") as out:
        process = subprocess.Popen(args, cwd=base_dir, env={**server_env(), **(env or {})}, stdout=out,
                                   stderr=subprocess.STDOUT)
    server = Server(process=process, base_url=f"http://127.0.0.1:{port}", log_path=log_path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}:\n{server.log()[-4000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                conn.close()
                return server
        except OSError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"gunicorn did not answer within {timeout} s:\n{server.log()[-4000:]}")


def session_cookie_for(user) -> str:
    """A new logged-in session of ``user`` in the database session store; returns its key."""
    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return store.session_key


@dataclass
class Response:
    status: int
    location: str | None
    statements: int | None
    body: bytes
    seconds: float


@dataclass
class Client:
    """One browser: a keep-alive connection to the server, the session of one user (or none) and a CSRF token."""

    base_url: str
    session_key: str | None = None
    csrf: str = field(default_factory=lambda: secrets.token_hex(16))  # 32 characters: an unmasked CSRF secret
    _conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            parts = urlsplit(self.base_url)
            self._conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _headers(self) -> dict[str, str]:
        cookies = [f"{settings.CSRF_COOKIE_NAME}={self.csrf}"]
        if self.session_key:
            cookies.append(f"{settings.SESSION_COOKIE_NAME}={self.session_key}")
        return {"Cookie": "; ".join(cookies), "Host": urlsplit(self.base_url).netloc,
                "Accept-Language": "ru", "Connection": "keep-alive"}

    def request(self, method: str, path: str, data: dict | None = None) -> Response:
        """One request (no redirect followed); the time is from sending to the last byte of the body."""
        headers = self._headers()
        body = None
        if data is not None:
            body = urlencode({**data, "csrfmiddlewaretoken": self.csrf}).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        for attempt in (1, 2):
            conn = self._connection()
            started = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers=headers)
                raw = conn.getresponse()
                content = raw.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()  # a worker closed the kept-alive connection: reconnect once
                if attempt == 2:
                    raise
                continue
            except (OSError, http.client.HTTPException):
                # A timeout or a broken response leaves the connection mid-request: the next request of this
                # client would fail on it (CannotSendRequest), so it starts on a new one; this one is the error.
                self.close()
                raise
            seconds = time.perf_counter() - started
            statements = raw.getheader("X-Bench-Statements")
            if raw.getheader("Connection", "").lower() == "close":
                self.close()
            return Response(status=raw.status, location=raw.getheader("Location"),
                            statements=int(statements) if statements is not None else None, body=content,
                            seconds=seconds)
        raise AssertionError("unreachable")

    def post_and_follow(self, path: str, data: dict) -> tuple[Response, Response | None]:
        """POST, then GET the redirect's target as a browser does."""
        first = self.request("POST", path, data)
        if first.status in (301, 302, 303) and first.location:
            target = urlsplit(first.location)
            return first, self.request("GET", target.path + (f"?{target.query}" if target.query else ""))
        return first, None
