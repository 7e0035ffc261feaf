"""Fixtures of the staff-console tests (issue 7): the demo game with one object of each day workflow per city, so
that every /staff/ changelist has rows inside and outside each persona's scope.

The fixtures write the rows the services leave (``tests/factories.py``): the tests read the state, not the way to
it. ``populate_by_services`` makes the same state through the services; ``test_fixture_parity.py`` checks that
both give the same rows, table by table (the audit log aside).
"""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from cities.models import HOST_STAFF_KIND, Alignment, LifeStatus, Resident, StaffRole
from inboxes.models import Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from rulesets.lepra.court import services as court_services
from rulesets.lepra.day import services as voting_services
from rulesets.lepra import no_confidence_services, staff_services
from rulesets.lepra.models import NoConfidenceTarget
from sanctions import services as sanctions_services
from staff.models import StaffStandIn
from tests.conftest import DEMO_NOW
from tests.factories import (
    ImpeachmentDemandFactory,
    InboxFactory,
    MessageFactory,
    NoConfidenceCaseFactory,
    NominationFactory,
    PlayBanFactory,
    ProxyRequestFactory,
    SpeechRequestFactory,
    SuicideDeclarationFactory,
    in_language,
)
from rulesets.lepra.models import SpeechKind

NOW = DEMO_NOW + timedelta(minutes=30)
COMPLAINT = "Жалоба"


def plain_residents(demo, number: int, exclude=()) -> list[Resident]:
    """Living residents of city ``number`` without a special role, by name (not the demo personas' seats)."""
    personas = {demo.seat(p).pk for p in ("mafioso", "honest", "commissar", "judge", "resident2")}
    return [r for r in Resident.objects.filter(seats.rank_q("is_judge", False) & seats.rank_q("is_commissar", False), game=demo.game,
                                               city__number=number, status="alive").order_by("name")
            if r.pk not in personas and r.pk not in exclude]


def _day_requests(demo):
    """Per city 1 and 2: (speaker's seat, nominator, nominee, proxy asker, suicide) seats."""
    speakers = {1: demo.seat("honest"), 2: demo.seat("resident2")}
    return [(speakers[number], *plain_residents(demo, number)[:4]) for number in (1, 2)]


def _staff_roles(demo) -> dict:
    return {(r.kind, r.city.number if r.city else 0): r
            for r in StaffRole.objects.filter(game=demo.game).select_related("city", "user")}


def _evidence(demo) -> Message:
    """The play ban's evidence: the first message a resident wrote in a city square."""
    return Message.objects.filter(inbox__game=demo.game, inbox__kind=LepraInboxKind.CITY,
                                  author_resident__isnull=False).first()


def populate_day_requests(demo) -> None:
    """In cities 1 and 2, at NOW: a last-word request, a nomination (its record in the nominator's personal inbox),
    a proxy request for the nominee and a suicide declaration, written as rows."""
    for speaker, nominator, nominee, proxy, suicide in _day_requests(demo):
        SpeechRequestFactory(resident=speaker, kind=SpeechKind.LAST_WORD, note="please", at=NOW)
        NominationFactory(nominator=nominator, nominee=nominee, at=NOW)
        ProxyRequestFactory(resident=proxy, nominee=nominee, requested_at=NOW)
        SuicideDeclarationFactory(resident=suicide, declared_at=NOW)


