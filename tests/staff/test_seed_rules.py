"""Four Lepra rules of the seed, each with exact outcomes: the mafia in their city's mafia inbox and the
Consigliere's confirmation that names nobody (L-ASSIGN-4), cities never merged (L-CITY-3), the cemetery
(L-INBOX-6), the commissar's check channel where each side sees the other only as a role (L-INBOX-15)."""
from __future__ import annotations

import importlib
import inspect
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client

from cities import recruitment_services
from cities import services as city_services
from cities.models import Alignment, City, GameEvent, GameStatus, Resident, Signup, StaffRole
from inboxes import audit_policy, knowledge, policies
from inboxes.membership_services import do_kill_resident, do_replace_player
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from inboxes.services import do_roll_over_inbox
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra.night import services as night_services
from rulesets.lepra.staff_kinds import StaffKind
from rulesets.lepra import staff_services as services
from rulesets.lepra.models import RoleAcknowledgement
from tests.conftest import fresh
from tests.staff.conftest import NOW
from tests.support.staff_console import staff_client


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --------------------------------------------------------------------------------------------------------------
# L-ASSIGN-4
# --------------------------------------------------------------------------------------------------------------

def test_each_citys_mafia_are_exactly_the_members_of_its_mafia_inbox_L_ASSIGN_4(demo):
    consigliere = StaffRole.objects.get(game=demo.game, kind=StaffKind.CONSIGLIERE)
    for city in City.objects.filter(game=demo.game).order_by("number"):
        inbox = Inbox.objects.get(city=city, kind=LepraInboxKind.MAFIA)
        mafia = set(Resident.objects.filter(city=city, alignment=Alignment.MAFIA).values_list("pk", flat=True))
        assert len(mafia) == 4  # 20% of 20 (L-CITY-2)
        assert set(Membership.objects.filter(inbox=inbox).values_list("resident_id", "state")) == {
            (pk, MembershipState.MEMBER) for pk in mafia}
        assert inbox.organizer_id == consigliere.pk


def test_the_consigliere_confirms_to_the_procurator_that_every_mafioso_acknowledged_naming_nobody_L_ASSIGN_4(demo):
    mafia = list(Resident.objects.filter(game=demo.game, alignment=Alignment.MAFIA).order_by("pk"))
    assert len(mafia) == 12
    with pytest.raises(NotAllowed):
        services.do_acknowledge_mafia_role(demo.game, acting_user=fresh(demo.honest), now=NOW)
    with pytest.raises(NotAllowed):
        services.do_confirm_mafia_acknowledged(demo.game, acting_user=fresh(demo.procurator), now=NOW)
    for resident in mafia[:-1]:
        services.do_acknowledge_mafia_role(demo.game, acting_user=fresh(resident.user), now=NOW)
    with pytest.raises(WrongState):
        services.do_acknowledge_mafia_role(demo.game, acting_user=fresh(mafia[0].user), now=NOW)
    with pytest.raises(WrongState) as early:
        services.do_confirm_mafia_acknowledged(demo.game, acting_user=fresh(demo.consigliere), now=NOW)
    assert str(early.value) in ("1 of 12 mafiosi have not acknowledged their role yet.",
                                "Свою роль ещё не подтвердили: 1 из 12 мафиози.")
    services.do_acknowledge_mafia_role(demo.game, acting_user=fresh(mafia[-1].user), now=NOW)
    assert RoleAcknowledgement.objects.filter(game=demo.game).count() == 12
    later = NOW + timedelta(minutes=5)
    message = services.do_confirm_mafia_acknowledged(demo.game, acting_user=fresh(demo.consigliere), now=later)
    assert message.inbox.kind == LepraInboxKind.BAR
    assert message.body == "Консильери сообщает: все мафиози всех городов осознали свою криминальную принадлежность."
    assert (message.author_resident_id, message.author_user_id) == (None, None)
    assert all(r.name not in message.body for r in mafia)
    assert policies.can_read_inbox(fresh(demo.procurator), message.inbox)
    assert services.mafia_confirmed_at(demo.game) == later
    with pytest.raises(WrongState):
        services.do_confirm_mafia_acknowledged(demo.game, acting_user=fresh(demo.consigliere), now=later)
    # The audit: who acknowledged is the Consigliere's to see; the confirmation is every staff member's, nameless.
    row = GameEvent.objects.get(game=demo.game, kind="assign.confirmed")
    assert row.payload == {"inbox": message.inbox_id}
    for persona, expected in (("procurator", {"assign.confirmed"}), ("tribune1", {"assign.confirmed"}),
                              ("consigliere", {"assign.confirmed", "mafia.acknowledged"})):
        kinds = set(audit_policy.visible_events(fresh(getattr(demo, persona)), demo.game)
                    .filter(kind__in=["assign.confirmed", "mafia.acknowledged"]).values_list("kind", flat=True))
        assert kinds == expected, persona


