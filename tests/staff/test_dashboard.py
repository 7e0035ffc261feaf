"""The per-role dashboard, "what needs me now" (issue 7 item 1): counts of the viewer's own scope only, each
linking to a changelist that lists exactly those objects (RULES.md L-NOM-4/5/6, L-COMM, L-COURT, L-IMPEACH,
L-STAFF-2, L-STAFF-6)."""
from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
import time_machine

from cities.models import ScheduledEvent, StaffRole
from rulesets.lepra.models import CommissarOffer
from rulesets.lepra.staff_kinds import StaffKind
from staff import console
from rulesets.lepra import staff_services
from staff import services as stand_in_services
from staff.staff_admin import Need
from tests.support.staff_console import staff_client

from .conftest import NOW

NEED = re.compile(r'<a href="([^"]+)" data-need="([a-z]+)" data-count="(\d+)">')


def needs_of(user) -> dict[str, tuple[int, str]]:
    body = staff_client(user).get("/staff/").content.decode()
    return {key: (int(count), html.unescape(url)) for url, key, count in NEED.findall(body)}


def test_each_role_sees_its_own_needs_with_exact_counts(populated):
    demo = populated
    pending_offers = CommissarOffer.objects.filter(game=demo.game, answered_at__isnull=True).count()
    with time_machine.travel(NOW, tick=False):
        assert {k: c for k, (c, _u) in needs_of(demo.tribune1).items()} == {"proxy": 1, "suicide": 1, "speech": 1}
        assert {k: c for k, (c, _u) in needs_of(demo.tribune2).items()} == {"proxy": 1, "suicide": 1, "speech": 1}
        assert {k: c for k, (c, _u) in needs_of(demo.procurator).items()} == {
            "speech": 2, "commissar": pending_offers, "impeachment": 0, "failed": 0}
        assert {k: c for k, (c, _u) in needs_of(demo.arbiter).items()} == {"court": 0}
        assert needs_of(demo.consigliere) == {}


@pytest.mark.parametrize("persona", ["tribune1", "tribune2", "procurator"])
def test_each_need_links_to_exactly_its_objects(populated, persona):
    demo = populated
    client = staff_client(getattr(demo, persona))
    with time_machine.travel(NOW, tick=False):
        for key, (count, url) in needs_of(getattr(demo, persona)).items():
            if key in ("commissar", "failed", "impeachment"):
                continue
            body = client.get(url + "&all=").content.decode()
            listed = set(re.findall(r'href="/staff/lepra/[a-z]+/([a-z0-9]+)/change/', body))
            assert len(listed) == count, (persona, key, url)


def test_failed_scheduled_events_and_impeachments_reach_the_procurators_dashboard(populated):
    demo = populated
    ScheduledEvent.objects.create(game=demo.game, kind="voting_open", due_at=NOW, created_at=NOW, attempts=2,
                                  last_error="boom")
    residents = list(demo.game.residents.filter(city__number=1).exclude(user=demo.honest).order_by("name")[:5])
    demand = staff_services.do_demand_impeachment(demo.game, acting_user=demo.honest, now=NOW)
    for r in residents:
        staff_services.do_sign_impeachment_demand(demand, acting_user=r.user, now=NOW)
    needs = needs_of(demo.procurator)
    assert needs["failed"][0] == 1 and needs["impeachment"][0] == 1
    # Tribune 1 (whose impeachment it is) sees neither.
    assert "impeachment" not in needs_of(demo.tribune1) and "failed" not in needs_of(demo.tribune1)


def test_a_stand_in_sees_the_other_citys_needs_during_the_period_L_STAFF_2(populated):
    demo = populated
    roles = {r.city.number: r for r in StaffRole.objects.filter(game=demo.game, kind=StaffKind.TRIBUNE)
             .select_related("city", "game")}
    stand_in_services.do_grant_stand_in(roles[2], roles[1], NOW, NOW + timedelta(hours=2),
                                        acting_user=demo.procurator, now=NOW)
    with time_machine.travel(NOW + timedelta(minutes=1), tick=False):
        body = staff_client(demo.tribune1).get("/staff/").content.decode()
        assert re.findall(r'<tr data-role="([^"]+)">', body) == ["tribune", "tribune"]
        assert [c for _u, k, c in NEED.findall(body) if k == "proxy"] == ["1", "1"]
    with time_machine.travel(NOW + timedelta(hours=2), tick=False):
        body = staff_client(demo.tribune1).get("/staff/").content.decode()
        assert re.findall(r'<tr data-role="([^"]+)">', body) == ["tribune"]


def test_other_apps_add_needs_through_the_hook(populated, monkeypatch):
    demo = populated
    hook_calls = []

    def removal_demands(request, role):
        hook_calls.append(role.kind)
        return [Need("removal", "Removal demands", 7, "/staff/")] if role.kind == StaffKind.ARBITER else []

    monkeypatch.setattr(console, "DASHBOARD_NEEDS", [*console.DASHBOARD_NEEDS, removal_demands])
    assert needs_of(demo.arbiter)["removal"][0] == 7
    assert "removal" not in needs_of(demo.tribune1)
    assert hook_calls == ["arbiter", "tribune"]
