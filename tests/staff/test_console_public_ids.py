"""The staff console addresses staff roles, memberships and play bans by their opaque public ids, never by database
ids (DESIGN.md "The access policy": no sequential id that counts what the viewer may not read); a database id or a
malformed id is refused in words or is the 404 of a missing object, never a 500."""
from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

import time_machine

from cities.models import StaffRole
from inboxes.models import Membership
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.staff_kinds import StaffKind
from staff.models import StaffStandIn
from tests.staff.conftest import NOW
from tests.support.staff_console import staff_client

AT = NOW + timedelta(minutes=10)


def _local(demo, moment) -> str:
    return moment.astimezone(ZoneInfo(demo.game.time_zone)).strftime("%Y-%m-%dT%H:%M")


def _tribune_role(demo, number: int) -> StaffRole:
    return StaffRole.objects.get(game=demo.game, kind=StaffKind.TRIBUNE, city__number=number)


def test_the_stand_in_form_offers_and_reads_staff_roles_by_public_id(demo):
    absent, stand_in = _tribune_role(demo, 2), _tribune_role(demo, 1)
    client = staff_client(demo.procurator)
    url = f"/staff/games/{demo.game.slug}/stand-in/"
    with time_machine.travel(AT, tick=False):
        page = client.get(url).content.decode()
        assert f'value="{absent.public_id}"' in page and f'<option value="{absent.pk}"' not in page
        times = {"starts_at": _local(demo, AT + timedelta(hours=1)), "ends_at": _local(demo, AT + timedelta(hours=3))}
        for bad in ({"absent": absent.pk, "stand_in": stand_in.pk}, {"absent": "x" * 300, "stand_in": "٣"}):
            refused = client.post(url, {**bad, **times})
            assert refused.status_code == 200 and 'class="errorlist' in refused.content.decode()
        assert not StaffStandIn.objects.exists()
        done = client.post(url, {"absent": absent.public_id, "stand_in": stand_in.public_id, **times})
    assert done.status_code == 302
    assert StaffStandIn.objects.get().stand_in_id == stand_in.pk


def test_memberships_are_listed_and_opened_by_public_id_only(demo):
    client = staff_client(demo.tribune1)
    membership = Membership.objects.filter(inbox__kind=LepraInboxKind.CITY, inbox__city__number=1).first()
    listed = client.get("/staff/inboxes/membership/?all=").content.decode()
    assert f"/staff/inboxes/membership/{membership.public_id}/change/" in listed
    assert f"/staff/inboxes/membership/{membership.pk}/change/" not in listed
    assert client.get(f"/staff/inboxes/membership/{membership.public_id}/change/").status_code == 200
    assert client.get(f"/staff/inboxes/membership/{membership.pk}/change/").status_code in (302, 404)
    assert client.get("/staff/inboxes/membership/%C2%B2/change/").status_code in (302, 404)