def test_the_acknowledgement_page_is_the_mafias_and_the_consiglieres_only_L_ASSIGN_4(demo):
    url = f"/games/{demo.game.slug}/mafia-role/"
    for persona in ("honest", "commissar", "procurator", "tribune1", "arbiter"):
        assert _client(getattr(demo, persona)).get(url).status_code == 404, persona
    mafioso = _client(demo.mafioso)
    assert mafioso.post(url).status_code == 302
    assert RoleAcknowledgement.objects.filter(resident=demo.seat("mafioso")).count() == 1
    page = _client(demo.consigliere).get(url).content.decode()
    assert demo.seat("mafioso").name in page and "Сообщить Прокуратору" in page


# --------------------------------------------------------------------------------------------------------------
# L-CITY-3
# --------------------------------------------------------------------------------------------------------------

def test_no_path_merges_cities_or_moves_a_resident_to_another_city_L_CITY_3(demo):
    game = demo.game
    city1, city2 = City.objects.filter(game=game).order_by("number")[:2]
    before = dict(Resident.objects.filter(game=game).values_list("pk", "city_id"))
    seat = demo.seat("honest")
    procurator = fresh(demo.procurator)
    signup = Signup.objects.get(game=game, user=seat.user, withdrawn_at__isnull=True)
    with pytest.raises(WrongState):  # the lists are published: nobody moves
        recruitment_services.do_move_signup(signup, city2, acting_user=procurator, now=NOW)
    with pytest.raises(WrongState):
        city_services.do_seat_resident(city2, seat.user, acting_user=procurator, now=NOW)
    with pytest.raises(WrongState):
        city_services.do_add_city(game, name="Объединённый город", acting_user=procurator, now=NOW)
    with pytest.raises((WrongState, InvalidInput)):
        recruitment_services.do_form_cities(game, acting_user=procurator, now=NOW)
    # A replacement keeps the seat's city (L-REPLACE-1).
    replaced = do_replace_player(seat, demo.outsider, acting_user=procurator, now=NOW)
    assert replaced.city_id == city1.pk
    # No service of any app or ruleset merges cities.
    root = Path(__file__).resolve().parents[2]
    service_modules = sorted(
        ".".join(path.relative_to(root).with_suffix("").parts)
        for app in ("cities", "inboxes", "voting", "roles", "staff", "sanctions", "archive", "rulesets")
        for path in (root / app).rglob("*.py") if path.stem == "services" or path.stem.endswith("_services"))
    assert "rulesets.lepra.day.services" in service_modules and "cities.services" in service_modules
    for name in service_modules:
        module = importlib.import_module(name)
        merging = [n for n, f in inspect.getmembers(module, inspect.isfunction) if "merge" in n.lower()]
        assert merging == [], name
    # The console cannot change a resident's city.
    client = staff_client(demo.procurator)
    response = client.post(f"/staff/cities/resident/{seat.pk}/change/", {"city": city2.pk, "name": seat.name})
    assert response.status_code == 403
    assert dict(Resident.objects.filter(game=game).values_list("pk", "city_id")) == before
    assert City.objects.filter(game=game).count() == 3


