"""The demo game of ``make run`` is what issue 2 promises: 3 cities x 20, staff, drawn roles (L-CITY-2, L-ASSIGN,
L-COMM), and loading it is impossible in production settings."""
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError

from cities.models import Alignment, Resident, StaffRole
from inboxes.models import Inbox, Membership
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.staff_kinds import StaffKind
from roles import draw
from rulesets.lepra import seats
from rulesets.lepra.demo import RESIDENT_NAMES, STAFF_NAMES, load_demo_game
from rulesets.lepra.setup import draw as setup_draw


def test_demo_names_are_not_substrings_of_each_other():
    names = RESIDENT_NAMES + list(STAFF_NAMES.values())
    assert len(set(names)) == 66
    assert [(a, b) for a in names for b in names if a != b and a.lower() in b.lower()] == []


def test_demo_has_three_cities_of_twenty_with_four_mafia_and_a_commissar_each_L_CITY_2(demo):
    for number in (1, 2, 3):
        residents = Resident.objects.filter(game=demo.game, city__number=number)
        assert residents.count() == 20
        assert residents.filter(alignment=Alignment.MAFIA).count() == setup_draw.mafia_count(20) == 4
        assert residents.filter(seats.rank_q("is_commissar"), alignment=Alignment.HONEST).count() == 1
        assert residents.filter(seats.rank_q("is_judge")).count() == 1
        assert residents.filter(seats.rank_q("is_godfather"), alignment=Alignment.MAFIA).count() == 1
    kinds = sorted(StaffRole.objects.filter(game=demo.game).values_list("kind", flat=True))
    assert kinds == sorted([StaffKind.PROCURATOR, StaffKind.ARBITER, StaffKind.CONSIGLIERE] + [StaffKind.TRIBUNE] * 3)
    # Game staff are ordinary accounts, never site administrators (L-STAFF-5).
    flags = set(StaffRole.objects.filter(game=demo.game).values_list("user__is_superuser", "user__is_staff"))
    assert flags == {(False, False)}


def test_demo_mafia_inbox_holds_exactly_the_city_mafia_L_INBOX_4(demo):
    for number in (1, 2, 3):
        inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=number)
        members = set(Membership.objects.filter(inbox=inbox).values_list("resident__name", flat=True))
        mafia = set(Resident.objects.filter(game=demo.game, city__number=number, alignment=Alignment.MAFIA)
                    .values_list("name", flat=True))
        assert members == mafia and len(mafia) == 4


def test_demo_commitment_matches_the_notary_lists_L_ASSIGN_3(demo):
    from cities.models import PostKind, PublicPost

    notary = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.NOTARY)
    text = notary.messages.get().body
    salt = text.rsplit("`", 2)[-2]
    lists = {}
    recruitment = PublicPost.objects.get(game=demo.game, kind=PostKind.RECRUITMENT).body
    # Rebuild the lists from the notary text: "N. name" lines under each city heading, in city order.
    city_blocks = [b for b in text.split("\n\n") if b and b[0].isdigit()]
    for number, block in enumerate(city_blocks, start=1):
        lists[str(number)] = [line.split(". ", 1)[1] for line in block.splitlines()]
    assert len(lists) == 3 and all(len(v) == 20 for v in lists.values())
    assert f"`{draw.commitment(lists, salt)}`" in recruitment
    mafia_by_list = {
        lists[str(n)][k - 1]
        for n in (1, 2, 3)
        for k, name in enumerate(lists[str(n)], start=1)
        if Resident.objects.get(game=demo.game, name=name).alignment == Alignment.MAFIA
    }
    assert len(mafia_by_list) == 12


def test_demo_cannot_be_loaded_when_not_allowed(settings, db):
    settings.MAFIA_ALLOW_DEMO = False
    with pytest.raises(ImproperlyConfigured):
        load_demo_game()
    with pytest.raises(CommandError, match="MAFIA_ALLOW_DEMO is off"):
        call_command("load_demo", "--if-empty")
