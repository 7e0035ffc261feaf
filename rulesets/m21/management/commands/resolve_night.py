"""``manage.py resolve_night m21 FILE.json``: resolve one night from a file and print its outcome as JSON.

Needs no database: the night is the pure pipeline of ``rulesets.m21.night`` (RULES.md M-NIGHT-1). The file format
and worked examples are in ``rulesets/m21/examples/README.md``. A malformed file is refused with a message naming
the field (exit status 1), and nothing is printed on stdout.
"""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from rulesets.m21.night_file import NightFileError
from rulesets.m21.night_tool import run_night_file

#: The rulesets whose nights this command resolves.
RULESETS = ("m21",)


class Command(BaseCommand):
    help = ("Resolve one night from a JSON file (no database needed) and print the outcome as JSON: deaths, saved, "
            "private results, headlines, items and the trace of every step. Only the m21 ruleset has night files.")
    requires_system_checks = ()
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("ruleset", help="the ruleset key: m21")
        parser.add_argument("file", help="the night file (JSON); see rulesets/m21/examples/README.md")
        parser.add_argument("--compact", action="store_true", help="print the JSON on one line")

    def handle(self, *args, ruleset: str, file: str, compact: bool = False, **options):
        if ruleset not in RULESETS:
            raise CommandError(f"resolve_night: unknown ruleset {ruleset!r}; night files exist for: "
                               f"{', '.join(RULESETS)}")
        try:
            outcome = run_night_file(file)
        except NightFileError as exc:
            raise CommandError(str(exc)) from None
        text = json.dumps(outcome, ensure_ascii=False, indent=None if compact else 2)
        self.stdout.write(text)
