"""Inbox lifecycle (issue 3 item 4): the standing inboxes of a game, rollover (manual and daily), killing, secret
inboxes and stage inboxes, with exact memberships and states (L-INBOX table, L-INBOX-1..8, -13, -17, -19)."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import override

from cities.models import City, GameEvent, GameStatus, Resident, StaffRole
from cities.services import (
    do_add_city,
    do_appoint_staff,
    do_create_game,
    do_seat_resident,
    do_set_game_status,
)
from inboxes import membership_services, policies, posting, services
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra import inbox_services as lepra_inboxes
from rulesets.lepra import seats
from rulesets.lepra.staff_kinds import StaffKind
from tests.conftest import fresh

K = LepraInboxKind
NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def states(inbox: Inbox) -> dict[str, str]:
    """resident name -> membership state in ``inbox``."""
    return dict(Membership.objects.filter(inbox=inbox).values_list("resident__name", "state"))


def city1(demo) -> Inbox:
    return Inbox.objects.select_related("game", "city").get(game=demo.game, kind=K.CITY, city__number=1, rolled_over_at__isnull=True)


def names(qs) -> set[str]:
    return set(qs.values_list("name", flat=True))


def in_language(game, text_fn):
    with translation.override(game.language):
        return text_fn()


# ------------------------------------------------------------------------------------------------------------
# The standing inboxes of a new game
# ------------------------------------------------------------------------------------------------------------

@pytest.fixture
def small_game(db):
    """A Lepra game in setup: 2 cities (Alpha, Beta) x 4 residents, full staff; Alpha0 is Alpha's commissar,
    Alpha1 and Beta1 the judges."""
    User = get_user_model()

    def user(name: str):
        return User.objects.create_user(name.lower(), f"{name.lower()}@example.com", "x-secret-123", display_name=name)

    procurator = user("SmallProc")
    game = do_create_game(title="Small game", slug="small", acting_user=procurator, now=NOW)
    cities = [do_add_city(game, name=n, acting_user=procurator, now=NOW) for n in ("Alpha", "Beta")]
    residents = {}
    for city in cities:
        for i in range(4):
            residents[f"{city.name}{i}"] = do_seat_resident(city, user(f"{city.name}{i}"), acting_user=procurator, now=NOW)
    staff = {"procurator": procurator}
    for city in cities:
        staff[f"tribune{city.number}"] = user(f"SmallTribune{city.number}")
        do_appoint_staff(game, staff[f"tribune{city.number}"], StaffKind.TRIBUNE, city=city, acting_user=procurator, now=NOW)
    for kind in (StaffKind.ARBITER, StaffKind.CONSIGLIERE):
        staff[kind] = user(f"Small{kind.capitalize()}")
        do_appoint_staff(game, staff[kind], kind, acting_user=procurator, now=NOW)
    seats.do_set_seat_flags(residents["Alpha0"], is_commissar=True, acting_user=None, now=NOW)
    seats.do_set_seat_flags(residents["Alpha1"], is_judge=True, acting_user=None, now=NOW)
    seats.do_set_seat_flags(residents["Beta1"], is_judge=True, acting_user=None, now=NOW)
    return game, staff, residents, cities


def test_open_game_inboxes_creates_every_standing_inbox_with_its_organizer_and_members_L_INBOX(small_game):
    game, staff, residents, cities = small_game
    created = lepra_inboxes.do_open_game_inboxes(game, acting_user=fresh(staff["procurator"]), now=NOW)
    assert len(created) == 2 + 8 + 5
    rows = {}
    for inbox in Inbox.objects.filter(game=game).select_related("organizer", "city", "resident"):
        key = inbox.kind + (f":{inbox.city.name}" if inbox.kind == K.CITY else "")
        key += f":{inbox.resident.name}" if inbox.kind == K.PERSONAL else ""
        organizer = inbox.organizer.kind + (str(inbox.organizer.city.number) if inbox.organizer.city else "")
        rows[key] = (organizer, states(inbox))
    member = MembershipState.MEMBER
    expected = {
        "city:Alpha": ("tribune1", {f"Alpha{i}": member for i in range(4)}),
        "city:Beta": ("tribune2", {f"Beta{i}": member for i in range(4)}),
        **{f"personal:{n}": (f"tribune{1 if n.startswith('Alpha') else 2}", {n: member}) for n in residents},
        "cemetery": ("procurator", {}),
        "office": ("procurator", {}),
        "bar": ("procurator", {}),
        "police": ("procurator", {"Alpha0": member}),
        "court": ("arbiter", {"Alpha1": member, "Beta1": member}),
    }
    assert rows == expected
    # Titles are stored in the game's language (Russian for Lepra) when the inbox is created.
    from django.utils.translation import gettext

    with override(game.language):
        expected_city = gettext("%(city)s: city square") % {"city": "Alpha"}
        expected_personal = gettext("Personal inbox: %(name)s") % {"name": "Beta2"}
    assert Inbox.objects.get(game=game, kind=K.CITY, city=cities[0]).title == expected_city
    assert Inbox.objects.get(game=game, kind=K.PERSONAL, resident=residents["Beta2"]).title == expected_personal
    assert GameEvent.objects.filter(game=game, kind="inboxes.opened").latest("id").payload == {"created": [i.pk for i in created]}
    # A second run finds everything in place and creates nothing.
    assert lepra_inboxes.do_open_game_inboxes(game, acting_user=None, now=NOW) == []
    assert Inbox.objects.filter(game=game).count() == 15


def test_open_game_inboxes_accepts_the_draws_mafia_inbox_and_notary_and_skips_existing_kinds(demo):
    before = Inbox.objects.filter(game=demo.game).count()
    assert lepra_inboxes.do_open_game_inboxes(demo.game, acting_user=None) == []
    assert Inbox.objects.filter(game=demo.game).count() == before


def test_open_game_inboxes_is_refused_to_others_and_without_organizers(small_game):
    game, staff, residents, cities = small_game
    with override("en"), pytest.raises(NotAllowed) as exc:
        lepra_inboxes.do_open_game_inboxes(game, acting_user=fresh(staff["tribune1"]))
    assert str(exc.value) == "Only the Procurator of this game may do this."
    do_add_city(game, name="Gamma", acting_user=fresh(staff["procurator"]))
    with override("en"), pytest.raises(WrongState) as exc:
        lepra_inboxes.do_open_game_inboxes(game, acting_user=None)
    assert str(exc.value) == "Gamma has no Tribune yet."
    assert Inbox.objects.filter(game=game).count() == 0


# ------------------------------------------------------------------------------------------------------------
# Rollover (L-INBOX "Rolling over")
# ------------------------------------------------------------------------------------------------------------

def test_organizer_rolls_over_a_heavy_inbox_dead_banned_old_all_banned_links_both_ways(demo, client):
    inbox = city1(demo)
    honest, mafioso = demo.seat("honest"), demo.seat("mafioso")
    membership_services.do_kill_resident(mafioso, "killed", acting_user=None)
    later = datetime.now(UTC) + timedelta(hours=2)
    services.do_ban_member(inbox, honest, acting_user=fresh(demo.tribune1), until=later, reason="flood")
    new = services.do_roll_over_inbox(inbox, acting_user=fresh(demo.tribune1))
    inbox.refresh_from_db()
    assert new.predecessor == inbox and inbox.successor == new
    assert (new.kind, new.city_id, new.organizer_id) == (K.CITY, inbox.city_id, inbox.organizer_id)
    assert new.title == in_language(demo.game, lambda: _("%(title)s, part %(n)d") % {"title": inbox.title, "n": 2})
    assert inbox.rolled_over_at is not None and inbox.killed_at is None
    # Old: everyone banned (for good). New: the living members, the dead banned, a running ban carried over.
    assert set(states(inbox).values()) == {MembershipState.BANNED}
    assert not Membership.objects.filter(inbox=inbox, banned_until__isnull=False).exists()
    expected = {n: MembershipState.MEMBER for n in states(inbox)}
    expected[mafioso.name] = MembershipState.BANNED
    expected[honest.name] = MembershipState.BANNED
    assert states(new) == expected
    assert Membership.objects.get(inbox=new, resident=honest).banned_until == later
    # Nobody posts in the old one any more, the organizer neither.
    with override("en"), pytest.raises(WrongState) as exc:
        posting.do_post_message(inbox, "ещё тут?", acting_user=fresh(demo.tribune1))
    assert str(exc.value) == "This inbox continues in a newer one."
    posting.do_post_message(new, "Продолжаем здесь.", acting_user=fresh(demo.tribune1))
    # The thread pages link both ways.
    client.force_login(demo.judge)
    old_page = client.get(f"/inboxes/{inbox.public_id}/").content.decode()
    new_page = client.get(f"/inboxes/{new.public_id}/").content.decode()
    assert f'href="/inboxes/{new.public_id}/" rel="next"' in old_page
    assert f'href="/inboxes/{inbox.public_id}/" rel="prev"' in new_page
    # A second rollover of the same inbox is refused; the new one rolls over into part 3.
    with override("en"), pytest.raises(WrongState) as exc:
        services.do_roll_over_inbox(inbox, acting_user=fresh(demo.tribune1))
    assert str(exc.value) == "This inbox was already rolled over."
    third = services.do_roll_over_inbox(new, acting_user=None)
    assert third.title == in_language(demo.game, lambda: _("%(title)s, part %(n)d") % {"title": inbox.title, "n": 3})


def test_only_the_organizer_or_the_site_rolls_over_L_INBOX(demo):
    inbox = city1(demo)
    cases = [("honest", "Only the organizer of this inbox may roll it over."),
             ("procurator", "Only the organizer of this inbox may roll it over."),
             ("resident2", "No such inbox."), ("consigliere", "No such inbox.")]
    for persona, message in cases:
        with override("en"), pytest.raises(NotAllowed) as exc:
            services.do_roll_over_inbox(inbox, acting_user=fresh(getattr(demo, persona)))
        assert str(exc.value) == message, persona
    assert not Inbox.objects.filter(predecessor=inbox).exists()
    voting = services.do_create_inbox(demo.game, K.VOTING, title="Голосование", city=inbox.city, acting_user=None,
                                      resident=demo.seat("honest"))
    with override("en"), pytest.raises(InvalidInput) as exc:
        services.do_roll_over_inbox(voting, acting_user=None)
    assert str(exc.value) == "Voting inboxes and precincts are never rolled over."


def test_rolling_over_a_mafia_inbox_keeps_one_current_per_city_and_the_dead_stay_out_L_INBOX_4(demo):
    mafia1 = Inbox.objects.get(game=demo.game, kind=K.MAFIA, city__number=1)
    dead = demo.seat("mafioso")
    membership_services.do_kill_resident(dead, "executed", acting_user=None)
    new = services.do_roll_over_inbox(mafia1, acting_user=fresh(demo.consigliere))
    living = names(Resident.objects.filter(game=demo.game, city__number=1, alignment="mafia", status="alive"))
    assert states(new) == {n: MembershipState.MEMBER for n in living}
    assert states(mafia1)[dead.name] == MembershipState.REMOVED
    assert policies.can_read_inbox(fresh(demo.mafioso), new) is False


def test_daily_rollover_of_city_inboxes_once_per_day_L_INBOX_1(demo):
    game = do_set_game_status(demo.game, GameStatus.RUNNING, day_number=3, acting_user=fresh(demo.procurator))
    old = {i.city.number: i for i in Inbox.objects.filter(game=game, kind=K.CITY).select_related("city")}
    created = lepra_inboxes.do_roll_over_city_inboxes_for_new_day(game, acting_user=None)
    assert [i.city.number for i in created] == [1, 2, 3]
    for inbox in created:
        assert inbox.day_number == 3 and inbox.predecessor == old[inbox.city.number]
        assert inbox.title == in_language(game, lambda: _("%(city)s: city square, day %(day)d")
                                          % {"city": inbox.city.name, "day": 3})
        assert set(states(inbox).values()) == {MembershipState.MEMBER} and len(states(inbox)) == 20
    assert lepra_inboxes.do_roll_over_city_inboxes_for_new_day(game, acting_user=fresh(demo.procurator)) == []
    with override("en"), pytest.raises(NotAllowed):
        lepra_inboxes.do_roll_over_city_inboxes_for_new_day(game, acting_user=fresh(demo.tribune1))
    # "My inboxes" lists the new one as active and the old one as closed.
    from inboxes.selectors import inbox_list_for
    rows = inbox_list_for(fresh(demo.honest), game)
    assert [i.pk for i in rows if i.kind == K.CITY and i.is_open] == [created[0].pk]
    assert [i.pk for i in rows if i.kind == K.CITY and not i.is_open] == [old[1].pk]


def test_kill_inbox_by_its_moderators_only_and_readers_keep_reading_L_INBOX(demo):
    inbox = city1(demo)
    with override("en"), pytest.raises(NotAllowed) as exc:
        services.do_kill_inbox(inbox, acting_user=fresh(demo.honest))
    assert str(exc.value) == "Only the organizer of this inbox or the Procurator of the game may close it."
    services.do_kill_inbox(inbox, acting_user=fresh(demo.tribune1))
    inbox.refresh_from_db()
    assert inbox.killed_at is not None and not inbox.is_open
    assert policies.can_read_inbox(fresh(demo.honest), inbox) and not policies.can_post_in_inbox(fresh(demo.honest), inbox)
    with override("en"), pytest.raises(WrongState) as exc:
        services.do_kill_inbox(inbox, acting_user=None)
    assert str(exc.value) == "This inbox is already closed."


# ------------------------------------------------------------------------------------------------------------
# Secret inboxes (L-INBOX-13)
# ------------------------------------------------------------------------------------------------------------

def test_a_resident_creates_a_secret_inbox_invites_and_members_can_leave_L_INBOX_13(demo, client):
    honest, mafioso, other = demo.seat("honest"), demo.seat("mafioso"), demo.seat("resident2")
    inbox = services.do_create_secret_inbox(demo.game, title="Заговор", members=[mafioso, other, honest],
                                            acting_user=fresh(demo.honest))
    assert (inbox.kind, inbox.organizer_resident, inbox.organizer) == (K.SECRET, honest, None)
    assert states(inbox) == {honest.name: "member", mafioso.name: "member", other.name: "member"}
    readers = set(policies.readers_of_inbox(inbox).values_list("pk", flat=True))
    assert readers == {demo.honest.pk, demo.mafioso.pk, demo.resident2.pk}
    # The organizing resident invites one more (a moderator of their own secret inbox).
    services.do_add_member(inbox, demo.seat("judge"), acting_user=fresh(demo.honest))
    with override("en"), pytest.raises(NotAllowed):
        services.do_add_member(inbox, demo.seat("commissar"), acting_user=fresh(demo.mafioso))
    # A member leaves through the page: the inbox disappears for them.
    client.force_login(demo.resident2)
    assert f'action="/inboxes/{inbox.public_id}/leave/"' in client.get(f"/inboxes/{inbox.public_id}/").content.decode()
    response = client.post(f"/inboxes/{inbox.public_id}/leave/", {"confirmed": "yes"})
    assert response.status_code == 302 and response["Location"] == f"/games/{demo.game.slug}/inboxes/"
    assert states(inbox)[other.name] == MembershipState.REMOVED
    assert client.get(f"/inboxes/{inbox.public_id}/").status_code == 404
    with override("en"), pytest.raises(NotAllowed) as exc:
        services.do_leave_secret_inbox(inbox, acting_user=fresh(demo.resident2))
    assert str(exc.value) == "No such inbox."
    with override("en"), pytest.raises(InvalidInput) as exc:
        services.do_leave_secret_inbox(city1(demo), acting_user=fresh(demo.honest))
    assert str(exc.value) == "This inbox cannot be left."


def test_the_consigliere_can_never_create_or_join_a_secret_inbox_L_STAFF_4(demo):
    secret_before = Inbox.objects.filter(game=demo.game, kind=K.SECRET).count()  # the demo's commissar offers
    with override("en"), pytest.raises(NotAllowed) as exc:
        services.do_create_secret_inbox(demo.game, title="Тайна", members=[demo.seat("honest")],
                                        acting_user=fresh(demo.consigliere))
    assert str(exc.value) == "The Consigliere may not take part in secret inboxes."
    assert Inbox.objects.filter(game=demo.game, kind=K.SECRET).count() == secret_before
    # Even a secret inbox organised (against the rules) by the Consigliere's role gives that role nothing.
    consigliere_role = StaffRole.objects.get(game=demo.game, kind=StaffKind.CONSIGLIERE)
    rogue = services.do_create_inbox(demo.game, K.SECRET, title="Обход", organizer=consigliere_role, acting_user=None,
                                     members=[demo.seat("honest")])
    user = fresh(demo.consigliere)
    assert policies.can_read_inbox(user, rogue) is False
    assert rogue not in policies.readable_inboxes(user, demo.game)
    assert demo.consigliere.pk not in set(policies.readers_of_inbox(rogue).values_list("pk", flat=True))


def test_a_staff_member_organises_a_secret_inbox_through_their_role_L_INBOX_13(demo):
    honest = demo.seat("honest")
    inbox = services.do_create_secret_inbox(demo.game, title="Разговор", members=[honest],
                                            acting_user=fresh(demo.tribune2))
    assert inbox.organizer.kind == StaffKind.TRIBUNE and inbox.organizer.user == demo.tribune2
    assert states(inbox) == {honest.name: "member"}
    assert policies.can_post_in_inbox(fresh(demo.tribune2), inbox)
    message = posting.do_post_message(inbox, "Поговорим?", acting_user=fresh(demo.tribune2))
    assert message.author_staff == inbox.organizer
    assert set(policies.readers_of_inbox(inbox).values_list("pk", flat=True)) == {demo.tribune2.pk, demo.honest.pk}
    for persona in ("procurator", "tribune1", "arbiter", "consigliere", "mafioso"):
        assert policies.can_read_inbox(fresh(getattr(demo, persona)), inbox) is False, persona
    with override("en"), pytest.raises(InvalidInput) as exc:
        services.do_create_secret_inbox(demo.game, title="Один", members=[], acting_user=fresh(demo.honest))
    assert str(exc.value) == "Invite at least one member."
    with override("en"), pytest.raises(NotAllowed) as exc:
        services.do_create_secret_inbox(demo.game, title="Чужой", members=[honest], acting_user=fresh(demo.outsider))
    assert str(exc.value) == "Only residents and staff of this game may create secret inboxes."


# ------------------------------------------------------------------------------------------------------------
# Stage inboxes (L-INBOX-19)
# ------------------------------------------------------------------------------------------------------------

def test_the_procurator_opens_a_stage_speakers_post_the_audience_reads_L_INBOX_19(demo):
    honest, mafioso = demo.seat("honest"), demo.seat("mafioso")
    city = City.objects.get(game=demo.game, number=1)
    stage = services.do_create_stage_inbox(demo.game, title="Очная ставка", speakers=[honest, mafioso],
                                           audience=city, acting_user=fresh(demo.procurator))
    expected = {n: MembershipState.BANNED for n in names(Resident.objects.filter(city=city))}
    expected.update({honest.name: MembershipState.MEMBER, mafioso.name: MembershipState.MEMBER})
    assert states(stage) == expected
    assert (stage.organizer.kind, stage.city) == (StaffKind.PROCURATOR, city)
    posting.do_post_message(stage, "Я невиновен.", acting_user=fresh(demo.honest))
    judge = fresh(demo.judge)
    assert policies.can_read_inbox(judge, stage) and not policies.can_post_in_inbox(judge, stage)
    assert policies.can_read_inbox(fresh(demo.resident2), stage) is False
    everyone = services.do_create_stage_inbox(demo.game, title="Последнее слово", speakers=[honest],
                                              audience=services.STAGE_AUDIENCE_ALL, acting_user=fresh(demo.procurator))
    assert Membership.objects.filter(inbox=everyone, state=MembershipState.BANNED).count() == 59
    assert policies.can_read_inbox(fresh(demo.resident2), everyone) is True
    with override("en"), pytest.raises(NotAllowed) as exc:
        services.do_create_stage_inbox(demo.game, title="x", speakers=[honest], acting_user=fresh(demo.tribune1))
    assert str(exc.value) == "Only the Procurator of this game may open a stage."
    with override("en"), pytest.raises(InvalidInput) as exc:
        services.do_create_stage_inbox(demo.game, title="x", speakers=[], acting_user=fresh(demo.procurator))
    assert str(exc.value) == "Choose at least one speaker."
    assert Message.objects.filter(inbox__kind=K.STAGE).count() == 1


def test_secret_inbox_page_creates_one_and_refuses_the_consigliere_L_INBOX_13(demo, client):
    url = f"/games/{demo.game.slug}/inboxes/secret/new/"
    mafioso, other = demo.seat("mafioso"), demo.seat("resident2")
    client.force_login(demo.honest)
    assert client.get(url).status_code == 200
    response = client.post(url, {"title": "Через страницу", "members": [mafioso.public_id, other.public_id]})
    inbox = Inbox.objects.get(game=demo.game, kind=K.SECRET, title="Через страницу")
    assert response.status_code == 302 and response["Location"] == f"/inboxes/{inbox.public_id}/"
    assert states(inbox) == {demo.seat("honest").name: "member", mafioso.name: "member", other.name: "member"}
    client.force_login(demo.consigliere)
    response = client.post(url, {"title": "Нельзя", "members": [mafioso.public_id]})
    assert response.status_code == 403
    assert not Inbox.objects.filter(title="Нельзя").exists()
    assert client.post(url, {"title": "Пусто"}).status_code == 400
