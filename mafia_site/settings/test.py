"""Test settings: the development base with fast hashing and a file SQLite test database.

The SQLite test database is a file (not ``:memory:``) so that a Celery worker started by the integration tests
in another process sees the same data. With DATABASE_URL set, pytest-django creates ``test_<name>`` on that
server.
"""
import os

from .base import *  # noqa: F401,F403
from mafia_site.env import env_bool

from .base import CACHES, DATABASES, VAR_DIR, env_int

DEBUG = False
TESTING = True
MAFIA_ALLOW_DEMO = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
VAR_DIR.mkdir(parents=True, exist_ok=True)
# A cache namespace per test process: parallel workers (and two runs at once) sharing one Redis never read each
# other's sessions.
# MAFIA_CACHE_PREFIX names one namespace for the processes of one test (web nodes sharing a cache).
CACHES["default"]["KEY_PREFIX"] = os.environ.get("MAFIA_CACHE_PREFIX") or f"test-{os.getpid()}"
if "options" in DATABASES["default"].get("OPTIONS", {}):
    # The suite's race tests hold a row in one thread while another waits for it: on a loaded machine a wait may
    # outlast the site's few seconds, so the suite waits longer unless told (the busy page's tests set their own
    # lock timeout; the stall test's server runs with the site's).
    DATABASE_LOCK_TIMEOUT_MS = env_int("DATABASE_LOCK_TIMEOUT_MS", 20_000)
    DATABASES["default"]["OPTIONS"]["options"] = " ".join(
        part if not part.startswith("lock_timeout=") else f"lock_timeout={DATABASE_LOCK_TIMEOUT_MS}"
        for part in DATABASES["default"]["OPTIONS"]["options"].split(" "))
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # One file per test run, so that two runs at once (two checkouts, a developer and CI) never share it.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-db-{os.getpid()}.sqlite3")}
# Live polls always build their answer, whatever the cache: a test that exercises the shortcut turns it on (with
# the on-commit callbacks run), so that a test's outcome does not depend on whether REDIS_URL is set.
MAFIA_LIVE_SHORTCUT = env_bool("MAFIA_LIVE_SHORTCUT", False)
