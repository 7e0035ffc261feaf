"""Prepared querysets: the hot paths' queries compiled to SQL once per process, then run with new parameters.

Building a queryset and compiling it to SQL costs Django more than running it: on the vote post, the policy's
few fixed-shape reads (the viewer's roles and seats, the inbox with the viewer's membership, the locks) spent most
of the request's CPU in ``QuerySet.filter``/``annotate`` and the SQL compiler. A ``PreparedQuery`` builds its
queryset once, with placeholder values standing for its parameters, compiles it on first use for each database
connection alias, and afterwards runs the stored SQL with the call's values, turning rows into model instances
exactly as ``QuerySet.__iter__`` does (``select_related`` objects and annotations included). The query is still
an ordinary queryset, written with the ORM; only its compilation is cached.

On PostgreSQL the statement is also prepared on the server (``PREPARE``, then ``EXECUTE``), once per database
session: planning a query of several joins costs the server more than running it (1.2 ms against 0.2 ms for the
inbox with the viewer's membership). The first use in a session sends ``PREPARE ...; EXECUTE ...`` as one
statement, so a statement count does not depend on which request came first. A prepared statement outlives a
rolled-back transaction; when the combined statement fails, the query is prepared under a new name next time
(whatever the server kept is never executed again). Sessions behind a transaction-pooling proxy (PgBouncer in
transaction mode) would not keep their statements: the site connects to PostgreSQL directly.

Only shapes that do not depend on the values may be prepared: no value that changes the SQL text (``None``
turning ``=`` into ``IS NULL``); a list of integers (an ``__in``) is compiled once per length. The first use checks
that every placeholder reaches the SQL parameters unchanged and raises ``ImproperlyConfigured`` otherwise.
"""
from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from django.core.exceptions import ImproperlyConfigured
from django.db import connections
from django.db.models import BigIntegerField, Func, QuerySet, signals
from django.db.models.query import get_related_populators
from django.db.models.sql import UpdateQuery
from django.db.transaction import TransactionManagementError
from psycopg2.extras import Json  # the driver's JSON adapter (Django's Jsonb subclasses it); always installed

# Placeholder values: the queryset is compiled twice, with two sets of placeholders, and the parameters that differ
# are the slots (a constant equal to a placeholder stays a constant). Small positive integers, valid for every
# integer field (an out-of-range value would compile to an empty result), and strings no input can hold (NUL).
_INT_BASES = (1_000, 2_000)
_STR_MARKS = ("\x00prepared-a-{}\x00", "\x00prepared-b-{}\x00")
# Aware datetimes no stored time equals; a database that stores datetimes as text (SQLite) gets the adapted form
# in the SQL parameters, and its slots are marked so that the call's values are adapted the same way.
_DATETIME_BASES = (datetime(1901, 2, 3, 4, 5, 6, 7, tzinfo=UTC), datetime(1902, 3, 4, 5, 6, 7, 8, tzinfo=UTC))
_ADAPTED = "adapted"  # the list-index place of a slot that holds a datetime in the database's adapted form


_NAMES = itertools.count(1)  # server-side statement names, unique in the process


def _numbered(sql: str) -> str:
    """``sql`` with psycopg2's ``%s`` placeholders as PostgreSQL's ``$1, $2, ...`` (``%%`` stays, for psycopg2)."""
    numbers = itertools.count(1)
    return re.sub(r"%[s%]", lambda m: f"${next(numbers)}" if m.group() == "%s" else "%%", sql)


def _server_statements(connection) -> dict:
    """The statements prepared in ``connection``'s current database session: {query key: name}. A new session (a
    reconnection) starts empty: the session is told by the server's process id and the client object."""
    raw = connection.connection
    session = (id(raw), raw.get_backend_pid())
    state = getattr(connection, "_mafia_prepared_statements", None)
    if state is None or state[0] != session:
        state = connection._mafia_prepared_statements = (session, {})
    return state[1]


#: PostgreSQL types of parameters by their first value's Python type, first match wins (bool before int).
_SERVER_TYPES = ((bool, "boolean"), (int, "bigint"), (float, "double precision"), (str, "text"),
                 (datetime, "timestamptz"), (date, "date"), (Decimal, "numeric"), (Json, "jsonb"))


def _server_type(value) -> str:
    """The PostgreSQL type a prepared statement declares for a parameter first sent as ``value``: the client sends
    literals, and a parameter with nothing around it to type it (``CASE WHEN ... THEN $1``) would otherwise be
    taken as text. ``unknown`` (None, other types) leaves the server to infer it from where it stands. Every
    datetime the site stores is aware (``USE_TZ``)."""
    return next((name for kind, name in _SERVER_TYPES if isinstance(value, kind)), "unknown")


