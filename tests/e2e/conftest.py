"""Fixtures of the browser tests (issue 9): Debian's Chromium driven by Playwright, a live stack (web, Celery worker
and beat on a game clock the test moves, ``stack.py``), and the screenshot folder.

When is the browser suite run? Always when a Chromium is found (``MAFIA_CHROMIUM`` or ``/usr/bin/chromium``) and
Playwright is installed. Otherwise:

- with ``MAFIA_E2E_REQUIRED=1`` (``.ci/run`` sets it): the e2e tests run and FAIL, naming what is missing;
- without it (a fresh machine running ``make test``): they are deselected (counted as "deselected", never as
  passed), and pytest prints a loud line at the start and at the end naming ``scripts/install_browser.sh``.

The stack (processes) and the browser are shared by the e2e package; each test is transactional (the server and
the worker are other processes: they must see committed rows) and builds its own game with ``builder.py``.
"""
from __future__ import annotations

import importlib.util
import os
import random
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.conf import settings

CHROMIUM_DEFAULT = "/usr/bin/chromium"
INSTALL_HINT = "`make browser` (scripts/install_browser.sh)"
#: Where a run leaves its screenshots (the best are copied by hand to docs/screenshots/).
SCREENSHOT_DIR = Path(settings.VAR_DIR) / "screenshots"
#: The game clock's first reading: the morning the Procurator opens the game (Europe/Moscow is UTC+3).
CLOCK_START = datetime(2027, 3, 1, 6, 0, tzinfo=UTC)


def chromium_path() -> str | None:
    """The Chromium the tests drive: ``MAFIA_CHROMIUM`` or Debian's ``/usr/bin/chromium``; None when absent."""
    path = os.environ.get("MAFIA_CHROMIUM") or CHROMIUM_DEFAULT
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def missing_browser() -> str | None:
    """Why the browser tests cannot run here (None when they can)."""
    if importlib.util.find_spec("playwright") is None:
        return "the Python package playwright is not installed (pip install -r requirements-test.txt)"
    if chromium_path() is None:
        where = os.environ.get("MAFIA_CHROMIUM") or CHROMIUM_DEFAULT
        return f"no Chromium at {where} (run {INSTALL_HINT}, or set MAFIA_CHROMIUM)"
    return None


def e2e_required() -> bool:
    return os.environ.get("MAFIA_E2E_REQUIRED", "") not in ("", "0")


def _loud(config, text: str) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_sep("!", text, red=True, bold=True)


def pytest_collection_modifyitems(config, items):
    """Deselect the e2e tests (loudly) when the browser is missing, unless MAFIA_E2E_REQUIRED makes it a
    failure."""
    e2e = [item for item in items if item.get_closest_marker("e2e") is not None]
    reason = missing_browser() if e2e else None
    if reason is None or e2e_required():
        return
    config.hook.pytest_deselected(items=e2e)
    items[:] = [item for item in items if item.get_closest_marker("e2e") is None]
    config._mafia_e2e_missing = (reason, len(e2e))
    _loud(config, f"BROWSER TESTS NOT RUN: {len(e2e)} e2e tests deselected: {reason}")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    missing = getattr(config, "_mafia_e2e_missing", None)
    if missing is not None:
        reason, count = missing
        terminalreporter.write_sep("!", f"BROWSER TESTS NOT RUN ({count} deselected): {reason}", red=True, bold=True)
        terminalreporter.write_line(f"Install the browser with {INSTALL_HINT} (Debian/Ubuntu, apt), then run "
                                    "make test again.", red=True, bold=True)


# --------------------------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="package")
def stack(django_db_setup, django_db_blocker, tmp_path_factory):
    """The live stack (web + Celery worker + beat on the game clock) for the e2e package. Afterwards the seeded
    demo game is loaded again (each e2e test is transactional: its flush removed it) so that later tests find it
    as ``tests/conftest.py`` left it."""
    from rulesets.lepra.demo import demo_exists, load_demo_game
    from tests.conftest import DEMO_NOW, DEMO_SEED

    from .stack import start_stack

    reason = missing_browser()
    if reason is not None:  # only reached when MAFIA_E2E_REQUIRED is set (see the module docstring)
        pytest.fail(f"MAFIA_E2E_REQUIRED is set but the browser tests cannot run: {reason}")
    with django_db_blocker.unblock():
        running = start_stack(tmp_path_factory.mktemp("e2e-stack"), CLOCK_START)
    yield running
    running.processes.stop()
    with django_db_blocker.unblock():
        if not demo_exists():
            load_demo_game(rng=random.Random(DEMO_SEED), now=DEMO_NOW)


@pytest.fixture(scope="package")
def browser(stack):
    """Debian's Chromium, headless, launched by Playwright through ``executable_path`` (nothing downloaded)."""
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an asyncio loop in this thread; the test's own ORM calls are synchronous and
    # never run inside it, so Django's async-safety check is lifted while the browser is open (the processes of
    # the stack started before and do not inherit this).
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="package")
def screenshots():
    """The screenshot helper, writing PNGs to ``var/screenshots/`` (emptied when the e2e package starts)."""
    from .pages import Screenshots

    shutil.rmtree(SCREENSHOT_DIR, ignore_errors=True)
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    return Screenshots(SCREENSHOT_DIR)


@pytest.fixture
def lepra(stack, browser, screenshots, transactional_db):
    """A ``BrowserGame`` for one test (people in their own browser contexts, closed afterwards). The clock goes on
    from where the previous test left it (it never moves back: Celery beat would stop ticking). Pending scheduled
    events made outside the test (the demo game's post) are cancelled."""
    from cities.models import ScheduledEvent

    from .builder import BrowserGame

    ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True).update(cancelled_at=CLOCK_START)
    game = BrowserGame(stack, browser, screenshots)
    yield game
    game.close()