def populate_console_cases(demo) -> None:
    """A past stand-in period of the Tribune of city 3 (none active), an impeachment demand in city 1 (by the
    honest persona, below the threshold), a complaint of no confidence in the Arbiter (by resident2) and one in
    the Consigliere (the mafia of city 1), and a play ban with its evidence, written as rows."""
    game = demo.game
    roles = _staff_roles(demo)
    _stand_in(demo, roles)
    honest, resident2, mafioso = demo.seat("honest"), demo.seat("resident2"), demo.seat("mafioso")
    ImpeachmentDemandFactory(initiator=honest, tribune=roles[("tribune", honest.city.number)], created_at=NOW)
    procurator = roles[(HOST_STAFF_KIND, 0)]
    title = in_language(game, "No confidence in the Supreme Arbiter: %(name)s", name=resident2.name)
    inbox = InboxFactory(game=game, kind=LepraInboxKind.COMPLAINT, title=title, city=resident2.city, organizer=procurator,
                         created_at=NOW, day_number=game.day_number, members=[resident2])
    NoConfidenceCaseFactory(inbox=inbox, target=NoConfidenceTarget.ARBITER, complainant=resident2, filed_at=NOW)
    MessageFactory(inbox=inbox, author_resident=resident2, body=COMPLAINT, received_at=NOW)
    city = mafioso.city
    signature = in_language(game, "The mafia of %(city)s", city=city.name)
    mafia = list(Resident.objects.filter(city=city, alignment=Alignment.MAFIA, status=LifeStatus.ALIVE).order_by("pk"))
    title = in_language(game, "No confidence in the Consigliere: %(signature)s", signature=signature)
    inbox = InboxFactory(game=game, kind=LepraInboxKind.MAFIA_COMPLAINT, title=title, city=city, organizer=procurator,
                         created_at=NOW, day_number=game.day_number, banned=mafia)
    NoConfidenceCaseFactory(inbox=inbox, target=NoConfidenceTarget.CONSIGLIERE, filed_at=NOW)
    MessageFactory(inbox=inbox, author_name=signature, body=COMPLAINT, received_at=NOW)
    evidence = _evidence(demo)
    PlayBanFactory(game=game, user=evidence.author_user, offence="omerta", description="Назвал мафию.",
                   starts_at=NOW, ends_at=NOW + timedelta(days=30), recorded_by=demo.procurator, evidence=[evidence])


def _stand_in(demo, roles) -> StaffStandIn:
    absent = roles[("tribune", 3)]
    return StaffStandIn.objects.create(game=demo.game, city=absent.city, absent=absent, stand_in=roles[("tribune", 1)],
                                       starts_at=NOW - timedelta(days=2), ends_at=NOW - timedelta(days=1),
                                       granted_at=NOW - timedelta(days=3))


def populate_by_services(demo, *, console_cases: bool) -> None:
    """The state of ``populate_day_requests`` (and, with ``console_cases``, of ``populate_console_cases``) made
    through the services, as residents and staff make it (for the parity check)."""
    game = demo.game
    with time_machine.travel(NOW, tick=False):
        for speaker, nominator, nominee, proxy, suicide in _day_requests(demo):
            court_services.do_request_speech(game, SpeechKind.LAST_WORD, acting_user=speaker.user, note="please")
            voting_services.do_nominate(nominee, acting_user=nominator.user)
            voting_services.do_request_proxy(nominee, acting_user=proxy.user)
            voting_services.do_declare_suicide(game, acting_user=suicide.user)
    if not console_cases:
        return
    _stand_in(demo, _staff_roles(demo))
    staff_services.do_demand_impeachment(game, acting_user=demo.honest, now=NOW)
    no_confidence_services.do_file_no_confidence_in_arbiter(game, COMPLAINT, acting_user=demo.resident2, now=NOW)
    no_confidence_services.do_file_no_confidence_in_consigliere(game, COMPLAINT, acting_user=demo.mafioso, now=NOW)
    evidence = _evidence(demo)
    sanctions_services.do_record_play_ban(game, evidence.author_user, "omerta", "Назвал мафию.",
                                          ends_at=NOW + timedelta(days=30), evidence=[evidence],
                                          acting_user=demo.procurator, now=NOW)


@pytest.fixture
def populated(demo):
    """The demo game plus, in cities 1 and 2: a speech request, a nomination with a proxy request, a suicide
    declaration (``populate_day_requests``, at NOW). Returns ``demo``."""
    populate_day_requests(demo)
    return demo


@pytest.fixture
def populated_by_services(demo):
    """``populated`` made through the services, audit rows included: for the tests of the audit log, whose
    subject is the events the services record (the factories write the state without them). Returns ``demo``."""
    populate_by_services(demo, console_cases=False)
    return demo


@pytest.fixture
def full(populated):
    """``populated`` plus the console's own cases (``populate_console_cases``): a stand-in period in the past
    (none active: scopes stay the plain roles), an impeachment demand in city 1, a complaint of each kind and a
    play ban. Returns ``demo``."""
    populate_console_cases(populated)
    return populated