def test_the_city_inbox_never_takes_in_another_citys_residents_on_rollover_L_CITY_3(demo):
    city1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    new = do_roll_over_inbox(city1, acting_user=fresh(demo.tribune1), now=NOW)
    assert new.city_id == city1.city_id
    cities = set(Membership.objects.filter(inbox=new).values_list("resident__city__number", flat=True))
    assert cities == {1}
    assert Membership.objects.filter(inbox=new).count() == 20


# --------------------------------------------------------------------------------------------------------------
# L-INBOX-6
# --------------------------------------------------------------------------------------------------------------

def test_the_cemetery_holds_the_dead_not_the_spirits_and_the_procurator_runs_it_L_INBOX_6(demo):
    cemetery = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CEMETERY)
    procurator_role = StaffRole.objects.get(game=demo.game, kind=StaffKind.PROCURATOR)
    assert (cemetery.organizer_id, Membership.objects.filter(inbox=cemetery).count()) == (procurator_role.pk, 0)
    dead, spirit = demo.seat("honest"), demo.seat("resident2")
    do_kill_resident(dead, "executed", acting_user=None, now=NOW)
    do_kill_resident(spirit, "killed", spirit=True, acting_user=None, now=NOW)
    assert list(Membership.objects.filter(inbox=cemetery).values_list("resident_id", "state")) == [
        (dead.pk, MembershipState.MEMBER)]
    assert policies.can_post_in_inbox(fresh(demo.honest), cemetery, NOW)
    assert not policies.can_read_inbox(fresh(demo.resident2), cemetery)  # a spirit is not in the cemetery
    do_post_message(cemetery, "Здесь тихо.", acting_user=fresh(demo.honest), now=NOW + timedelta(minutes=1))
    do_post_message(cemetery, "Добро пожаловать.", acting_user=fresh(demo.procurator), now=NOW + timedelta(minutes=2))
    for persona in ("mafioso", "commissar", "judge", "tribune1", "arbiter", "consigliere", "anonymous"):
        assert not policies.can_read_inbox(fresh(getattr(demo, persona)), cemetery), persona
    readers = set(policies.readers_of_inbox(cemetery).values_list("username", flat=True))
    assert readers == {demo.honest.username, demo.procurator.username}
    # Heavy: the Procurator rolls it over; the dead keep their voice in the new one, everyone is banned in the old.
    new = do_roll_over_inbox(cemetery, acting_user=fresh(demo.procurator), now=NOW + timedelta(hours=1))
    assert (new.kind, new.predecessor_id) == (LepraInboxKind.CEMETERY, cemetery.pk)
    assert list(Membership.objects.filter(inbox=new).values_list("resident_id", "state")) == [
        (dead.pk, MembershipState.MEMBER)]
    assert set(Membership.objects.filter(inbox=cemetery).values_list("state", flat=True)) == {MembershipState.BANNED}
    # A later death joins the current cemetery.
    do_kill_resident(demo.seat("judge"), "killed", acting_user=None, now=NOW + timedelta(hours=2))
    assert Membership.objects.get(inbox=new, resident=demo.seat("judge")).state == MembershipState.MEMBER
    assert not Membership.objects.filter(inbox=cemetery, resident=demo.seat("judge")).exists()


def test_the_cemetery_is_public_after_the_game_L_INBOX_6_L_ARCH_1(demo):
    from rulesets.lepra.game_end_services import do_end_game_early

    cemetery = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CEMETERY)
    do_kill_resident(demo.seat("honest"), "executed", acting_user=None, now=NOW)
    do_post_message(cemetery, "Здесь тихо.", acting_user=fresh(demo.honest), now=NOW + timedelta(minutes=1))
    do_end_game_early(demo.game, reason="Конец", acting_user=fresh(demo.procurator), now=NOW + timedelta(hours=1))
    cemetery.refresh_from_db()
    cemetery.game.refresh_from_db()
    assert policies.can_read_inbox(AnonymousUser(), cemetery)
    assert "Здесь тихо." in Client().get(f"/inboxes/{cemetery.public_id}/").content.decode()


# --------------------------------------------------------------------------------------------------------------
# L-INBOX-15
# --------------------------------------------------------------------------------------------------------------

