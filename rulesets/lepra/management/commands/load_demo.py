"""``manage.py load_demo [--if-empty]``: load the demo Lepra game, then the demo game of every other ruleset that
brings one (``RulesetSpec.has_demo``: M21's), and print how to log in as each persona."""
from __future__ import annotations

import secrets

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from cities.models import Alignment, Game, Resident
from kernel.rulesets import registered_rulesets
from rulesets.lepra import seats as lepra_seats
from rulesets.lepra.demo import (
    DEMO_PASSWORD,
    DEMO_SLUG,
    demo_account_maker,
    demo_exists,
    load_demo_game,
    resident_username,
)


class Command(BaseCommand):
    help = "Load the demo Lepra and M21 games (development only) and print the demo logins."

    def add_arguments(self, parser):
        parser.add_argument("--if-empty", action="store_true", help="Do nothing (but print the logins) if it exists.")
        parser.add_argument("--url", default="http://127.0.0.1:8000/", help="The URL to print.")

    def handle(self, *args, **options):
        if not settings.MAFIA_ALLOW_DEMO:
            raise CommandError("The demo game cannot be loaded with these settings (MAFIA_ALLOW_DEMO is off).")
        if demo_exists():
            if not options["if_empty"]:
                raise CommandError("The demo game is already loaded (use --if-empty to skip).")
            self.stdout.write("The demo game is already loaded.")
        else:
            self.stdout.write("Loading the demo game...")
            load_demo_game(lively=True)
        others = [spec for spec in registered_rulesets().values() if spec.has_demo]
        for spec in others:
            if not spec.demo_exists():
                self.stdout.write(f"Loading the {spec.name} demo game...")
                spec.load_demo(make_user=demo_account_maker(), rng=secrets.SystemRandom(), now=timezone.now())
        self._print_logins(options["url"])
        for spec in others:
            self.stdout.write("")
            for line in spec.demo_logins(options["url"]):
                self.stdout.write(line)

    def _print_logins(self, url: str) -> None:
        game = Game.objects.get(slug=DEMO_SLUG)
        seats = list(Resident.objects.filter(game=game).select_related("city", "user", lepra_seats.SEAT)
                     .order_by("city__number", "user__username"))
        w = self.stdout.write
        w("")
        w(self.style.SUCCESS(f"Mafia Host demo: open {url}games/{DEMO_SLUG}/"))
        w(f"Log in at {url}accounts/login/ with any login below; every demo password is: {DEMO_PASSWORD}")
        w("  Staff:      procurator, tribune1, tribune2, tribune3, arbiter, consigliere")
        for city_number in sorted({s.city.number for s in seats}):
            city_seats = [s for s in seats if s.city.number == city_number]
            mafia = [s.user.username for s in city_seats if s.alignment == Alignment.MAFIA]
            commissar = [s.user.username for s in city_seats if lepra_seats.is_commissar(s)]
            judge = [s.user.username for s in city_seats if lepra_seats.is_judge(s)]
            w(f"  City {city_number} ({city_seats[0].city.name}): residents "
              f"{resident_username(city_number, 1)}..{resident_username(city_number, len(city_seats))}; "
              f"mafia {', '.join(mafia)}; commissar {', '.join(commissar) or 'none'}; judge {', '.join(judge)}")
        w("(Demo secrets are printed here on purpose, so you can try every persona. Never in production.)")
