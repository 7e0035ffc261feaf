"""Fixtures of the archive tests: the demo game prepared for disclosure (a dead resident, a secret inbox of four,
a phrase in each inbox), and helpers to end it."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from cities.models import Game, GameStatus
from cities.services import do_set_game_status
from inboxes import membership_services, posting
from inboxes import services as inbox_services
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from tests.conftest import fresh

#: A phrase posted in the mafia inbox of city 1 during the game: it must reach nobody outside that inbox.
MAFIA_PHRASE = "zebrafishconspiracy"


@dataclass
class World:
    """The demo game with the archive's personas: ``winner`` (honest, alive), ``loser`` (mafioso, alive),
    ``dead`` (killed before the end, after the phrases were posted, a member of the secret inbox of four), ``spectator`` (logged in, outside the game), ``visitor`` (logged out); and
    the inboxes under test by label."""

    demo: object
    game: Game
    inboxes: dict

    @property
    def personas(self) -> dict:
        d = self.demo
        return {"winner": d.honest, "loser": d.mafioso, "dead": d.resident2, "spectator": d.outsider,
                "visitor": d.anonymous}

    def end(self, winner: str | None = "honest") -> Game:
        """Finish the game through the service (the Procurator ends it, L-WIN-3) and, as the night issue's victory
        service will, record the winning side (``winner`` None: ended without one)."""
        from cities.services import record_event

        game = do_set_game_status(Game.objects.get(pk=self.game.pk), GameStatus.FINISHED,
                                  acting_user=fresh(self.demo.procurator))
        if winner is not None:
            record_event(game, "game.finished", actor=None, at=game.ended_at, payload={"winner": winner})
        self.game = Game.objects.get(pk=self.game.pk)
        return self.game

    def inbox(self, label: str) -> Inbox:
        return Inbox.objects.select_related("game").get(pk=self.inboxes[label].pk)


@pytest.fixture
def world(demo) -> World:
    game = demo.game
    seat = demo.seat
    secret = inbox_services.do_create_secret_inbox(
        game, title="Secret of four", members=[seat("mafioso"), seat("resident2"), seat("commissar")],
        acting_user=fresh(demo.honest))
    q = Inbox.objects.filter(game=game)
    inboxes = {
        "city1": q.get(kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True),
        "mafia1": q.get(kind=LepraInboxKind.MAFIA, city__number=1),
        "personal:winner": q.get(kind=LepraInboxKind.PERSONAL, resident=seat("honest")),
        "personal:dead": q.get(kind=LepraInboxKind.PERSONAL, resident=seat("resident2")),
        "secret4": secret,
        "office": q.get(kind=LepraInboxKind.OFFICE),
        "bar": q.get(kind=LepraInboxKind.BAR),
        "notary": q.get(kind=LepraInboxKind.NOTARY),
        "police": q.get(kind=LepraInboxKind.POLICE),
        "cemetery": q.get(kind=LepraInboxKind.CEMETERY, rolled_over_at__isnull=True),
    }
    posting.do_post_message(inboxes["mafia1"], f"Tonight we take the baker. {MAFIA_PHRASE}",
                                   acting_user=fresh(demo.mafioso))
    posting.do_post_message(secret, "secretfourphrase: let us vote together", acting_user=fresh(demo.honest))
    posting.do_post_message(inboxes["personal:winner"], "personalwinnerphrase", acting_user=fresh(demo.honest))
    # The dead resident dies after the talk: a member of the secret inbox at death, who keeps what was said up to
    # then (L-STAFF-6 [interp]; a secret inbox cannot be opened with the dead, ``do_create_secret_inbox``).
    membership_services.do_kill_resident(seat("resident2"), "killed", acting_user=None)
    return World(demo=demo, game=game, inboxes=inboxes)
