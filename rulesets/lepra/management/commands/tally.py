"""``manage.py tally KIND FILE``: count the votes of an exported voting record and print the result as JSON.

Each kind of tally is a subcommand with its own file format:

- ``forum-day FILE``: one game-thread day of a forum game, exported as JSON lines (format in
  ``voting/forum_export.py``, example in ``voting/examples/``): prints the standing count, how the day ended, every
  refused command with its reason, the voided votes and the M-VOTE-5 offenders.
- ``lepra-execution FILE``: one city's Lepra execution voting (L-VOTE), exported as JSON lines (format in
  ``rulesets/lepra/day/export.py``, example in ``rulesets/lepra/examples/``): per nominee the counted voters, who changed their mind and the latest counted vote
  time; the ranking, the leader, the tied leaders, and every refused message with its seq and reason.
- ``lepra-election FILE``: one city's Lepra judge election (L-JUDGE-4..6), same format with ``candidates``: per
  candidate the pros, cons, score and latest pro vote time; the winner (null: failed) and every refused message.

A new kind is one more entry in ``TALLY_KINDS``: a
name, a help line and a function from the file's lines to JSON-ready data. Exit status 0 when the file could be
counted, 1 for an unreadable or malformed file. Touches no database.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from django.core.management.base import BaseCommand, CommandError

from rulesets.lepra.day.export import lepra_election_export, lepra_execution_export
from voting.forum_export import forum_day_export


class TallyKind(NamedTuple):
    help: str
    count: Callable[[Iterable[str]], Any]  # the file's lines → JSON-ready data; raises ValueError if malformed


TALLY_KINDS: dict[str, TallyKind] = {
    "forum-day": TallyKind(
        help="one forum game-thread day exported as JSON lines (M-VOTE): standing count, end, refusals",
        count=forum_day_export,
    ),
    "lepra-execution": TallyKind(
        help="one Lepra city's execution voting exported as JSON lines (L-VOTE): tallies, ranking, leader, refusals",
        count=lepra_execution_export,
    ),
    "lepra-election": TallyKind(
        help="one Lepra city's judge election exported as JSON lines (L-JUDGE-4..6): scores, winner, refusals",
        count=lepra_election_export,
    ),
}


class Command(BaseCommand):
    help = "Count an exported voting record and print the result as JSON. Kinds: " + ", ".join(TALLY_KINDS) + "."
    requires_system_checks = []

    def add_arguments(self, parser):
        kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
        for name, kind in TALLY_KINDS.items():
            subparser = kinds.add_parser(name, help=kind.help, description=kind.help)
            subparser.add_argument("file", metavar="FILE", help="the export to count")

    def handle(self, *args, **options):
        kind, path = TALLY_KINDS[options["kind"]], Path(options["file"])
        try:
            with path.open(encoding="utf-8") as lines:
                result = kind.count(lines)
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error}", returncode=1) from error
        except ValueError as error:
            raise CommandError(f"{path}: {error}", returncode=1) from error
        self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
