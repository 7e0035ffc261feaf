"""``manage.py audit_tallies [--game SLUG]``: compare the standing tally kept as data (``rulesets.lepra.day.standing``) of
every open Lepra execution voting with the full recount from its messages (L-VOTE-4, L-VOTE-5); print each
mismatch as JSON and exit with status 1 when there is one."""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from rulesets.lepra.day.standing import audit_session_tally
from rulesets.lepra.models import VotingSession


class Command(BaseCommand):
    help = ("Compare the stored tally of every open execution voting with the recount from its messages; "
            "exit status 1 on a mismatch.")

    def add_arguments(self, parser):
        parser.add_argument("--game", help="only this game (its slug)")

    def handle(self, *args, game=None, **options):
        sessions = (VotingSession.objects.filter(opened_at__isnull=False, closed_at__isnull=True)
                    .select_related("game", "city").order_by("game_id", "city_id", "day"))
        if game:
            sessions = sessions.filter(game__slug=game)
        checked, mismatches = 0, 0
        for session in sessions:
            checked += 1
            difference = audit_session_tally(session)
            if difference is not None:
                mismatches += 1
                self.stdout.write(json.dumps({"game": session.game.slug, "city": session.city.number,
                                              "day": session.day, **difference}, ensure_ascii=False, default=str))
        self.stdout.write(f"{checked} open votings checked, {mismatches} mismatched")
        if mismatches:
            raise CommandError(f"{mismatches} stored tallies differ from the recount")
