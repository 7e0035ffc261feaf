"""``manage.py verify_draw GAME_SLUG``: check a finished game's mafia draw offline (L-ASSIGN-3).

Recomputes the SHA-256 commitment from the stored lists and salt (serialization documented in ``roles.draw``),
checks that it equals the commitment published in the recruitment post and that the residents at the numbers
are exactly each city's mafia. Prints the result; exits with status 1 on any mismatch (CommandError), and
refuses a game that is not finished (its lists would name the mafia).
"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from cities.models import Game
from kernel.errors import RuleViolation
from roles import draw
from rulesets.lepra.setup.services import draw_for_verification, verification_problems


class Command(BaseCommand):
    help = "Verify the mafia draw of a finished game: recompute the commitment and compare (L-ASSIGN-3)."

    def add_arguments(self, parser):
        parser.add_argument("game", help="the game's slug")

    def handle(self, *args, **options):
        game = Game.objects.filter(slug=options["game"]).first()
        if game is None:
            raise CommandError(f"No game {options['game']!r}.")
        try:
            mafia_draw = draw_for_verification(game)
        except RuleViolation as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"published:  {mafia_draw.commitment}")
        self.stdout.write(f"recomputed: {draw.commitment(mafia_draw.lists, mafia_draw.salt)}")
        problems = verification_problems(mafia_draw)
        if problems:
            raise CommandError("Verification FAILED: " + "; ".join(problems))
        self.stdout.write(self.style.SUCCESS("Verification OK: the commitment matches the lists and the salt, and "
                                             "the residents at the numbers are the mafia."))
