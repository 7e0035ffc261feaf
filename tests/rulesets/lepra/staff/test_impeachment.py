"""Impeachment of a Tribune (RULES.md L-IMPEACH-1/2, L-INBOX-14): the 30% threshold over the living, the
impeachment inbox with its bans, the four rulings, the replaced Tribune losing every power at once."""
from __future__ import annotations

import re

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.utils import translation

from cities.models import GameEvent, Resident, StaffRole
from inboxes import moderation_policy, policies
from inboxes.models import Inbox, Membership, MembershipState
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra import staff_services as services
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.models import ImpeachmentDemand, ImpeachmentRuling
from rulesets.lepra.staff_kinds import StaffKind
from tests.conftest import fresh
from tests.rulesets.lepra.day.day_helpers import ru
from tests.staff.conftest import NOW
from tests.support.staff_console import staff_client


@pytest.mark.parametrize(("signers", "living", "met"), [
    (29, 100, False), (30, 100, True), (5, 20, False), (6, 20, True), (3, 10, True), (2, 10, False), (1, 1, True),
    (0, 0, False),
])
def test_threshold_is_30_percent_exactly_L_IMPEACH_1(signers, living, met):
    assert services.impeachment_threshold_met(signers, living) is met


def _city1(demo) -> list[Resident]:
    return list(Resident.objects.filter(game=demo.game, city__number=1).select_related("user").order_by("name"))


def _sign_up_to(demo, count: int) -> ImpeachmentDemand:
    """Honest starts a demand in city 1; then living residents sign until ``count`` signatures."""
    residents = [r for r in _city1(demo) if r.status == "alive" and r.pk != demo.seat("honest").pk]
    with time_machine.travel(NOW, tick=False):
        demand = services.do_demand_impeachment(demo.game, acting_user=demo.honest)
        for r in residents[:count - 1]:
            services.do_sign_impeachment_demand(demand, acting_user=r.user)
    demand.refresh_from_db()
    return demand


def test_29_percent_is_refused_and_30_percent_reaches_the_procurator_over_the_living_L_IMPEACH_1(demo):
    # City 1 has 20 living residents: 5 signatures (25%) stay with the residents, the 6th (30%) reaches him.
    demand = _sign_up_to(demo, 5)
    assert demand.reached_at is None
    assert services.living_signatures(demand) == (5, 20)
    with pytest.raises(WrongState):
        services.do_open_impeachment_inbox(demand, acting_user=demo.procurator, now=NOW)
    signer = next(r for r in _city1(demo) if not demand.signatures.filter(resident=r).exists())
    services.do_sign_impeachment_demand(demand, acting_user=signer.user, now=NOW)
    demand.refresh_from_db()
    assert demand.reached_at == NOW
    reached = GameEvent.objects.get(game=demo.game, kind="impeachment.reached")
    assert reached.payload == {"demand": demand.pk, "city": demand.city_id, "signers": 6, "living": 20}
    # The Procurator's dashboard shows it.
    body = staff_client(demo.procurator).get("/staff/").content.decode()
    assert 'data-need="impeachment" data-count="1"' in body


def test_the_threshold_counts_living_residents_and_living_signers_only_L_IMPEACH_1(demo):
    # 10 of city 1's residents die: 3 living signatures of 10 living are 30%. A dead signer counts for nothing.
    residents = _city1(demo)
    honest = demo.seat("honest")
    dead = [r for r in residents if r.pk != honest.pk][:10]
    Resident.objects.filter(pk__in=[r.pk for r in dead]).update(status="dead")
    living = [r for r in residents if r not in dead and r.pk != honest.pk]
    with time_machine.travel(NOW, tick=False):
        demand = services.do_demand_impeachment(demo.game, acting_user=demo.honest)
        with pytest.raises(NotAllowed):  # the dead cannot sign
            services.do_sign_impeachment_demand(demand, acting_user=dead[0].user)
        services.do_sign_impeachment_demand(demand, acting_user=living[0].user)
        demand.refresh_from_db()
        assert demand.reached_at is None and services.living_signatures(demand) == (2, 10)
        services.do_sign_impeachment_demand(demand, acting_user=living[1].user)
    demand.refresh_from_db()
    assert demand.reached_at == NOW and services.living_signatures(demand) == (3, 10)


