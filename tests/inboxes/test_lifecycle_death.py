"""Death and membership (issue 3 item 5): ``do_kill_resident`` applies every membership change of L-DEATH-1 in one
transaction (spirits L-SPIRIT-2, the court L-INBOX-2, voting L-VOTE-9), and the Arbiter's penalty bans
(L-INBOX-18, L-STAFF-3)."""
from __future__ import annotations

from datetime import timedelta
from types import MappingProxyType

import pytest
from django.utils import timezone
from django.utils.translation import override

from cities.models import GameEvent, Resident
from inboxes import membership_services, policies, services
from inboxes.models import Inbox, Membership, MembershipState
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import ruleset_of
from rulesets.lepra import inbox_services as lepra_inboxes
from rulesets.lepra import seats
from tests.conftest import fresh

K = LepraInboxKind


def state(inbox: Inbox, resident: Resident) -> str | None:
    return Membership.objects.filter(inbox=inbox, resident=resident).values_list("state", flat=True).first()


def get(demo, kind: str, city: int | None = None) -> Inbox:
    qs = Inbox.objects.filter(game=demo.game, kind=kind, rolled_over_at__isnull=True)
    return qs.get(city__number=city) if city else qs.get()


def snapshot(resident: Resident) -> list[tuple]:
    return sorted(Membership.objects.filter(resident=resident).values_list("inbox_id", "state", "banned_until"))


def test_a_killed_mafioso_is_banned_in_the_city_removed_from_the_mafia_and_sent_to_the_cemetery_L_DEATH_1(demo):
    seat = demo.seat("mafioso")
    now = timezone.now()
    voting = services.do_create_inbox(demo.game, K.VOTING, title="Голосование: X", city=seat.city, acting_user=None,
                                      resident=demo.seat("honest"), members=[seat, demo.seat("honest")])
    membership_services.do_kill_resident(seat, "killed", acting_user=None, now=now)
    seat.refresh_from_db()
    assert (seat.status, seat.died_at, seats.is_spirit(seat)) == ("dead", now, False)
    assert state(get(demo, K.CITY, 1), seat) == MembershipState.BANNED
    assert state(get(demo, K.MAFIA, 1), seat) == MembershipState.REMOVED
    assert state(voting, seat) == MembershipState.REMOVED
    assert state(get(demo, K.CEMETERY), seat) == MembershipState.MEMBER
    assert state(Inbox.objects.get(kind=K.PERSONAL, resident=seat), seat) == MembershipState.MEMBER
    event = GameEvent.objects.filter(kind="resident.died").latest("id")
    assert event.payload == {"resident": seat.pk, "cause": "killed", "spirit": False, "killed_inboxes": [], "judge": False}
    # The dead mafioso loses the mafia inbox in every form of the policy (L-INBOX-4, L-INBOX-17).
    user = fresh(demo.mafioso)
    mafia1 = get(demo, K.MAFIA, 1)
    assert policies.can_read_inbox(user, mafia1) is False
    assert mafia1 not in policies.readable_inboxes(user, demo.game)
    assert demo.mafioso.pk not in set(policies.readers_of_inbox(mafia1).values_list("pk", flat=True))
    assert policies.can_read_inbox(user, get(demo, K.CEMETERY)) and policies.can_post_in_inbox(user, get(demo, K.CEMETERY))
    assert policies.can_read_inbox(user, get(demo, K.CITY, 1)) and not policies.can_post_in_inbox(user, get(demo, K.CITY, 1))


def test_a_dead_commissar_is_removed_from_the_police_station_L_INBOX_3(demo):
    seat = demo.seat("commissar")
    membership_services.do_kill_resident(seat, "executed", acting_user=fresh(demo.procurator))
    police = get(demo, K.POLICE)
    assert state(police, seat) == MembershipState.REMOVED
    assert policies.can_read_inbox(fresh(demo.commissar), police) is False


def test_a_dead_nominee_voting_inbox_is_killed_L_VOTE_9(demo):
    seat = demo.seat("honest")
    voting = services.do_create_inbox(demo.game, K.VOTING, title="Голосование: H", city=seat.city, acting_user=None,
                                      resident=seat, members=[demo.seat("mafioso")])
    membership_services.do_kill_resident(seat, "suicide", acting_user=None)
    voting.refresh_from_db()
    assert voting.killed_at is not None
    assert GameEvent.objects.filter(kind="resident.died").latest("id").payload["killed_inboxes"] == [voting.pk]


