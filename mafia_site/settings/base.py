"""Settings shared by every environment. Values that vary come from ``mafia_site.env`` (see .env.example)."""
from __future__ import annotations

from pathlib import Path

import dj_database_url

from mafia_site.env import env_bool, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("MAFIA_VAR_DIR", str(BASE_DIR / "var")))

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me-in-production-0123456789")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "mafia_site.apps.OperatorAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "allauth",
    "allauth.account",
    "django_htmx",
    "kernel",
    "accounts",
    "cities",
    "inboxes",
    "voting",
    "roles",
    "rulesets.lepra",
    "rulesets.m21",
    "archive",
    "staff",
    "sanctions",
    "bench",  # manage.py bench; its floor view is routed only under mafia_site.settings.bench
]

MIDDLEWARE = [
    "mafia_site.middleware.LivePollMiddleware",  # an idle live poll's 204, before the rest (kernel/live.py)
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "mafia_site.middleware.RejectNullBytesMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "cities.i18n.AccountLanguageMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "mafia_site.middleware.PrivateCacheMiddleware",
    "mafia_site.middleware.ContentSecurityPolicyMiddleware",
    "mafia_site.middleware.RuleViolationMiddleware",
    "mafia_site.middleware.DatabaseBusyMiddleware",
]
MAFIA_CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)

ROOT_URLCONF = "mafia_site.urls"
WSGI_APPLICATION = "mafia_site.wsgi.application"
SITE_ID = 1
# The site's public address and name, written into the sites framework after every migrate: e-mails link here.
MAFIA_SITE_DOMAIN = env_str("MAFIA_SITE_DOMAIN", "127.0.0.1:8000")
MAFIA_SITE_NAME = env_str("MAFIA_SITE_NAME", "Mafia Host")
MAFIA_SITE_SCHEME = env_str("MAFIA_SITE_SCHEME", "http")  # https behind a TLS proxy

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: SQLite with no environment; DATABASE_URL (postgres://...) switches to PostgreSQL via psycopg2.
DATABASE_URL = env_str("DATABASE_URL")
# PostgreSQL only, in milliseconds (0 = off). Bounds on one statement and on a transaction left idle (a hung
# handler, a killed web request): PostgreSQL cancels the statement / ends the session, so no lock is held for longer
# (DESIGN.md "The clock").
DATABASE_STATEMENT_TIMEOUT_MS = env_int("DATABASE_STATEMENT_TIMEOUT_MS", 30_000)
DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS = env_int("DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS", 60_000)
# The longest a statement waits for one lock (a row another transaction holds): then it fails, and a page answers
# "busy, try again" (503, the typed text kept) instead of holding its web worker while a hung transaction holds the
# row. PostgreSQL counts each lock a statement waits for: behind other waiters for a row, a statement waits first for
# its place in the row's queue, then for the row, so a post to a held inbox is answered within twice this (4 s).
# Every session (web, commands) starts with it; the clock's ticks use their own below.
DATABASE_LOCK_TIMEOUT_MS = env_int("DATABASE_LOCK_TIMEOUT_MS", 2_000)
# The clock's ticks (the beat task and manage.py run_due_events) set their own bounds for their session: a handler
# may wait longer for a lock than a request (nobody waits on the worker; a timed-out handler is retried after its
# back-off), and a hung handler is cut well before a minute, by statement or while idle in its transaction.
MAFIA_CLOCK_LOCK_TIMEOUT_MS = env_int("MAFIA_CLOCK_LOCK_TIMEOUT_MS", 10_000)
MAFIA_CLOCK_STATEMENT_TIMEOUT_MS = env_int("MAFIA_CLOCK_STATEMENT_TIMEOUT_MS", 20_000)
MAFIA_CLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS = env_int("MAFIA_CLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS", 20_000)
# A page that met a busy database (a lock or statement timeout) asks the browser to try again after this many
# seconds (its Retry-After header).
MAFIA_BUSY_RETRY_AFTER_SECONDS = env_int("MAFIA_BUSY_RETRY_AFTER_SECONDS", 5)
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60))}
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = (
        f"-c statement_timeout={DATABASE_STATEMENT_TIMEOUT_MS}"
        f" -c idle_in_transaction_session_timeout={DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS}"
        f" -c lock_timeout={DATABASE_LOCK_TIMEOUT_MS}")
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env_str("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            # Web, worker and beat share the file: wait for the lock instead of failing at once.
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# django-allauth: log in with username or e-mail; a display name is asked at sign-up (accounts.forms).
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "username*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = env_str("ACCOUNT_EMAIL_VERIFICATION", "optional")
ACCOUNT_SIGNUP_FORM_CLASS = "accounts.forms.SignupForm"
ACCOUNT_ADAPTER = "accounts.adapter.AccountAdapter"  # usernames cannot impersonate (accounts.names)
ACCOUNT_LOGOUT_ON_GET = False
LOGIN_REDIRECT_URL = "/"
ACCOUNT_LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "ru"
LANGUAGES = [("ru", "Русский"), ("en", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
# The site's own date formats where Django's differ (English: "Tue 8 Dec 2026, 04:30").
FORMAT_MODULE_PATH = ["mafia_site.formats"]
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Mafia Host <noreply@localhost>")

# Celery: Redis when REDIS_URL is set, otherwise kombu's filesystem transport (no server needed).
REDIS_URL = env_str("REDIS_URL")
CELERY_BROKER_DIR = VAR_DIR / "celery-broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
else:
    CELERY_BROKER_URL = "filesystem://"
    # kombu's filesystem transport with messages written atomically (a worker never reads a half-written one).
    CELERY_BROKER_TRANSPORT = "mafia_site.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_DIR / "queue"),
        "data_folder_out": str(CELERY_BROKER_DIR / "queue"),
        "processed_folder": str(CELERY_BROKER_DIR / "processed"),
        "control_folder": str(CELERY_BROKER_DIR / "control"),
        "store_processed": False,
    }
# Cache: Redis when REDIS_URL is set (shared by the web processes), else each process's local memory.
# Sessions are read from the cache and written through to the database (cached_db): a page view costs no session
# query, and a flushed or cold cache logs nobody out (the database is the fallback).
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                          "KEY_PREFIX": "mafia"}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Bounds on one task (DESIGN.md "The clock"): at the soft limit the handler gets SoftTimeLimitExceeded (recorded
# as a failure and retried); at the hard limit the prefork pool kills the child (the attempt recorded before the
# handler shows the crash on the clock page).
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 120)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 150)
# A worker takes one message at a time: ticks queued behind a stuck handler stay in the broker, where they expire.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1

