"""Read marks: how far each reader has read each inbox (``ReadMark``), moved forward by the pages a reader is shown
and by their own posts, never back. The reader's own state: not audited, no transaction of its own."""
from __future__ import annotations

from datetime import datetime

from django.db import connection
from django.utils.translation import gettext as _

from kernel.errors import NotAllowed
from kernel.live import note_reads_changed
from kernel.prepared import Statement, execute_prepared

from . import policies
from .models import Inbox, ReadMark


def advance_read_mark(user, inbox: Inbox, up_to: datetime) -> None:
    """Move ``user``'s read mark of ``inbox`` forward to ``up_to``, never back, in one statement: an upsert
    (``INSERT ... ON CONFLICT DO UPDATE ... WHERE`` the stored mark is older; PostgreSQL and SQLite). A single
    statement is atomic by itself: no lock, no savepoint, and two tabs at once cannot fail or move it back."""
    statement = read_mark_statement(user, inbox, up_to)
    with connection.cursor() as cursor:
        execute_prepared(cursor, statement.sql, statement.params)
    note_reads_changed(user.pk)


def read_mark_statement(user, inbox: Inbox, up_to: datetime) -> Statement:
    """``advance_read_mark``'s upsert as a statement to run with others (``kernel.prepared.execute_together``)."""
    table = ReadMark._meta.db_table
    at = ReadMark._meta.get_field("last_read_at").get_db_prep_save(up_to, connection)
    sql = (f"INSERT INTO {table} (user_id, inbox_id, last_read_at) VALUES (%s, %s, %s) "
           f"ON CONFLICT (user_id, inbox_id) DO UPDATE SET last_read_at = excluded.last_read_at "
           f"WHERE {table}.last_read_at < excluded.last_read_at")
    return Statement(key=("raw", sql), sql=sql, params=[user.pk, inbox.pk, at])


def do_mark_inbox_read(inbox: Inbox, *, acting_user, up_to: datetime) -> None:
    """Record that ``acting_user`` has read ``inbox`` up to ``up_to`` (the receive time of the newest message
    they were shown, aware UTC). A read mark never moves back. Not audited: it is the reader's own state.
    No transaction of its own: a page view costs one statement (an upsert).
    Raises ``NotAllowed`` when the user may not read the inbox.
    """
    if not policies.can_read_inbox(acting_user, inbox) or not acting_user.is_authenticated:
        raise NotAllowed(_("No such inbox."))
    advance_read_mark(acting_user, inbox, up_to)
