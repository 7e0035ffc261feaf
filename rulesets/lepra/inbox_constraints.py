"""Lepra's rules on the shared inbox table (``inboxes_inbox``), kept by the database: the engine's ``Inbox`` model
names no ruleset's kind, so these guarantees are Lepra's, installed by its migration ``0004_inbox_constraints``.

- ``inbox_one_personal_per_resident``: one current (not rolled-over) personal inbox per resident (L-INBOX-5);
- ``inbox_one_mafia_per_city``: one current mafia inbox per city (L-INBOX-4);
- ``inbox_city_kinds_have_city``: the inboxes of one city have it: city (L-INBOX-1), mafia (L-INBOX-4), personal
  (L-INBOX-5, its resident's city), execution voting (L-INBOX-9), election precinct (L-INBOX-10), judge removal
  demand (L-INBOX-11) and impeachment (L-INBOX-14);
- ``inbox_personal_has_resident``: a personal inbox is about its resident (L-INBOX-5).

The unique ones are partial unique indexes on both databases. The checks are ``CHECK`` constraints on PostgreSQL; on
SQLite, which cannot add a ``CHECK`` to an existing table, ``BEFORE INSERT`` and ``BEFORE UPDATE`` triggers that
abort with SQLite's own message for a failed check (``CHECK constraint failed: <name>``). Either way a row that
breaks one raises ``django.db.IntegrityError`` naming the rule.

The migration's state knows none of them (they are SQL only). Where the table is made from the models rather than
the migrations (the test databases, ``--no-migrations``), or remade by a later migration of the ``inboxes`` app on
SQLite (which drops the old table's indexes and triggers), ``ensure_after_migrate`` (connected to ``post_migrate``)
installs them again: whenever ``0004_inbox_constraints`` is applied or the app is not migrated at all.
"""
from __future__ import annotations

#: The migration that installs the rules; they stand while it is applied.
MIGRATION = ("lepra", "0004_inbox_constraints")
TABLE = "inboxes_inbox"
#: The kinds whose inboxes belong to one city (values of ``LepraInboxKind``, frozen here as the SQL stores them).
CITY_KINDS = ("city", "mafia", "personal", "voting", "precinct", "removal", "impeachment")

#: Unique index name -> (column, kind).
UNIQUE_CURRENT = {
    "inbox_one_personal_per_resident": ("resident_id", "personal"),
    "inbox_one_mafia_per_city": ("city_id", "mafia"),
}
#: Check name -> the condition every row must meet.
CHECKS = {
    "inbox_city_kinds_have_city":
        "NOT (\"kind\" IN (%s)) OR \"city_id\" IS NOT NULL" % ", ".join(f"'{kind}'" for kind in CITY_KINDS),
    "inbox_personal_has_resident": "NOT (\"kind\" = 'personal') OR \"resident_id\" IS NOT NULL",
}


def _sqlite_row(condition: str) -> str:
    """``condition`` over the row being written (``NEW``), for a SQLite trigger."""
    for column in ("kind", "city_id", "resident_id"):
        condition = condition.replace(f'"{column}"', f'NEW."{column}"')
    return condition


def install_sql(vendor: str) -> list[tuple[str, str]]:
    """The statements that install the rules on a database of ``vendor`` ("postgresql", "sqlite"), as (name of the
    index, check or trigger it makes, statement); each is a no-op when its rule is already there, but a PostgreSQL
    check."""
    statements = [(name, f'CREATE UNIQUE INDEX IF NOT EXISTS "{name}" ON "{TABLE}" ("{column}") '
                         f"WHERE \"kind\" = '{kind}' AND \"rolled_over_at\" IS NULL")
                  for name, (column, kind) in UNIQUE_CURRENT.items()]
    for name, condition in CHECKS.items():
        if vendor == "sqlite":
            statements += [(f"{name}_{event.lower()}",
                            f'CREATE TRIGGER IF NOT EXISTS "{name}_{event.lower()}" BEFORE {event} ON "{TABLE}" '
                            f"FOR EACH ROW WHEN NOT ({_sqlite_row(condition)}) "
                            f"BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: {name}'); END")
                           for event in ("INSERT", "UPDATE")]
        else:
            statements.append((name, f'ALTER TABLE "{TABLE}" ADD CONSTRAINT "{name}" CHECK ({condition})'))
    return statements


def uninstall_sql(vendor: str) -> list[str]:
    """The statements that remove the rules from a database of ``vendor`` (each a no-op when already gone)."""
    statements = [f'DROP INDEX IF EXISTS "{name}"' for name in UNIQUE_CURRENT]
    for name in CHECKS:
        if vendor == "sqlite":
            statements += [f'DROP TRIGGER IF EXISTS "{name}_{event}"' for event in ("insert", "update")]
        else:
            statements.append(f'ALTER TABLE "{TABLE}" DROP CONSTRAINT IF EXISTS "{name}"')
    return statements


def install(connection) -> None:
    """Install the rules missing on ``connection`` (a Django database connection); on PostgreSQL, those present
    are left alone (no statement on the table: it may be in use)."""
    with connection.cursor() as cursor:
        present: set[str] = set()
        if connection.vendor != "sqlite":
            cursor.execute("SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass UNION "
                           "SELECT indexname FROM pg_indexes WHERE tablename = %s AND schemaname = current_schema()",
                           [TABLE, TABLE])
            present = {row[0] for row in cursor.fetchall()}
        for name, statement in install_sql(connection.vendor):
            if name not in present:
                cursor.execute(statement)


def uninstall(connection) -> None:
    """Remove the rules from ``connection``."""
    with connection.cursor() as cursor:
        for statement in uninstall_sql(connection.vendor):
            cursor.execute(statement)


def ensure_after_migrate(sender, *, using: str, **kwargs) -> None:
    """``post_migrate`` receiver: install the rules missing on database ``using`` when Lepra's migration that
    installs them is applied there, or when the app has no migrations there (its tables made from the models)."""
    from django.db import connections
    from django.db.migrations.loader import MigrationLoader
    from django.db.migrations.recorder import MigrationRecorder

    connection = connections[using]
    module, _explicit = MigrationLoader.migrations_module(MIGRATION[0])
    if module is None or MIGRATION in MigrationRecorder(connection).applied_migrations():
        install(connection)
