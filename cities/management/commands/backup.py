"""``manage.py backup PATH``: a consistent copy of the whole database (README "Upgrading a live site").

PostgreSQL: ``pg_dump --format=custom`` (one snapshot, taken while the site runs; restore with ``manage.py
restore``, i.e. ``pg_restore``). SQLite: the ``sqlite3`` online backup API (a consistent copy while web and worker
keep writing). The password of ``DATABASE_URL`` goes to ``pg_dump`` through ``PGPASSWORD``, never the command line.
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from cities.backups import BackupError, backup_database


class Command(BaseCommand):
    help = "Back up the database to PATH (PostgreSQL: pg_dump custom format; SQLite: the online backup API)."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)

    def handle(self, *args, **options):
        try:
            size = backup_database(options["path"])
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Backup written to {options['path']} ({size} bytes).")