def test_a_spirit_is_banned_in_the_city_and_stays_out_of_the_cemetery_until_laid_to_rest_L_SPIRIT_2(demo):
    seat = demo.seat("honest")
    voting = services.do_create_inbox(demo.game, K.VOTING, title="Голосование: S", city=seat.city, acting_user=None,
                                      resident=demo.seat("mafioso"), members=[seat])
    membership_services.do_kill_resident(seat, "killed", spirit=True, acting_user=None)
    seat.refresh_from_db()
    assert seats.is_spirit(seat) and seat.status == "dead"
    assert state(get(demo, K.CITY, 1), seat) == MembershipState.BANNED
    assert state(get(demo, K.CEMETERY), seat) is None
    assert state(voting, seat) == MembershipState.MEMBER  # a spirit votes that day
    lepra_inboxes.do_lay_spirit_to_rest(seat, acting_user=None)
    seat.refresh_from_db()
    assert not seats.is_spirit(seat)
    assert state(get(demo, K.CEMETERY), seat) == MembershipState.MEMBER
    assert state(voting, seat) == MembershipState.REMOVED
    with override("en"), pytest.raises(InvalidInput) as exc:
        membership_services.do_kill_resident(demo.seat("mafioso"), "executed", spirit=True, acting_user=None)
    assert (str(exc.value), exc.value.rule) == ("Only a resident killed at night can become a spirit.", "L-SPIRIT-1")
    with override("en"), pytest.raises(WrongState) as exc:
        lepra_inboxes.do_lay_spirit_to_rest(seat, acting_user=None)
    assert (str(exc.value), exc.value.rule) == (f"{seat.name} is not a spirit.", "L-SPIRIT-2")


def test_a_dead_judge_leaves_the_court_and_a_new_court_inbox_replaces_the_old_L_INBOX_2(demo):
    judge = demo.seat("judge")
    old = get(demo, K.COURT)
    others = set(Resident.objects.filter(seats.rank_q("is_judge"), game=demo.game).exclude(pk=judge.pk).values_list("name", flat=True))
    membership_services.do_kill_resident(judge, "killed", acting_user=None)
    judge.refresh_from_db()
    assert seats.is_judge(judge) is False
    old.refresh_from_db()
    new = old.successor
    assert new.predecessor == old and old.rolled_over_at is not None
    assert dict(Membership.objects.filter(inbox=new).values_list("resident__name", "state")) == {n: "member" for n in others}
    assert set(Membership.objects.filter(inbox=old).values_list("state", flat=True)) == {MembershipState.BANNED}
    # The city elects a new judge: the court is renewed again; the new judge gets no access to old courts.
    successor = Resident.objects.filter(seats.rank_q("is_commissar", False), game=demo.game, city=judge.city, status="alive").exclude(
        pk=demo.seat("honest").pk).first()
    seats.do_set_seat_flags(successor, is_judge=True, acting_user=None)
    newest = lepra_inboxes.do_renew_court_inbox(demo.game, acting_user=fresh(demo.arbiter))
    assert newest.predecessor == new
    assert set(Membership.objects.filter(inbox=newest).values_list("resident__name", flat=True)) == others | {successor.name}
    user = fresh(successor.user)
    assert [policies.can_read_inbox(user, i) for i in (old, new, newest)] == [False, False, True]
    assert policies.can_read_inbox(fresh(demo.judge), old) is True  # banned: still reads the old court
    assert policies.can_read_inbox(fresh(demo.judge), newest) is False


def test_only_the_site_or_the_procurator_records_a_death_and_refusals_change_nothing_L_DEATH_1(demo):
    seat = demo.seat("honest")
    before = snapshot(seat)
    for persona in ("tribune1", "arbiter", "consigliere", "honest"):
        with override("en"), pytest.raises(NotAllowed) as exc:
            membership_services.do_kill_resident(seat, "killed", acting_user=fresh(getattr(demo, persona)))
        assert (str(exc.value), exc.value.rule) == ("Only the Procurator of this game may do this.", "L-DEATH-1")
    with override("en"), pytest.raises(InvalidInput) as exc:
        membership_services.do_kill_resident(seat, "lightning", acting_user=None)
    assert (str(exc.value), exc.value.rule) == ("Unknown cause of death: lightning.", "L-DEATH-1")
    seat.refresh_from_db()
    assert seat.status == "alive" and snapshot(seat) == before
    membership_services.do_kill_resident(seat, "penalty", acting_user=None)
    with override("en"), pytest.raises(WrongState) as exc:
        membership_services.do_kill_resident(seat, "killed", acting_user=None)
    assert (str(exc.value), exc.value.rule) == (f"{seat.name} is not alive.", "L-DEATH-1")