def _server_text(known: dict, new: dict, key: tuple, sql: str, params: list) -> str:
    """The text that runs ``sql`` as the session's prepared statement ``key``: ``EXECUTE name (...)`` when ``known``
    (the session's statements) or ``new`` (those this round trip prepares) has it, else ``PREPARE ...; EXECUTE``
    under a new name, recorded in ``new`` (the caller moves it to ``known`` once the round trip succeeded)."""
    arguments = f" ({', '.join(['%s'] * len(params))})" if params else ""
    name = known.get(key) or new.get(key)
    if name is not None:
        return f"EXECUTE {name}{arguments}"
    name = new[key] = f"mafia_prepared_{next(_NAMES)}"
    declared = f" ({', '.join(_server_type(p) for p in params)})" if params else ""
    return f"PREPARE {name}{declared} AS {_numbered(sql)}; EXECUTE {name}{arguments}"


def _execute_server_prepared(connection, cursor, key: tuple, sql: str, params: list) -> None:
    """Run ``sql`` with ``params`` on PostgreSQL as a statement prepared in the session (see the module)."""
    known, new = _server_statements(connection), {}
    cursor.execute(_server_text(known, new, key, sql, params), params)
    known.update(new)  # only once it ran: after a failure the next call prepares another name


@dataclass(frozen=True)
class Statement:
    """One write statement to run later with others (``execute_together``): ``key`` names its prepared form in a
    database session (the same text, the same key), ``sql`` has ``%s`` placeholders for ``params``."""

    key: tuple
    sql: str
    params: list


def execute_together(statements: list[Statement], *, using: str = "default") -> int:
    """Run ``statements`` (writes whose results the caller does not need) in order, inside the caller's
    transaction: on PostgreSQL as one round trip (``EXECUTE a (...); EXECUTE b (...)``, each prepared once per
    session as ``execute_prepared`` does, a first use sending its ``PREPARE`` in the same round trip), elsewhere one
    by one. Returns the number of rows the last statement changed (a conditional write put last tells whether it
    applied). Raises what a statement raises (the transaction is then to be rolled back: the caller's atomic block
    does it); ``TransactionManagementError`` outside a transaction (a failure would leave some applied)."""
    connection = connections[using]
    if connection.get_autocommit():
        raise TransactionManagementError("statements run together need the caller's transaction")
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            for statement in statements:
                cursor.execute(statement.sql, statement.params)
            return cursor.rowcount
        known, new = _server_statements(connection), {}
        texts = [_server_text(known, new, st.key, st.sql, st.params) for st in statements]
        cursor.execute("; ".join(texts), [p for st in statements for p in st.params])
        known.update(new)  # only once all ran: after a failure the next call prepares other names
        return cursor.rowcount  # libpq's result is the last statement's


def execute_prepared(cursor, sql: str, params: list) -> None:
    """Run the raw statement ``sql`` (``%s`` placeholders) with ``params`` on ``cursor`` (a cursor of a Django
    connection): on PostgreSQL as a statement prepared once per session (see the module), elsewhere as it is.
    For hot raw statements (an upsert) whose text never changes. Raises what the statement raises."""
    connection = cursor.db
    if connection.vendor == "postgresql":
        _execute_server_prepared(connection, cursor, ("raw", sql), sql, params)
    else:
        cursor.execute(sql, params)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    constants: tuple  # the SQL parameters, with the placeholders' slots left as they were compiled
    slots: tuple[tuple[int, str, int | str | None], ...]  # (position in the parameters, argument name, list index)
    compiler: object
    for_update: bool


@dataclass(frozen=True)
class _Hydration:
    model: type
    start: int  # the model's own columns: row[start:end]
    end: int
    init_list: tuple[str, ...]
    converters: dict  # {column position: (converters, expression)}, as ``SQLCompiler.get_converters`` returns
    populators: tuple  # ``select_related`` objects (``RelatedPopulator``: stateless, reused)
    annotations: tuple[tuple[str, int], ...]  # (attribute, column position)


