"""Test settings: the development base with fast hashing and a file SQLite test database.

The SQLite test database is a file (not ``:memory:``) so that a Celery worker started by the integration tests
in another process sees the same data. With DATABASE_URL set, pytest-django creates ``test_<name>`` on that
server.
"""
from .base import *  # noqa: F401,F403
from .base import DATABASES, VAR_DIR

DEBUG = False
TESTING = True
MAFIA_ALLOW_DEMO = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}