# ------------------------------------------------------------------------------------------------------------
# Penalty bans (L-INBOX-18, L-STAFF-3)
# ------------------------------------------------------------------------------------------------------------

def test_the_arbiter_bans_a_resident_in_named_inboxes_until_a_time_L_INBOX_18(demo):
    seat = demo.seat("honest")
    now = timezone.now()
    until = now + timedelta(hours=3)
    city, personal = get(demo, K.CITY, 1), Inbox.objects.get(kind=K.PERSONAL, resident=seat)
    rows = membership_services.do_penalty_ban(seat, [city, personal], until, "Оскорбление", acting_user=fresh(demo.arbiter), now=now)
    assert [(m.inbox_id, m.state, m.banned_until, m.reason) for m in rows] == [
        (city.pk, "banned", until, "Оскорбление"), (personal.pk, "banned", until, "Оскорбление")]
    user = fresh(demo.honest)
    assert policies.can_read_inbox(user, city)
    assert not policies.can_post_in_inbox(user, city, now + timedelta(hours=2))
    assert policies.can_post_in_inbox(user, city, until)
    event = GameEvent.objects.filter(kind="membership.penalty_banned").latest("id")
    assert event.actor == demo.arbiter and event.payload["inboxes"] == [city.pk, personal.pk]
    # A later, shorter penalty does not shorten the running one.
    membership_services.do_penalty_ban(seat, [city], now + timedelta(hours=1), "ещё", acting_user=fresh(demo.arbiter), now=now)
    assert Membership.objects.get(inbox=city, resident=seat).banned_until == until


@pytest.mark.parametrize("case, error_class, message, rule", [
    ("tribune", NotAllowed, "Only the Supreme Arbiter may impose a penalty ban.", "L-STAFF-3"),
    ("mafia", InvalidInput, ("Penalty bans apply only to inboxes of these kinds: City, Personal, Execution voting, "
                             "Election precinct, Judge removal demand, Stage, Impeachment, Cemetery."), "L-INBOX-18"),
    ("past", InvalidInput, "The end of the ban must be in the future.", "L-INBOX-18"),
    ("no reason", InvalidInput, "Give the reason for the penalty.", "L-STAFF-3"),
    ("not a member", InvalidInput, "{name} is not in {title}.", "L-INBOX-18"),
])
def test_penalty_ban_refusals_change_nothing_L_INBOX_18_L_STAFF_3(demo, case, error_class, message, rule):
    seat = demo.seat("mafioso")
    now = timezone.now()
    city = get(demo, K.CITY, 1)
    inboxes, until, reason, actor = [city], now + timedelta(hours=1), "Клевета", fresh(demo.arbiter)
    if case == "tribune":
        actor = fresh(demo.tribune1)
    elif case == "mafia":
        inboxes = [city, get(demo, K.MAFIA, 1)]
    elif case == "past":
        until = now - timedelta(minutes=1)
    elif case == "no reason":
        reason = "  "
    elif case == "not a member":
        inboxes = [city, get(demo, K.CITY, 2)]
    before = snapshot(seat)
    with override("en"), pytest.raises(error_class) as exc:
        membership_services.do_penalty_ban(seat, inboxes, until, reason, acting_user=actor, now=now)
    assert str(exc.value) == message.format(name=seat.name, title=get(demo, K.CITY, 2).title)
    assert exc.value.rule == rule
    assert snapshot(seat) == before


def test_a_penalty_ban_refusal_names_the_kinds_the_games_ruleset_declares_in_the_games_words_L_INBOX_18(
        demo, monkeypatch):
    spec = ruleset_of(demo.game)
    monkeypatch.setattr(spec, "policy_grants", MappingProxyType({**spec.policy_grants,
                                                                 "penalty_ban_kinds": frozenset({K.STAGE, K.CITY})}))
    seat, now = demo.seat("mafioso"), timezone.now()
    before = snapshot(seat)
    with override("ru"), pytest.raises(InvalidInput) as exc:
        membership_services.do_penalty_ban(seat, [get(demo, K.MAFIA, 1)], now + timedelta(hours=1), "Клевета",
                                           acting_user=fresh(demo.arbiter), now=now)
    assert str(exc.value) == "Штрафной бан действует только в ящиках этих видов: Город, Сцена."
    assert exc.value.rule == "L-INBOX-18"
    assert snapshot(seat) == before
