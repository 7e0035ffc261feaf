"""A guard over every locking query the suite compiles: a ``select_for_update()`` whose SQL reads more than one
table must name the rows it locks (``of=``).

PostgreSQL's ``FOR UPDATE`` without ``OF`` locks the rows of every table in the query's FROM clause: a lock taken
with ``select_related("game")`` (or a filter across a relation) locks the game's row too, and with a plain
``FOR UPDATE``, which conflicts with the ``KEY SHARE`` locks that every insert referencing the game takes; one
hung transaction holding it then stops every post of the game. The guard records each such query when Django
compiles it (on SQLite too, where the lock clause itself is not written: the joins are the same), and the
suite's autouse fixture (``tests/conftest.py``) fails the test that compiled one, whatever the code did with
any error: so a new locking query that spreads cannot come in through a test that runs it.
"""
from __future__ import annotations

import threading

from django.db.models.sql.compiler import SQLCompiler

_recorded: list[str] = []
_recorded_lock = threading.Lock()
_installed = False


def tables_read(query) -> list[str]:
    """The tables of ``query``'s FROM clause (its base table and every join in use), as SQL names."""
    return [join.table_name for alias, join in query.alias_map.items() if query.alias_refcount.get(alias)]


def spreading_lock(query) -> str | None:
    """A description of ``query`` when it locks rows (``select_for_update``) without ``of=`` while reading more
    than one table; None otherwise."""
    if not query.select_for_update or query.select_for_update_of:
        return None
    tables = tables_read(query)
    if len(tables) <= 1:
        return None
    return (f"select_for_update() on {query.model.__name__} reads {', '.join(tables)} without of=: "
            f"a plain FOR UPDATE locks the rows of every one of them")


def install() -> None:
    """Wrap ``SQLCompiler.get_from_clause`` (once per process) so that every compiled spreading lock is recorded.
    The FROM clause is where the tables are known: ``select_related``'s joins are set up while compiling, and the
    compiler resets the query's reference counts once the SQL is written."""
    global _installed
    if _installed:
        return
    original = SQLCompiler.get_from_clause

    def get_from_clause(self):
        problem = spreading_lock(self.query)
        if problem is not None:
            with _recorded_lock:
                _recorded.append(problem)
        return original(self)

    SQLCompiler.get_from_clause = get_from_clause
    _installed = True


def take_recorded() -> list[str]:
    """The spreading locks compiled since the last call (each once), and forget them."""
    with _recorded_lock:
        found = list(dict.fromkeys(_recorded))
        _recorded.clear()
    return found
