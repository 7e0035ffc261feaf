"""``manage.py restore PATH --yes``: replace the database with a backup made by ``manage.py backup``.

Pause the clock and stop web and worker first (README "Upgrading a live site"). PostgreSQL: ``pg_restore --clean
--if-exists --no-owner`` run by ``psql --single-transaction`` (all or nothing); SQLite: the backup API copies the
file in. The restored clock is paused whatever the backup held (``cities.backups.restore_database``), and the
command says so: run ``manage.py migrate`` (a backup of an older release), start the processes, check, then
``manage.py clock resume``."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from cities.backups import BackupError, restore_database


class Command(BaseCommand):
    help = "Restore the database from a backup made by `manage.py backup` (replaces every table)."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--yes", action="store_true", help="Confirm that the current data is to be replaced.")

    def handle(self, *args, **options):
        if not options["yes"]:
            raise CommandError("Restoring replaces every table of the database: add --yes to confirm.")
        try:
            reason = restore_database(options["path"])
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Database restored from {options['path']}.")
        self.stdout.write(f"The clock is PAUSED ({reason}): no scheduled event runs until `manage.py clock resume`. "
                          "Next: `manage.py migrate`, start web, worker and beat, check the games' clock pages, then "
                          "`manage.py clock resume`.")