def test_only_living_residents_of_the_city_sign_once_L_IMPEACH_1(demo):
    demand = _sign_up_to(demo, 1)
    for user in (demo.resident2, demo.procurator, demo.outsider, demo.consigliere):
        with pytest.raises(NotAllowed):
            services.do_sign_impeachment_demand(demand, acting_user=user, now=NOW)
    with pytest.raises(WrongState, match=re.escape(ru("You have already signed this demand."))):
        services.do_sign_impeachment_demand(demand, acting_user=demo.honest, now=NOW)
    with pytest.raises(WrongState, match=re.escape(ru("A demand to impeach the Tribune of this city is already open: sign it."))):
        services.do_demand_impeachment(demo.game, acting_user=demo.mafioso, now=NOW)


@pytest.fixture
def opened(demo) -> ImpeachmentDemand:
    demand = _sign_up_to(demo, 6)
    services.do_open_impeachment_inbox(demand, acting_user=demo.procurator, now=NOW)
    demand.refresh_from_db()
    return demand


def test_the_impeachment_inbox_bans_all_but_the_initiators_and_hears_the_tribune_L_INBOX_14(demo, opened):
    inbox = opened.inbox
    assert (inbox.kind, inbox.city_id, inbox.organizer.kind) == (LepraInboxKind.IMPEACHMENT, opened.city_id,
                                                                 StaffKind.PROCURATOR)
    signers = set(opened.signatures.values_list("resident_id", flat=True))
    states = dict(Membership.objects.filter(inbox=inbox).values_list("resident_id", "state"))
    assert set(states) == {r.pk for r in _city1(demo)}
    assert {pk for pk, s in states.items() if s == MembershipState.MEMBER} == signers
    assert {pk for pk, s in states.items() if s == MembershipState.BANNED} == set(states) - signers
    inbox = Inbox.objects.select_related("game").get(pk=inbox.pk)
    expect = {"procurator": (True, True), "tribune1": (True, True), "tribune2": (False, False),
              "arbiter": (False, False), "consigliere": (False, False), "honest": (True, True),
              "resident2": (False, False), "superuser": (False, False)}
    with time_machine.travel(NOW, tick=False):
        for persona, (read, post) in expect.items():
            user = fresh(getattr(demo, persona))
            assert (policies.can_read_inbox(user, inbox), policies.can_post_in_inbox(user, inbox)) == (read, post), \
                persona
            assert policies.readable_inboxes(fresh(user)).filter(pk=inbox.pk).exists() is read, persona
    with pytest.raises(WrongState, match=re.escape(ru("The impeachment inbox is already open."))):
        services.do_open_impeachment_inbox(opened, acting_user=demo.procurator, now=NOW)
    with pytest.raises(NotAllowed):
        services.do_open_impeachment_inbox(opened, acting_user=demo.tribune1, now=NOW)


@pytest.mark.parametrize("ruling", [ImpeachmentRuling.BONUS, ImpeachmentRuling.UNFOUNDED, ImpeachmentRuling.TRIVIAL])
def test_the_three_rulings_that_keep_the_tribune_L_IMPEACH_2(demo, opened, ruling):
    services.do_rule_on_impeachment(opened, ruling, acting_user=demo.procurator, reason="because", now=NOW)
    opened.refresh_from_db()
    assert (opened.ruling, opened.ruled_at, opened.reason) == (ruling, NOW, "because")
    assert StaffRole.objects.get(game=demo.game, kind=StaffKind.TRIBUNE, city__number=1).user_id == demo.tribune1.pk
    event = GameEvent.objects.filter(game=demo.game, kind="impeachment.ruled").get()
    expected = {"demand": opened.pk, "city": opened.city_id, "ruling": ruling}
    if ruling == ImpeachmentRuling.BONUS:
        expected["complainants"] = sorted(opened.signatures.values_list("resident_id", flat=True))
    if ruling != ImpeachmentRuling.TRIVIAL:
        expected["reason"] = "because"
    assert event.payload == expected
    # A trivial ruling's reason is hidden until the game ends, from everyone but the Procurator.
    shown = services.visible_ruling_reason(fresh(demo.tribune1), opened)
    assert shown == (None if ruling == ImpeachmentRuling.TRIVIAL else "because")
    assert services.visible_ruling_reason(fresh(demo.procurator), opened) == "because"
    with pytest.raises(WrongState, match=re.escape(ru("The Procurator has already ruled on this demand."))):
        services.do_rule_on_impeachment(opened, ruling, acting_user=demo.procurator, now=NOW)


