"""State decides, flags don't (DESIGN.md "The access policy"; RULES.md L-DEATH-1, L-SPIRIT-2, L-INBOX-17).

A dead seat's place in an inbox of the living follows from its death: every moderation action of the staff
console (ban, unban, remove, add back), alone or in bulk with living members, applied to a dead seat there is
refused with the reason and changes nothing (memberships, audit log); the services refuse the same; and the
policy refuses the dead a post among the living whatever a membership row says. Remove + add back is no unban
for the living either.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.translation import override

from cities.models import GameEvent
from inboxes import membership_services, policies, services
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import WrongState
from tests.admin_keys import post_console_action
from tests.conftest import fresh
from tests.support.staff_console import CHANGELIST, flashed, staff_client

K = LepraInboxKind
DEAD_REFUSAL = "{name} is dead: the dead have no voice in an inbox of the living, and no moderation action changes their place in it."
#: The same refusal as the console of the (Lepra) demo shows it: in the game's language.
CONSOLE_DEAD_REFUSAL = ("{name} мёртв: у мёртвых нет голоса в ящике живых, и никакое действие модератора не меняет "
                        "их место в нём.")
ACTIONS = ["ban_members", "unban_members", "remove_members", "add_back_members"]


def thread_url(inbox: Inbox) -> str:
    from django.urls import reverse

    getter = getattr(inbox, "get_absolute_url", None)
    return getter() if getter else reverse("inbox_thread", args=[inbox.public_id])


def current(demo, kind: str, city: int | None = None) -> Inbox:
    qs = Inbox.objects.filter(game=demo.game, kind=kind, rolled_over_at__isnull=True)
    return qs.get(city__number=city) if city else qs.get()


def snapshot(game) -> list[tuple]:
    return sorted(Membership.objects.filter(inbox__game=game).values_list("pk", "state", "banned_until", "reason"))


@pytest.fixture
def dead_mafioso(demo):
    """The demo's mafioso of city 1 killed at night (L-DEATH-1): banned in the city inbox, removed from the mafia
    inbox, a member of the cemetery. Returns the demo."""
    membership_services.do_kill_resident(demo.seat("mafioso"), "killed", acting_user=None, now=timezone.now())
    return demo


def _act(client, action, memberships, **extra):
    """``action`` on ``memberships``, confirmed; the ban with its form submitted at the action's own URL."""
    return post_console_action(client, CHANGELIST["membership"], action, [m.public_id for m in memberships],
                               submit=action == "ban_members", confirmed="yes", **extra)


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("persona, kind", [("tribune1", K.CITY), ("procurator", K.CITY), ("consigliere", K.MAFIA)])
def test_every_console_action_on_a_dead_seat_in_a_living_inbox_is_refused_and_changes_nothing_L_DEATH_1(
        dead_mafioso, persona, kind, action):
    demo = dead_mafioso
    inbox = current(demo, kind, 1)
    dead = Membership.objects.select_related("inbox", "resident").get(inbox=inbox, resident=demo.seat("mafioso"))
    before, events = snapshot(demo.game), GameEvent.objects.filter(game=demo.game).count()
    extra = {"until": "", "reason": "flood"} if action == "ban_members" else {}
    response = _act(staff_client(getattr(demo, persona)), action, [dead], **extra)
    assert response.status_code == 200
    assert flashed(response) == [CONSOLE_DEAD_REFUSAL.format(name=dead.resident.name)]
    assert snapshot(demo.game) == before
    assert GameEvent.objects.filter(game=demo.game).count() == events
    # Whatever was tried, the dead still cannot post there (L-DEATH-1).
    assert policies.can_post_in_inbox(fresh(demo.mafioso), inbox) is False


@pytest.mark.parametrize("action", ["unban_members", "add_back_members"])
def test_a_bulk_action_serves_the_living_and_refuses_the_dead_seat_L_DEATH_1(dead_mafioso, action):
    """Bulk: the dead seat and a living member selected together; the living one is served, the dead one refused
    with its reason, its row untouched."""
    demo = dead_mafioso
    city1 = current(demo, K.CITY, 1)
    client = staff_client(demo.tribune1)
    living = Membership.objects.select_related("inbox", "resident").get(inbox=city1, resident=demo.seat("honest"))
    dead = Membership.objects.select_related("inbox", "resident").get(inbox=city1, resident=demo.seat("mafioso"))
    prepare = "ban_members" if action == "unban_members" else "remove_members"
    _act(client, prepare, [living], **({"until": "", "reason": "flood"} if prepare == "ban_members" else {}))
    dead_before = Membership.objects.filter(pk=dead.pk).values_list("state", "banned_until", "since").get()
    response = _act(client, action, [dead, living])
    messages = flashed(response)
    assert CONSOLE_DEAD_REFUSAL.format(name=dead.resident.name) in messages
    assert len(messages) == 2
    assert Membership.objects.filter(pk=dead.pk).values_list("state", "banned_until", "since").get() == dead_before
    living.refresh_from_db()
    assert living.state == MembershipState.MEMBER


