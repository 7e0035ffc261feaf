"""``manage.py bench_m21_day``: the M21 day's benchmark (``rulesets.m21.day_bench``) on the configured database (use
a database of its own: the games it builds stay)."""
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test.utils import override_settings

from rulesets.m21.day_bench import format_day_bench, run_day_bench


class Command(BaseCommand):
    help = ("Measure a ##VOTE post, the game thread page and the game page of M21 days with few and many posts, "
            "on games it builds and keeps (use a database of its own).")

    def add_arguments(self, parser):
        parser.add_argument("--posts", default="30,2000", help="post counts of the days, comma-separated")
        parser.add_argument("--repeats", type=int, default=20)

    def handle(self, *args, posts, repeats, **options):
        try:
            counts = tuple(sorted(int(n) for n in posts.split(",")))
        except ValueError as exc:
            raise CommandError("--posts takes whole numbers, comma-separated: 30,2000") from exc
        if len(counts) < 2 or counts[0] < 1 or repeats < 1:
            raise CommandError("give at least two post counts (at least 1) and at least one repeat")
        # Each post is committed as a player's is; the test client's host name is added to the site's own.
        with override_settings(ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, "testserver"]):
            report = run_day_bench(counts, repeats=repeats, prefix=f"m21bench{int(time.time())}",
                                   log=self.stdout.write)
        self.stdout.write(format_day_bench(report))