def test_replacing_the_tribune_moves_every_power_and_the_old_one_loses_access_at_once_L_IMPEACH_2(demo, opened):
    new = get_user_model().objects.create_user("newtribune", "n@example.com", "x-secret-123",
                                               display_name="New Tribune")
    city1 = Inbox.objects.select_related("game").get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1)
    personal = Inbox.objects.select_related("game").filter(game=demo.game, kind=LepraInboxKind.PERSONAL,
                                                            city__number=1).first()
    old_client = staff_client(demo.tribune1)
    assert old_client.get("/staff/").status_code == 200
    with pytest.raises(InvalidInput):  # a replacement needs the new Tribune, and only a replacement
        services.do_rule_on_impeachment(opened, ImpeachmentRuling.REPLACE, acting_user=demo.procurator, now=NOW)
    with pytest.raises(NotAllowed):  # a resident cannot become staff of the game
        services.do_rule_on_impeachment(opened, ImpeachmentRuling.REPLACE, acting_user=demo.procurator,
                                        new_tribune_user=demo.resident2, now=NOW)
    with time_machine.travel(NOW, tick=False):
        services.do_rule_on_impeachment(opened, ImpeachmentRuling.REPLACE, acting_user=demo.procurator,
                                        new_tribune_user=new, reason="abuse")
        role = StaffRole.objects.get(game=demo.game, kind=StaffKind.TRIBUNE, city__number=1)
        assert role.user_id == new.pk
        for inbox in (city1, personal, opened.inbox):
            assert policies.can_read_inbox(fresh(demo.tribune1), inbox) is False
            assert policies.readers_of_inbox(inbox).filter(pk=demo.tribune1.pk).exists() is False
            assert policies.can_post_in_inbox(fresh(new), inbox) is True
        assert moderation_policy.can_moderate_inbox(fresh(new), city1) is True
        # The old session is refused at once; the new Tribune's console shows city 1.
        assert old_client.get("/staff/", follow=True).status_code == 403
        body = staff_client(new).get("/staff/cities/resident/?all=").content.decode()
        assert f"/staff/cities/resident/{demo.seat('honest').public_id}/change/" in body
    event = GameEvent.objects.get(game=demo.game, kind="staff.tribune_replaced")
    assert event.payload == {"role": role.pk, "city": role.city_id, "old_user": demo.tribune1.pk, "new_user": new.pk}
    opened.refresh_from_db()
    assert (opened.ruling, opened.new_tribune_user_id) == (ImpeachmentRuling.REPLACE, new.pk)


def test_rulings_need_the_procurator_and_an_opened_inbox_L_IMPEACH_2(demo):
    demand = _sign_up_to(demo, 6)
    with pytest.raises(WrongState, match=re.escape(ru("Open the impeachment inbox and hear the Tribune first."))):
        services.do_rule_on_impeachment(demand, ImpeachmentRuling.UNFOUNDED, acting_user=demo.procurator, now=NOW)
    services.do_open_impeachment_inbox(demand, acting_user=demo.procurator, now=NOW)
    for user in (demo.tribune1, demo.arbiter, demo.consigliere, demo.honest):
        with pytest.raises(NotAllowed):
            services.do_rule_on_impeachment(demand, ImpeachmentRuling.UNFOUNDED, acting_user=user, now=NOW)
    with pytest.raises(InvalidInput):
        services.do_rule_on_impeachment(demand, "banish", acting_user=demo.procurator, now=NOW)


def test_residents_start_and_sign_on_their_page_and_others_get_a_404_L_IMPEACH_1(demo):
    from django.test import Client

    url = f"/games/{demo.game.slug}/impeachment/"
    for user in (demo.tribune1, demo.procurator, demo.outsider, demo.superuser):
        client = Client()
        client.force_login(user)
        assert client.get(url).status_code == 404
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(demo.honest)
    assert client.post(url).status_code == 302
    demand = ImpeachmentDemand.objects.get()
    assert list(demand.signatures.values_list("resident_id", flat=True)) == [demo.seat("honest").pk]
    other = Client(HTTP_ACCEPT_LANGUAGE="en")
    other.force_login(demo.mafioso)
    body = other.get(url).content.decode()
    assert 'data-signers="1" data-living="20"' in body and demo.seat("honest").name not in body
    assert other.post(url).status_code == 302
    assert demand.signatures.count() == 2
    again = other.post(url)
    with translation.override("ru"):  # the Lepra page speaks Russian
        refusal = translation.gettext("You have already signed this demand.")
    assert again.status_code == 400 and refusal in again.content.decode()
