"""The process tests' shared pieces: the Redis that the web-node tests need.

The web-node tests (marked ``nodes``) check what several web nodes share through Redis. They use the Redis of
``REDIS_URL``, else a private ``redis-server`` they start when one is installed; with neither (a fresh machine
running ``make test``) they are deselected, loudly (never counted as passed), unless ``MAFIA_E2E_REQUIRED`` (set by
``.ci/run``) makes the missing server a failure.
"""
from __future__ import annotations

import os
import shutil

from django.conf import settings

# The process fixtures, shared by every test of this folder by name.
from tests.integration.celery_helpers import only_our_events, processes  # noqa: F401


def redis_missing() -> str | None:
    """Why the web-node tests cannot have a Redis, or None."""
    if settings.REDIS_URL or shutil.which("redis-server"):
        return None
    return "no REDIS_URL and no redis-server on PATH"


def pytest_collection_modifyitems(config, items):
    """Deselect the web-node tests (loudly) when no Redis can be had, unless MAFIA_E2E_REQUIRED is set."""
    nodes = [item for item in items if item.get_closest_marker("nodes") is not None]
    reason = redis_missing() if nodes else None
    if reason is None or os.environ.get("MAFIA_E2E_REQUIRED", "") not in ("", "0"):
        return
    config.hook.pytest_deselected(items=nodes)
    items[:] = [item for item in items if item.get_closest_marker("nodes") is None]
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_sep("!", f"WEB-NODE TESTS NOT RUN: {len(nodes)} deselected: {reason}", red=True, bold=True)