class PreparedQuery:
    """A fixed-shape queryset, compiled once per database alias and run with new values.

    Args: ``build(**placeholders) -> QuerySet``, a function of keyword arguments named in ``ints`` (integers,
    e.g. primary keys), ``strs`` (strings), ``int_lists`` (lists of integers, non-empty) and ``datetimes`` (aware
    datetimes, compared with datetime fields). ``query(**values)`` returns the list of model instances (an empty
    list when nothing matches), as ``list(build(**values))`` would, in one statement. A queryset that locks rows
    (``select_for_update``) may only run inside a transaction: ``TransactionManagementError`` otherwise, as
    Django raises. Raises ``ImproperlyConfigured`` when a value changes the SQL's shape (see the module).
    """

    def __init__(self, build: Callable[..., QuerySet], *, ints: tuple[str, ...] = (), strs: tuple[str, ...] = (),
                 int_lists: tuple[str, ...] = (), datetimes: tuple[str, ...] = ()):
        self.build = build
        self.ints = ints
        self.strs = strs
        self.int_lists = int_lists
        self.datetimes = datetimes
        self._compiled: dict[tuple, _Compiled] = {}
        self._hydrations: dict[tuple, _Hydration] = {}
        self._lock = threading.Lock()

    def _placeholders(self, run: int, lengths: tuple[int, ...], alias: str) -> tuple[dict, dict]:
        """The placeholder arguments of compilation ``run`` (0 or 1) and, by value, the (name, list index) each is;
        a datetime is found as it is or in the database's adapted form (index ``_ADAPTED``)."""
        counter = iter(range(_INT_BASES[run], _INT_BASES[run] + 1_000))
        arguments: dict[str, object] = {name: next(counter) for name in self.ints}
        arguments.update({name: _STR_MARKS[run].format(k) for k, name in enumerate(self.strs)})
        slots: dict[object, tuple[str, int | str | None]] = {value: (name, None) for name, value in arguments.items()}
        for name, length in zip(self.int_lists, lengths, strict=True):
            arguments[name] = [next(counter) for _ in range(length)]
            slots.update({value: (name, j) for j, value in enumerate(arguments[name])})
        ops = connections[alias].ops
        for k, name in enumerate(self.datetimes):
            value = arguments[name] = _DATETIME_BASES[run] + timedelta(minutes=k)
            slots[value] = (name, None)
            adapted = ops.adapt_datetimefield_value(value)
            if adapted != value:
                slots[adapted] = (name, _ADAPTED)
        return arguments, slots

    def _compiler(self, alias: str, built):
        """(queryset, its SQL compiler) for what ``build`` returned."""
        return built, built.query.get_compiler(using=alias)

    def _compile(self, alias: str, lengths: tuple[int, ...]) -> _Compiled:
        compiled = []
        for run in (0, 1):
            arguments, by_value = self._placeholders(run, lengths, alias)
            queryset, compiler = self._compiler(alias, self.build(**arguments))
            sql, params = compiler.as_sql()
            compiled.append((sql, tuple(params), by_value, compiler, queryset))
        (sql, params, by_value, compiler, queryset), (sql_b, params_b, _, _, _) = compiled
        if sql != sql_b or len(params) != len(params_b):
            raise ImproperlyConfigured("prepared query: the SQL depends on the values (it cannot be prepared)")
        slots = tuple((i, *by_value[p]) for i, (p, q) in enumerate(zip(params, params_b, strict=True))
                      if p != q and p in by_value)
        changed = sum(1 for p, q in zip(params, params_b, strict=True) if p != q)
        missing = ({(name, None if j == _ADAPTED else j) for name, j in by_value.values()}
                   - {(name, None if j == _ADAPTED else j) for _, name, j in slots})
        if missing or changed != len(slots):
            raise ImproperlyConfigured(f"prepared query: the parameters {sorted(map(str, missing))} do not reach "
                                       f"the SQL as they are (a value that changes the query's shape cannot be "
                                       f"prepared)")
        return _Compiled(sql=sql, constants=params, slots=slots, compiler=compiler,
                         for_update=queryset.query.select_for_update)

    def compiled(self, alias: str = "default", lengths: tuple[int, ...] = ()) -> _Compiled:
        key = (alias, lengths)
        compiled = self._compiled.get(key)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(key)
                if compiled is None:
                    compiled = self._compiled[key] = self._compile(alias, lengths)
        return compiled

    def _bound(self, using: str, values: dict) -> tuple[_Compiled, list]:
        """The compiled statement for ``values`` and its parameters with the values in their slots."""
        lengths = tuple(len(values[name]) for name in self.int_lists)
        if 0 in lengths:
            raise ImproperlyConfigured("prepared query: an empty list (an empty IN matches nothing: another query)")
        compiled = self.compiled(using, lengths)
        params = list(compiled.constants)
        for position, name, index in compiled.slots:
            value = values[name] if index is None or index == _ADAPTED else values[name][index]
            if value is None:
                raise ImproperlyConfigured(f"prepared query: {name} is None (IS NULL is another query)")
            if index == _ADAPTED:
                value = connections[using].ops.adapt_datetimefield_value(value)
            params[position] = value
        return compiled, params

    def _run(self, using: str, values: dict, preceded_by: tuple[Statement, ...] = ()):
        """Execute the compiled statement with ``values``, after ``preceded_by`` (see ``__call__``); returns
        (compiled, cursor rows or row count)."""
        connection = connections[using]
        compiled, params = self._bound(using, values)
        if (compiled.for_update or preceded_by) and connection.get_autocommit():
            raise TransactionManagementError("select_for_update cannot be used outside of a transaction.")
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                known, new = _server_statements(connection), {}
                texts = [_server_text(known, new, st.key, st.sql, st.params) for st in preceded_by]
                texts.append(_server_text(known, new, (id(self), compiled.sql), compiled.sql, params))
                cursor.execute("; ".join(texts), [p for st in preceded_by for p in st.params] + params)
                known.update(new)  # only once all ran: after a failure the next call prepares other names
            else:
                for statement in preceded_by:
                    cursor.execute(statement.sql, statement.params)
                cursor.execute(compiled.sql, params)
            return compiled, (cursor.fetchall() if self.returns_rows else cursor.rowcount)

    def statement(self, *, using: str = "default", **values) -> Statement:
        """The statement with ``values`` as a ``Statement`` to run with others (``execute_together``, or before a
        query: ``preceded_by``), whose rows are not read (a locking read: ``select_for_update``)."""
        compiled, params = self._bound(using, values)
        return Statement(key=(id(self), compiled.sql), sql=compiled.sql, params=params)

    returns_rows = True

    def _hydration(self, compiled: _Compiled, using: str) -> _Hydration:
        """How rows of ``compiled`` become instances, worked out once (what ``QuerySet.__iter__`` and
        ``SQLCompiler.results_iter`` work out on every run): the converters, the columns and the populators."""
        key = (id(compiled), using)
        hydration = self._hydrations.get(key)
        if hydration is None:
            compiler = compiled.compiler
            select, klass_info = compiler.select, compiler.klass_info
            select_fields = klass_info["select_fields"]
            start, end = select_fields[0], select_fields[-1] + 1
            hydration = self._hydrations[key] = _Hydration(
                model=klass_info["model"], start=start, end=end,
                init_list=tuple(f[0].target.attname for f in select[start:end]),
                converters=compiler.get_converters([s[0] for s in select[0:compiler.col_count]]),
                populators=tuple(get_related_populators(klass_info, select, using)),
                annotations=tuple((compiler.annotation_col_map or {}).items()))
        return hydration

    def __call__(self, *, using: str = "default", preceded_by: tuple[Statement, ...] = (), **values) -> list:
        """The model instances of the query's rows with ``values``. ``preceded_by``: statements (``Statement``,
        their rows not read) run first in the same round trip (one by one where the database is not PostgreSQL),
        inside the caller's transaction (``TransactionManagementError`` outside one). The query's snapshot is taken
        once they ran: after ``SELECT ... FOR UPDATE`` of a row, it sees what committed before the lock was
        granted."""
        compiled, rows = self._run(using, values, tuple(preceded_by))
        if not rows:
            return []
        hydration = self._hydration(compiled, using)
        if hydration.converters:
            rows = compiled.compiler.apply_converters(rows, hydration.converters)
        model_cls, start, end, init_list = hydration.model, hydration.start, hydration.end, list(hydration.init_list)
        objects = []
        for row in rows:
            obj = model_cls.from_db(using, init_list, row[start:end])
            for populator in hydration.populators:
                populator.populate(row, obj)
            for attr_name, col_pos in hydration.annotations:
                setattr(obj, attr_name, row[col_pos])
            objects.append(obj)
        return objects


