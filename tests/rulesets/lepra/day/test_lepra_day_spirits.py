"""The spirit rule in the morning (L-SPIRIT-1/2)."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import translation

from cities.models import Alignment, LifeStatus, Resident
from inboxes.membership_services import do_kill_resident
from inboxes.models import Membership, MembershipState
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import NotAllowed
from rulesets.lepra import seats
from rulesets.lepra.day.services import do_nominate
from rulesets.lepra.day.spirit_services import do_apply_spirit_rule
from rulesets.lepra.day.spirits import spirit_rule_applies
from tests.rulesets.lepra.day.day_helpers import MORNING, city1_day, nominate_and_open

TONIGHT = datetime(2026, 11, 20, 1, 0, tzinfo=UTC)  # 04:00 in Moscow, the night before day 2
EARLIER = datetime(2026, 11, 18, 1, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


@pytest.mark.parametrize("honest, mafia, applies", [(4, 4, True), (5, 4, False), (3, 4, False), (0, 0, False),
                                                    (1, 1, True)])
def test_spirit_rule_applies_at_parity_L_SPIRIT_1(honest, mafia, applies):
    assert spirit_rule_applies(honest, mafia) is applies


def _honest_of_city1(demo):
    day = city1_day(demo)
    honest = [r for r in day.plain if r.alignment == Alignment.HONEST]
    return day, honest


def test_night_victims_become_spirits_at_parity_and_vote_but_cannot_nominate_L_SPIRIT_1_L_SPIRIT_2(demo):
    day, honest = _honest_of_city1(demo)
    mafia = Resident.objects.filter(city=day.city, alignment=Alignment.MAFIA, status=LifeStatus.ALIVE).count()
    living_honest = Resident.objects.filter(city=day.city, alignment=Alignment.HONEST, status=LifeStatus.ALIVE).count()
    to_kill = living_honest - mafia  # after these deaths honest == mafia
    earlier, tonight = honest[:to_kill - 1], honest[to_kill - 1]
    for r in earlier:
        do_kill_resident(r, "killed", acting_user=None, now=EARLIER)
    do_kill_resident(tonight, "killed", acting_user=None, now=TONIGHT)
    assert do_apply_spirit_rule(day.city, acting_user=None, now=MORNING) == [tonight]
    tonight.refresh_from_db()
    assert seats.is_spirit(tonight) is True
    assert Membership.objects.get(resident=tonight, inbox__kind=LepraInboxKind.CEMETERY).state == MembershipState.REMOVED
    assert not Resident.objects.filter(seats.rank_q("is_spirit"), pk__in=[r.pk for r in earlier]).exists()
    assert do_apply_spirit_rule(day.city, acting_user=None, now=MORNING) == []  # a second run changes nothing
    with pytest.raises(NotAllowed) as info:
        do_nominate(honest[-1], acting_user=tonight.user, now=MORNING)
    assert str(info.value) == "A spirit cannot nominate."
    living_day = city1_day(demo)  # the living residents now
    nominate_and_open(demo, living_day, [living_day.plain[0]])
    assert Membership.objects.get(resident=tonight, inbox__kind=LepraInboxKind.VOTING).state == MembershipState.MEMBER


def test_no_spirits_without_parity_L_SPIRIT_1(demo):
    day, honest = _honest_of_city1(demo)
    do_kill_resident(honest[0], "killed", acting_user=None, now=TONIGHT)
    assert do_apply_spirit_rule(day.city, acting_user=None, now=MORNING) == []
    assert seats.is_spirit(Resident.objects.get(pk=honest[0].pk)) is False


def test_only_the_site_or_the_procurator_applies_the_spirit_rule_L_SPIRIT_1(demo):
    day, _honest = _honest_of_city1(demo)
    with pytest.raises(NotAllowed):
        do_apply_spirit_rule(day.city, acting_user=demo.tribune1, now=MORNING + timedelta(minutes=1))
