"""``manage.py bench``: the benchmark (README "Benchmark"; ``bench.runner``)."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bench.runner import SIZES, Bench, format_report
from cities.models import Game


class Command(BaseCommand):
    help = ("Build games through the services, start gunicorn on the configured database and measure the vote, "
            "the pages, the night and a burst of posts against the stack's floor; print the figures and write a "
            "JSON report. Run it on a database of its own: it adds games and accounts.")

    def add_arguments(self, parser):
        parser.add_argument("--size", choices=sorted(SIZES), default="full",
                            help="how much to build and measure (default full; tiny is the test suite's)")
        parser.add_argument("--label", default="bench",
                            help="prefix of the games' addresses and name of the report (unique per database)")
        parser.add_argument("--out-dir", type=Path, default=None, help="where the report goes (default var/bench)")
        parser.add_argument("--night-only", action="store_true",
                            help="measure only night resolution + daily post (no server, no voting world)")

    def handle(self, *args, size, label, out_dir, night_only, **options):

        if Game.objects.filter(slug__startswith=f"{label}-").exists():
            raise CommandError(f"this database already has games labelled {label!r}: give another --label")
        bench = Bench(SIZES[size], label=label, log=lambda line: self.stdout.write(line), out_dir=out_dir,
                      night_only=night_only)
        report = bench.run()
        self.stdout.write(format_report(report))
        self.stdout.write(f"report: {report['path']}")
