"""The console's list pages follow the rulesets of the games they list: an M21 host's inbox and resident lists have
no City column or filter (an M21 game has no cities) and their kind filter offers only M21's inbox kinds,
while a Lepra Procurator's lists keep the City column, the City filter and Lepra's kinds. A city lookup or a kind
no game in scope has is refused with the 400 of a lookup off the whitelist."""
from __future__ import annotations

import re

import pytest

from cities.models import City, Resident
from inboxes.models import Inbox
from kernel.public_ids import new_public_id
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.m21.kinds import M21InboxKind
from kernel.rulesets import get_ruleset
from rulesets.m21 import services as m21_services
from tests.rulesets.m21.day_helpers import build_game
from tests.staff.conftest import NOW
from tests.support.staff_console import CHANGELIST, KIND_FILTER_CHOICE, staff_client

pytestmark = pytest.mark.django_db

LEPRA_KINDS = frozenset(get_ruleset("lepra").inbox_kinds)
M21_KINDS = frozenset(get_ruleset("m21").inbox_kinds)
#: The names of an inbox link on the inbox list: its change page by public id.
INBOX_LINK = re.compile(r'href="/staff/inboxes/inbox/([a-z0-9]+)/change/')
#: The City column's header (``column-city``) and cells, or an object page's City row (``field-city``).
CITY_COLUMN = re.compile(r'class="[^"]*\bcolumn-city\b[^"]*"')
CITY_CELL = re.compile(r'class="[^"]*\bfield-city\b[^"]*"')


def offered_kinds(page: str) -> set[str]:
    return {kind for kind, _label in KIND_FILTER_CHOICE.findall(page)}


def city_shown(page: str) -> bool:
    """Whether the page has a City column (header or cells) or a City filter."""
    return bool(CITY_COLUMN.search(page) or CITY_CELL.search(page)
                or "city__public_id__exact=" in page or "city__isnull=" in page)


@pytest.fixture
def m21():
    return build_game()


def test_an_m21_hosts_inbox_list_has_no_city_and_only_m21_kinds(m21):
    client = staff_client(m21.host)
    response = client.get(CHANGELIST["inbox"])
    assert response.status_code == 200
    page = response.content.decode()
    assert not city_shown(page)
    assert offered_kinds(page) == set(M21_KINDS)
    assert not offered_kinds(page) & (LEPRA_KINDS - M21_KINDS)
    for kind in (LepraInboxKind.POLICE, LepraInboxKind.CEMETERY, LepraInboxKind.COURT, LepraInboxKind.CITY):
        assert f"kind__exact={kind.value}" not in page
    thread = Inbox.objects.get(game=m21.game, kind=M21InboxKind.GAME_THREAD)
    detail = client.get(f"{CHANGELIST['inbox']}{thread.public_id}/change/")
    assert detail.status_code == 200
    assert 'class="form-row field-title' in detail.content.decode()
    assert not CITY_CELL.search(detail.content.decode())


def test_an_m21_hosts_resident_list_has_no_city_column_or_filter(m21):
    response = staff_client(m21.host).get(CHANGELIST["resident"])
    assert response.status_code == 200
    page = response.content.decode()
    assert not city_shown(page)
    assert page.count('class="field-name"') == len(m21.users)  # every seat listed, without its city


def test_an_m21_hosts_offered_kind_filters_and_the_others_are_refused(m21):
    client = staff_client(m21.host)
    response = client.get(f"{CHANGELIST['inbox']}?kind__exact={M21InboxKind.GAME_THREAD.value}")
    assert response.status_code == 200
    thread = Inbox.objects.get(game=m21.game, kind=M21InboxKind.GAME_THREAD)
    assert list(dict.fromkeys(INBOX_LINK.findall(response.content.decode()))) == [thread.public_id]
    assert not City.objects.filter(game=m21.game).exists()  # an M21 game has none: any city id is off the list
    for query in (f"kind__exact={LepraInboxKind.POLICE.value}", f"kind__exact={LepraInboxKind.CEMETERY.value}",
                  "kind__exact=no_such_kind", "kind__exact=", f"city__public_id__exact={new_public_id()}",
                  "city__isnull=False"):
        for changelist in (CHANGELIST["inbox"], CHANGELIST["resident"]):
            if "kind" in query and changelist == CHANGELIST["resident"]:
                continue
            assert client.get(f"{changelist}?{query}").status_code == 400, (changelist, query)


def test_a_lepra_procurators_lists_keep_the_city_and_lepras_kinds(demo):
    client = staff_client(demo.procurator)
    inboxes = client.get(CHANGELIST["inbox"])
    assert inboxes.status_code == 200
    page = inboxes.content.decode()
    assert CITY_COLUMN.search(page) and CITY_CELL.search(page) and "city__public_id__exact=" in page
    assert offered_kinds(page) == set(LEPRA_KINDS)
    residents = client.get(CHANGELIST["resident"])
    assert residents.status_code == 200
    page = residents.content.decode()
    assert CITY_COLUMN.search(page) and CITY_CELL.search(page)
    seat = Resident.objects.filter(game=demo.game).first()
    assert CITY_CELL.search(client.get(f"{CHANGELIST['resident']}{seat.public_id}/change/").content.decode())
    city = City.objects.get(game=demo.game, number=2)
    assert f'href="?city__public_id__exact={city.public_id}"' in page
    narrowed = client.get(f"{CHANGELIST['resident']}?city__public_id__exact={city.public_id}")
    assert narrowed.status_code == 200
    assert narrowed.content.decode().count('class="field-name"') == Resident.objects.filter(city=city).count()
    police = client.get(f"{CHANGELIST['inbox']}?kind__exact={LepraInboxKind.POLICE.value}")
    assert police.status_code == 200
    # An M21 kind is no kind of a Lepra game: refused like a lookup off the whitelist.
    assert client.get(f"{CHANGELIST['inbox']}?kind__exact={M21InboxKind.GAME_THREAD.value}").status_code == 400


def test_a_host_of_both_rulesets_sees_each_games_terms_when_the_list_names_the_game(demo):
    other = m21_services.do_create_m21_game(title="Rum Runners", slug="m21-both", acting_user=demo.procurator,
                                            now=NOW)
    client = staff_client(demo.procurator)
    everything = client.get(CHANGELIST["inbox"]).content.decode()
    assert "city__public_id__exact=" in everything
    assert offered_kinds(everything) == set(LEPRA_KINDS | M21_KINDS)
    m21_only = client.get(f"{CHANGELIST['inbox']}?game__slug__exact={other.slug}")
    assert m21_only.status_code == 200
    assert not city_shown(m21_only.content.decode())
    assert offered_kinds(m21_only.content.decode()) == set(M21_KINDS)
    assert client.get(f"{CHANGELIST['inbox']}?game__slug__exact={other.slug}"
                      f"&kind__exact={LepraInboxKind.POLICE.value}").status_code == 400
    lepra_only = client.get(f"{CHANGELIST['inbox']}?game__slug__exact={demo.game.slug}").content.decode()
    assert "city__public_id__exact=" in lepra_only
    assert offered_kinds(lepra_only) == set(LEPRA_KINDS)
    residents = client.get(f"{CHANGELIST['resident']}?game__slug__exact={other.slug}").content.decode()
    assert not city_shown(residents)
