"""Fixtures of the staff-console tests (issue 7): the demo game with one object of each day workflow per city,
made through the services, so that every /staff/ changelist has rows inside and outside each persona's scope."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from cities.models import Resident
from tests.conftest import DEMO_NOW
from voting import services as voting_services
from voting.models import SpeechKind

NOW = DEMO_NOW + timedelta(minutes=30)


def plain_residents(demo, number: int, exclude=()) -> list[Resident]:
    """Living residents of city ``number`` without a special role, by name (not the demo personas' seats)."""
    personas = {demo.seat(p).pk for p in ("mafioso", "honest", "commissar", "judge", "resident2")}
    return [r for r in Resident.objects.filter(game=demo.game, city__number=number, status="alive", is_judge=False,
                                               is_commissar=False).order_by("name")
            if r.pk not in personas and r.pk not in exclude]


@pytest.fixture
def populated(demo):
    """The demo game plus, in cities 1 and 2: a speech request, a nomination with a proxy request, a suicide
    declaration (all by services, at NOW). Returns ``demo``."""
    with time_machine.travel(NOW, tick=False):
        for number, speaker in ((1, demo.honest), (2, demo.resident2)):
            others = plain_residents(demo, number)
            voting_services.do_request_speech(demo.game, SpeechKind.LAST_WORD, acting_user=speaker, note="please")
            nominator, nominee, proxy, suicide = others[0], others[1], others[2], others[3]
            voting_services.do_nominate(nominee, acting_user=nominator.user)
            voting_services.do_request_proxy(nominee, acting_user=proxy.user)
            voting_services.do_declare_suicide(demo.game, acting_user=suicide.user)
    return demo