@pytest.fixture
def checked(db):
    """Night 2 of a two-city game of ten: city 1's commissar has checked a mafioso; the Consigliere answers a
    line in the channel."""
    from tests.rulesets.lepra.night.conftest import NOW as NIGHT
    from tests.rulesets.lepra.night.conftest import build_night_game

    ng = build_night_game("checks", cities=2, size=10)
    check = night_services.do_check_resident(ng.mafia[1][0], acting_user=ng.commissar[1].user, now=NIGHT)
    channel = night_services.check_channel_of(ng.cities[0])
    do_post_message(channel, "Принято.", acting_user=fresh(ng.consigliere), now=NIGHT + timedelta(minutes=1))
    return ng, check, channel


def test_the_check_channel_shows_each_side_only_as_a_role_L_INBOX_15(checked):
    ng, check, channel = checked
    commissar = ng.commissar[1]
    consigliere_name = fresh(ng.consigliere).public_name
    assert set(Membership.objects.filter(inbox=channel).values_list("resident_id", "state")) == {
        (commissar.pk, MembershipState.BANNED)}
    assert set(policies.readers_of_inbox(channel).values_list("pk", flat=True)) == {commissar.user_id,
                                                                                     ng.consigliere.pk}
    messages = list(Message.objects.filter(inbox=channel).order_by("received_at", "pk"))
    assert [(m.author_resident_id, m.author_user_id is None) for m in messages[:2]] == [(None, True), (None, True)]
    target = ng.mafia[1][0].name
    assert [m.body for m in messages] == [f"Ночь 2. Вопрос комиссара: {target} — мафия?", f"Ответ: {target} — мафия.",
                                          "Принято."]
    assert messages[2].author_staff.kind == StaffKind.CONSIGLIERE
    # The Consigliere's page: the question and the answer, no commissar's name, no member list, no link to him.
    page = _client(ng.consigliere).get(f"/inboxes/{channel.public_id}/").content.decode()
    assert messages[1].body_html in page
    assert commissar.name not in page and f"/residents/{commissar.public_id}/" not in page
    assert not knowledge.can_see_members(fresh(ng.consigliere), channel)
    assert not knowledge.knows_check_asker(fresh(ng.consigliere), check)
    # The commissar's page: the Consigliere's line signed with the role, never the Consigliere's name.
    page = _client(commissar.user).get(f"/inboxes/{channel.public_id}/").content.decode()
    assert "Принято." in page and "Консильери" in page and consigliere_name not in page
    assert knowledge.knows_check_asker(fresh(commissar.user), check)
    # The Consigliere's console: the messages by role, the membership not listed.
    client = staff_client(ng.consigliere)
    listing = client.get(f"/staff/inboxes/message/?inbox={channel.public_id}").content.decode()
    assert commissar.name not in listing and "Принято." in listing
    assert client.get(f"/staff/inboxes/membership/?inbox={channel.public_id}").status_code == 200
    members = client.get(f"/staff/inboxes/membership/?inbox={channel.public_id}").content.decode()
    assert commissar.name not in members
    # Nobody else reads it while the game runs.
    for user in (ng.procurator, ng.staff["tribune1"], ng.commissar[2].user, ng.mafia[1][0].user):
        assert not policies.can_read_inbox(fresh(user), channel)


def test_the_check_channel_is_public_after_the_game_with_its_member_L_INBOX_15_L_ARCH_1(checked):
    from rulesets.lepra.game_end_services import do_end_game_early
    from tests.rulesets.lepra.night.conftest import NOW as NIGHT

    ng, _check, channel = checked
    do_end_game_early(ng.game, reason="Конец", acting_user=fresh(ng.procurator), now=NIGHT + timedelta(hours=1))
    channel = Inbox.objects.select_related("game").get(pk=channel.pk)
    assert channel.game.status == GameStatus.FINISHED
    assert policies.can_read_inbox(AnonymousUser(), channel) and knowledge.can_see_members(AnonymousUser(), channel)
    assert ng.commissar[1].name in Client().get(f"/inboxes/{channel.public_id}/").content.decode()
