"""A lock names the rows it locks: no ``select_for_update()`` that reads another table (``select_related``, a
filter across a relation) takes a plain ``FOR UPDATE`` on that table's rows too (DESIGN.md "The clock").

Three nets: the suite's guard (``tests/lock_scope.py``: every locking query any test compiles), a scan of the
source for locking chains that join without ``of=`` (code no test runs), and the SQL of the clock's own locks as
PostgreSQL receives it (the scheduler's event lock, the daily post's lock).
"""
from __future__ import annotations

import ast
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from cities.models import GameDay, PublicPost, ScheduledEvent
from cities.scheduler import do_retry_scheduled_event
from rulesets.lepra.clock.services import do_edit_daily_post
from inboxes.models import Membership
from tests import lock_scope
from tests.cities.clock_helpers import advance, clocked_game, night_handler

#: Lookups that compare a field's value: a keyword made of a field and these reads one table.
VALUE_LOOKUPS = {"exact", "iexact", "contains", "icontains", "in", "gt", "gte", "lt", "lte", "startswith",
                 "istartswith", "endswith", "iendswith", "range", "date", "year", "month", "day", "isnull", "regex",
                 "iregex", "week_day", "hour", "minute", "second", "time", "contained_by", "overlap", "has_key"}

#: The project's packages (the virtualenv, the tests and run-time folders are not code that runs on the site).
CODE_DIRS = ("accounts", "archive", "bench", "cities", "inboxes", "kernel", "mafia_site", "roles", "rulesets",
             "sanctions", "staff", "voting")


def _chain(node: ast.AST) -> list[ast.Call]:
    """The method calls of the chain that ends at ``node`` (``a.b(...).c(...)`` -> [b(...), c(...)])."""
    calls = []
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            calls.append(node)
            node = node.func.value
        elif isinstance(node, ast.Attribute):
            node = node.value
        else:
            return list(reversed(calls))


def _joins(call: ast.Call) -> str | None:
    """Why ``call`` makes its query read another table: a ``select_related`` or a keyword across a relation."""
    name = call.func.attr
    if name == "select_related":
        return "select_related"
    if name in {"filter", "exclude", "get", "get_or_create", "update_or_create", "first", "last"}:
        for keyword in call.keywords:
            if keyword.arg and "__" in keyword.arg:
                parts = keyword.arg.split("__")
                if any(part not in VALUE_LOOKUPS for part in parts[1:]):
                    return f"{name}({keyword.arg}=...)"
    return None


def spreading_locks_in_source() -> list[str]:
    """Each ``select_for_update(...)`` without ``of=`` in a method chain that joins another table, as
    ``path:line: reason``, over the project's packages."""
    found = []
    base = Path(settings.BASE_DIR)
    for directory in CODE_DIRS:
        for path in sorted((base / directory).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            outermost = {id(n.func.value) for n in ast.walk(tree)
                         if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call) or id(node) in outermost:
                    continue  # only whole chains: a call that is the receiver of another is seen from its end
                calls = _chain(node)
                locks = [c for c in calls if c.func.attr == "select_for_update"
                         and not any(k.arg == "of" for k in c.keywords)]
                if not locks:
                    continue
                reasons = [reason for c in calls if (reason := _joins(c))]
                if reasons:
                    found.append(f"{path.relative_to(base)}:{locks[0].lineno}: {', '.join(reasons)}")
    return found


def test_no_lock_in_the_code_joins_another_table_without_naming_its_rows():
    assert spreading_locks_in_source() == []


@pytest.mark.django_db
def test_the_scan_and_the_guard_find_a_lock_that_spreads():
    bad = ast.parse('ScheduledEvent.objects.select_for_update().select_related("game").get(pk=1)\n'
                    'Membership.objects.select_for_update().filter(resident__game=g).first()\n'
                    'Membership.objects.select_for_update(of=("self",)).select_related("inbox").first()\n'
                    'Membership.objects.select_for_update().filter(closed_at__isnull=True).first()\n')
    flagged = [_joins(c) for stmt in bad.body for c in _chain(stmt.value)
               if any(c2.func.attr == "select_for_update" and not any(k.arg == "of" for k in c2.keywords)
                      for c2 in _chain(stmt.value))]
    assert [reason for reason in flagged if reason] == ["select_related", "filter(resident__game=...)"]

    lock_scope.take_recorded()
    with transaction.atomic():
        ScheduledEvent.objects.select_for_update().select_related("game").query.get_compiler("default").as_sql()
        Membership.objects.select_for_update(of=("self",)).select_related("inbox").query.get_compiler(
            "default").as_sql()
        Membership.objects.select_for_update().filter(pk=1).query.get_compiler("default").as_sql()
    assert lock_scope.take_recorded() == [
        ("select_for_update() on ScheduledEvent reads cities_scheduledevent, cities_game without of=: a plain FOR "
         "UPDATE locks the rows of every one of them")]


FOR_CLAUSE = re.compile(r"\bFOR (?:NO KEY )?UPDATE\b(?P<rest>[^;]*)$")


def locking_statements(queries) -> list[str]:
    """The captured statements that lock rows (their last ``FOR [NO KEY] UPDATE`` clause)."""
    return [q["sql"] for q in queries if FOR_CLAUSE.search(q["sql"])]


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_clocks_locks_lock_their_own_rows_only_L_POST_2():
    """The scheduler's ticks, a "retry now" and the daily post's edit: every locking statement that joins names
    its table (``FOR UPDATE OF``): the game's row is never locked by them. On SQLite (no row locks) the guard
    checks the same queries."""
    lock_scope.take_recorded()
    with night_handler():
        built = clocked_game("lock-scope")
    game = built.game
    with CaptureQueriesContext(connection) as ticks:
        advance(game, datetime(2027, 3, 3, 6, tzinfo=UTC))  # night 2 resolved, the day-3 post drafted
    post = GameDay.objects.get(game=game, number=3).post
    event = ScheduledEvent.objects.filter(game=game, done_at__isnull=True).order_by("due_at").first()
    ScheduledEvent.objects.filter(pk=event.pk).update(attempts=1, last_error="boom", due_at=event.due_at)
    now = max(event.due_at, datetime(2027, 3, 3, 6, 20, tzinfo=UTC))
    with CaptureQueriesContext(connection) as staff:
        do_edit_daily_post(post, title="День третий", body=post.body, acting_user=built.procurator,
                           now=datetime(2027, 3, 3, 6, 20, tzinfo=UTC))
        do_retry_scheduled_event(event, acting_user=built.procurator, now=now)
    assert PublicPost.objects.get(pk=post.pk).title == "День третий"
    assert lock_scope.take_recorded() == []
    if connection.vendor == "postgresql":
        statements = locking_statements(ticks.captured_queries) + locking_statements(staff.captured_queries)
        assert any("cities_scheduledevent" in s for s in statements)
        assert any('"cities_publicpost"' in s and " JOIN " in s for s in statements)
        spreading = [s for s in statements if " JOIN " in s.split(" WHERE ")[0]
                     and " OF " not in FOR_CLAUSE.search(s).group(0)]
        assert spreading == []