def test_the_dead_cannot_post_among_the_living_even_with_a_member_row_L_DEATH_1(dead_mafioso):
    """Even a membership row set to "member" behind the services' back (a data fix, an old bug) gives the dead no
    voice: the policy reads the seat's state, not the flag."""
    demo = dead_mafioso
    city1 = current(demo, K.CITY, 1)
    Membership.objects.filter(inbox=city1, resident=demo.seat("mafioso")).update(state=MembershipState.MEMBER)
    user = fresh(demo.mafioso)
    assert policies.can_read_inbox(user, city1) is True
    with override("en"):
        reason = policies.post_denial_reason(user, city1)
    assert reason == ("The dead have no voice among the living: they post only in the cemetery, their personal "
                      "inbox and on a stage opened for them.")
    before = Message.objects.filter(inbox=city1).count()
    from django.test import Client

    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(demo.mafioso)
    response = client.post(thread_url(city1), {"text": "I am back!"})
    assert response.status_code == 403
    assert Message.objects.filter(inbox=city1).count() == before
    # The cemetery and the personal inbox still take the dead's posts.
    assert policies.can_post_in_inbox(user, current(demo, K.CEMETERY)) is True
    assert policies.can_post_in_inbox(user, Inbox.objects.get(kind=K.PERSONAL, resident=demo.seat("mafioso"))) is True


def test_the_services_refuse_unban_and_add_back_of_the_dead_L_DEATH_1(dead_mafioso):
    demo = dead_mafioso
    seat = demo.seat("mafioso")
    with override("en"), pytest.raises(WrongState) as unban:
        services.do_unban_member(current(demo, K.CITY, 1), seat, acting_user=fresh(demo.tribune1))
    assert str(unban.value) == DEAD_REFUSAL.format(name=seat.name)
    with pytest.raises(WrongState):
        services.do_add_member(current(demo, K.MAFIA, 1), seat, acting_user=fresh(demo.consigliere))
    assert Membership.objects.get(inbox=current(demo, K.MAFIA, 1), resident=seat).state == MembershipState.REMOVED
    # The dead may still be moderated where they do speak: the cemetery's organizer bans a dead flooder.
    services.do_ban_member(current(demo, K.CEMETERY), seat, acting_user=fresh(demo.procurator), reason="flood")


def test_a_spirit_keeps_its_votes_but_no_unban_opens_the_city_inbox_L_SPIRIT_2(demo):
    seat = demo.seat("honest")
    voting = services.do_create_inbox(demo.game, K.VOTING, title="Голосование: X", city=seat.city, acting_user=None,
                                      resident=demo.seat("judge"), members=[seat])
    membership_services.do_kill_resident(seat, "killed", spirit=True, acting_user=None)
    user = fresh(demo.honest)
    assert policies.can_post_in_inbox(user, voting) is True
    assert policies.post_denial_reason(user, current(demo, K.CITY, 1)) is not None
    with override("en"), pytest.raises(WrongState) as refused:
        services.do_unban_member(current(demo, K.CITY, 1), seat, acting_user=fresh(demo.tribune1))
    assert "is a spirit" in str(refused.value)


def test_remove_and_add_back_keeps_a_running_ban_L_INBOX_18(demo):
    """Remove followed by add back is no unban: the membership comes back banned, with the same end."""
    city1 = current(demo, K.CITY, 1)
    seat = demo.seat("honest")
    until = timezone.now() + timedelta(days=1)
    tribune = fresh(demo.tribune1)
    services.do_ban_member(city1, seat, acting_user=tribune, until=until, reason="flood")
    services.do_remove_member(city1, seat, acting_user=tribune)
    membership = services.do_add_member(city1, seat, acting_user=tribune)
    assert (membership.state, membership.banned_until) == (MembershipState.BANNED, until)
    # A ban that ran out while removed is not brought back.
    services.do_unban_member(city1, seat, acting_user=tribune)
    services.do_ban_member(city1, seat, acting_user=tribune, until=until)
    services.do_remove_member(city1, seat, acting_user=tribune)
    later = services.do_add_member(city1, seat, acting_user=tribune, now=until + timedelta(minutes=1))
    assert (later.state, later.banned_until) == (MembershipState.MEMBER, None)


def test_an_imprisoned_seat_keeps_only_its_personal_inbox_whatever_its_rows_say_M21(demo):
    """An imprisoned seat (M21) is not living: it posts only in its personal inbox and on a stage, whatever its
    membership rows say, and no moderation action changes its place in the city inbox."""
    from cities.models import Resident

    seat = demo.seat("judge")
    Resident.objects.filter(pk=seat.pk).update(status="imprisoned")
    city1 = current(demo, K.CITY, 1)
    user = fresh(demo.judge)
    assert Membership.objects.get(inbox=city1, resident=seat).state == MembershipState.MEMBER
    assert policies.can_read_inbox(user, city1) is True
    assert policies.can_post_in_inbox(user, city1) is False
    assert policies.can_post_in_inbox(user, Inbox.objects.get(kind=K.PERSONAL, resident=seat)) is True
    with override("en"), pytest.raises(WrongState) as refused:
        services.do_ban_member(city1, seat, acting_user=fresh(demo.tribune1))
    assert "is imprisoned" in str(refused.value)


def test_the_arbiters_penalty_ban_of_a_dead_seat_in_the_city_inbox_is_refused_and_records_nothing_L_STAFF_3(
        dead_mafioso):
    demo = dead_mafioso
    seat = demo.seat("mafioso")
    before, events = snapshot(demo.game), GameEvent.objects.filter(game=demo.game).count()
    with override("en"), pytest.raises(WrongState) as refused:
        membership_services.do_penalty_ban(seat, [current(demo, K.CITY, 1)], timezone.now() + timedelta(days=1), "insult",
                                acting_user=fresh(demo.arbiter))
    assert str(refused.value) == DEAD_REFUSAL.format(name=seat.name)
    assert (snapshot(demo.game), GameEvent.objects.filter(game=demo.game).count()) == (before, events)