# Game tunables (documented in .env.example; mafia_site/checks.py rejects impossible values).
# How often beat runs the scheduler tick (DESIGN.md "The clock"), in seconds.
MAFIA_DISPATCH_INTERVAL_SECONDS = env_float("MAFIA_DISPATCH_INTERVAL_SECONDS", 30.0)
# How long a tick waits in the broker before it expires (seconds; default one interval, so ticks never pile up).
MAFIA_DISPATCH_TICK_EXPIRES_SECONDS = env_float("MAFIA_DISPATCH_TICK_EXPIRES_SECONDS", MAFIA_DISPATCH_INTERVAL_SECONDS)
# Most events one tick runs before yielding to the next tick.
MAFIA_DISPATCH_BATCH = env_int("MAFIA_DISPATCH_BATCH", 200)
# A failing scheduled event is retried with exponential back-off up to this delay, in seconds.
MAFIA_EVENT_RETRY_MAX_SECONDS = env_int("MAFIA_EVENT_RETRY_MAX_SECONDS", 3600)
# After a crash (the attempt started but never finished), the event is tried again after this many seconds.
MAFIA_EVENT_CRASH_RETRY_SECONDS = env_int("MAFIA_EVENT_CRASH_RETRY_SECONDS", 30)
# The shortest time the Procurator gets to edit a drafted daily post before the site publishes it,
# in minutes: the default of a new game (``Game.daily_post_edit_minutes``).
MAFIA_DAILY_POST_EDIT_MINUTES = env_int("MAFIA_DAILY_POST_EDIT_MINUTES", 30)
# Longest message body, in characters.
MAFIA_MESSAGE_MAX_LENGTH = env_int("MAFIA_MESSAGE_MAX_LENGTH", 20000)
# Messages per page of an inbox thread.
MAFIA_MESSAGES_PER_PAGE = env_int("MAFIA_MESSAGES_PER_PAGE", 50)
# Live pages (htmx): how often an open thread asks for new messages, and the top bar for the unread count (s).
# A hidden tab does not ask at all.
MAFIA_LIVE_POLL_SECONDS = env_int("MAFIA_LIVE_POLL_SECONDS", 10)
MAFIA_LIVE_BADGE_SECONDS = env_int("MAFIA_LIVE_BADGE_SECONDS", 30)
# A poll that finds nothing new is answered from the shared cache (kernel/live.py, README "Live pages at scale"):
# on by default when Redis is configured (a cache every process shares), off with a per-process cache (refused
# at start-up if turned on there, mafia.E008).
MAFIA_LIVE_SHORTCUT = env_bool("MAFIA_LIVE_SHORTCUT", bool(REDIS_URL))
# How long a poll token's record lives in the cache without a full answer renewing it (s): the bound on what a
# lost cache write, or a change that only time makes, can delay.
MAFIA_LIVE_TOKEN_SECONDS = env_int("MAFIA_LIVE_TOKEN_SECONDS", 600)
# Whether the demo game may be loaded (never in production settings: mafia_site/checks.py).
#: The ruleset of a game created without naming one (a key a ruleset app of INSTALLED_APPS registers).
MAFIA_DEFAULT_RULESET = env_str("MAFIA_DEFAULT_RULESET", "lepra")
MAFIA_ALLOW_DEMO = False

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
