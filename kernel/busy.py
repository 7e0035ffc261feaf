"""A busy database: a request that waited its limit for a lock (or whose statement ran out of time) is refused
with "busy, try again" (HTTP 503 and ``Retry-After``), never a 500 (DESIGN.md "The clock").

PostgreSQL cancels such a statement with SQLSTATE 55P03 (``lock_not_available``: ``lock_timeout``) or 57014
(``query_canceled``: ``statement_timeout``); SQLite, whose writers share one file lock, says "database is locked"
once its busy timeout has passed. The transaction is rolled back whole: nothing of the request was stored.
"""
from __future__ import annotations

from django.conf import settings
from django.db import OperationalError
from django.utils.translation import gettext as _

#: SQLSTATE codes of a statement cancelled by ``lock_timeout`` or ``statement_timeout``.
BUSY_SQLSTATES = frozenset({"55P03", "57014"})


def is_database_busy(error: BaseException) -> bool:
    """Whether ``error`` is a database refusal for lack of time (a lock not obtained in time, a statement
    cancelled by its timeout, SQLite's busy file lock): the request may simply be tried again."""
    if not isinstance(error, OperationalError):
        return False
    if getattr(error.__cause__, "pgcode", None) in BUSY_SQLSTATES:
        return True
    return "database is locked" in str(error)


class DatabaseBusy(Exception):
    """A request refused because the database was busy (``is_database_busy``): nothing was stored. ``str()`` is
    the player-readable refusal, in the active language."""

    status = 503

    def __str__(self) -> str:
        return _("The site is busy: this was not saved. Please try again in a few seconds; your text is still in "
                 "the form.")


def busy_page_message() -> str:
    """The refusal of a busy page that is not the post form's (``DatabaseBusyMiddleware``), in the active
    language."""
    return _("The site is busy: nothing was saved. Please try again in a few seconds (your browser's Back button "
             "returns to the form with what you typed).")


def retry_after_seconds() -> int:
    """The ``Retry-After`` of a busy answer, in seconds (``MAFIA_BUSY_RETRY_AFTER_SECONDS``)."""
    return settings.MAFIA_BUSY_RETRY_AFTER_SECONDS