class PreparedUpdate(PreparedQuery):
    """An UPDATE of a fixed shape, compiled once per database alias (and prepared on PostgreSQL).

    Args: ``build(**placeholders) -> (QuerySet, {field name: value or expression})``, what ``queryset.update(...)``
    takes, with the parameters as for ``PreparedQuery``. ``update(**values)`` runs it and returns the number of
    rows changed, as ``QuerySet.update`` does, in one statement. Raises ``ImproperlyConfigured`` when a value
    changes the SQL's shape, and what the update raises.
    """

    returns_rows = False

    def _compiler(self, alias: str, built):
        queryset, changes = built
        query = queryset.query.chain(UpdateQuery)
        query.add_update_values(changes)
        query.clear_select_clause()  # as QuerySet.update does (no ordering by annotations here)
        return queryset, query.get_compiler(using=alias)

    def __call__(self, *, using: str = "default", **values) -> int:
        _compiled, count = self._run(using, values)
        return count

    # ``statement(**values)``: the UPDATE as a ``Statement`` (``execute_together`` returns the rows it changed when
    # it is the last).


class PreparedInsert:
    """The INSERT of one ``model`` row, its SQL built once per database alias (and prepared on PostgreSQL).

    ``insert(obj)`` stores the unsaved instance ``obj`` as ``obj.save(force_insert=True)`` would (each field's
    ``pre_save`` and ``get_db_prep_save``; the new primary key set on ``obj``), in one statement, and returns
    ``obj``. It falls back to ``save`` when the model has save signal receivers, a value is an expression (a
    database default), or the instance already has a primary key. Raises what the insert raises
    (``IntegrityError`` for a broken constraint).

    ``ignore_conflicts=True`` (statements only, ``statement``): a row that a unique constraint refuses is not
    stored and the statement changes no row (``ON CONFLICT DO NOTHING``), instead of failing.
    """

    def __init__(self, model, *, ignore_conflicts: bool = False):
        self.model = model
        meta = model._meta
        self.fields = [f for f in meta.local_concrete_fields if f is not meta.auto_field]
        self.ignore_conflicts = ignore_conflicts
        self._sql: dict[tuple[str, bool], str] = {}

    def _insert_sql(self, connection, *, with_pk: bool = False) -> str:
        sql = self._sql.get((connection.alias, with_pk))
        if sql is None:
            meta, quote = self.model._meta, connection.ops.quote_name
            fields = [meta.auto_field, *self.fields] if with_pk else self.fields
            columns = ", ".join(quote(f.column) for f in fields)
            placeholders = ", ".join(["%s"] * len(fields))
            sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({placeholders})"
            if self.ignore_conflicts:
                sql += " ON CONFLICT DO NOTHING"
            elif not with_pk:
                sql += f" RETURNING {quote(meta.db_table)}.{quote(meta.pk.column)}"
            self._sql[(connection.alias, with_pk)] = sql
        return sql

    def statement(self, obj, *, using: str = "default") -> Statement | None:
        """The INSERT of ``obj`` as a ``Statement`` to run with others (``execute_together``). A primary key set on
        ``obj`` (reserved: ``NextId``) is inserted as it is; else the new one is not read back (``obj.pk`` stays
        None). None when it must be saved by ``save`` (signal receivers, an expression)."""
        model = self.model
        if signals.pre_save.has_listeners(model) or signals.post_save.has_listeners(model):
            return None
        connection = connections[using]
        values = [f.pre_save(obj, True) for f in self.fields]
        if any(hasattr(v, "resolve_expression") for v in values):
            return None
        params = [f.get_db_prep_save(v, connection=connection) for f, v in zip(self.fields, values, strict=True)]
        with_pk = obj.pk is not None
        if with_pk:
            params.insert(0, model._meta.auto_field.get_db_prep_save(obj.pk, connection=connection))
        sql = self._insert_sql(connection, with_pk=with_pk)
        return Statement(key=(id(self), sql), sql=sql, params=params)

    def __call__(self, obj, *, using: str = "default"):
        model = self.model
        statement = self.statement(obj, using=using) if obj.pk is None and not self.ignore_conflicts else None
        if statement is None:
            obj.save(force_insert=True, using=using)
            return obj
        connection = connections[using]
        sql, params = statement.sql, statement.params
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                _execute_server_prepared(connection, cursor, (id(self), sql), sql, params)
            else:
                cursor.execute(sql, params)
            (pk,) = cursor.fetchone()
        obj.pk = model._meta.pk.to_python(pk)
        obj._state.adding = False
        obj._state.db = using
        return obj


class NextId(Func):
    """A query column reserving the next primary key of ``model`` (``nextval`` of its identity sequence), so that a
    row can be inserted later with a known id (``PreparedInsert.statement``) in the same round trip as rows that
    refer to it. NULL where the database has no sequence (SQLite): the row is then inserted on its own. An id
    reserved and not used is a gap in the sequence, as a rolled-back insert leaves."""

    output_field = BigIntegerField()
    template = "NULL"

    def __init__(self, model):
        super().__init__()
        self.model = model

    def as_postgresql(self, compiler, connection, **extra_context):
        meta = self.model._meta
        return f"nextval(pg_get_serial_sequence('{meta.db_table}', '{meta.pk.column}'))", []
