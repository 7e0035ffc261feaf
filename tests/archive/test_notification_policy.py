"""Notifications respect the access policy at send time (L-INBOX-20, L-STAFF-6, L-DEATH, L-REPLACE-1): for every
persona, a notification is written only for a reader the policy lets read its message then, and shown or e-mailed
only if the policy still does when it is: never after a death (for what was posted after it), a removal from the
inbox, or a replacement (the old account). Each refusal has a control reader who does get it, so a test fails if
nobody is ever told."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.utils import timezone

from archive import notifications, services
from archive.models import Notification, NotificationKind
from inboxes import membership_services, policies, posting
from inboxes import services as inbox_services
from inboxes.membership_services import do_replace_player
from inboxes.models import Message
from tests.archive.conftest import MAFIA_PHRASE
from tests.conftest import PERSONA_NAMES, fresh

MINUTE = timedelta(minutes=1)


def _email_now(*users) -> None:
    """Every kind by e-mail at once for ``users``, so that what is written is also what would be mailed."""
    for user in users:
        services.do_update_notification_settings(acting_user=fresh(user), channels={k: "email_now" for k in NotificationKind.values})


def _told(message: Message) -> set[int]:
    return set(Notification.objects.filter(message=message).values_list("user_id", flat=True))


def _mailed_to() -> set[str]:
    return {address for m in mail.outbox for address in m.to}


def _mail_of(user) -> str:
    """Everything e-mailed to ``user`` since the outbox was cleared."""
    return "\n".join(m.body for m in mail.outbox if user.email in m.to)


def _all_names(demo) -> str:
    """A text that mentions every persona with a seat or a role, by ``@`` + each of their names."""
    names = set()
    for name in PERSONA_NAMES:
        user = getattr(demo, name)
        if getattr(user, "is_authenticated", False):
            names |= set(notifications.mention_names(user))
    return " ".join(f"@{n}" for n in sorted(names))


@pytest.mark.parametrize("persona", PERSONA_NAMES)
def test_a_mafia_message_naming_everyone_tells_only_the_readers_the_policy_allows_L_INBOX_20(world, persona):
    now = timezone.now() + MINUTE
    message = posting.do_post_message(world.inbox("mafia1"), f"{MAFIA_PHRASE} {_all_names(world.demo)}",
                                             acting_user=fresh(world.demo.consigliere), now=now)
    services.do_collect_notifications(now=now + MINUTE)
    user = getattr(world.demo, persona)
    expected = (getattr(user, "is_authenticated", False) and user.pk != world.demo.consigliere.pk
                and policies.readable_messages(fresh(user)).filter(pk=message.pk).exists())
    assert (user.pk in _told(message)) is expected
    # Exactly the city's living mafia (the author left out) is told; nobody else, whatever their role.
    mafia = {m.resident.user_id for m in world.inbox("mafia1").memberships.select_related("resident")
             if m.resident.status == "alive"}
    assert _told(message) == mafia - {world.demo.consigliere.pk} != set()
    if expected:  # named in it: a mention (members not named are told of a new message in their inbox)
        assert Notification.objects.get(message=message, user=user).kind == NotificationKind.MENTION
    if getattr(user, "is_authenticated", False):
        shown = notifications.notification_list_for(fresh(user))
        assert any(n.notification.message_id == message.pk for n in shown) is expected
        assert all(MAFIA_PHRASE not in n.text for n in shown)


def test_a_dead_member_is_told_nothing_posted_after_the_death_L_INBOX_20_L_DEATH_1(world):
    members = [m.resident for m in world.inbox("mafia1").memberships.select_related("resident__user")
               if m.resident.status == "alive" and m.resident.user_id != world.demo.consigliere.pk]
    victim, control = world.demo.seat("mafioso"), next(r for r in members if r.user_id != world.demo.mafioso.pk)
    _email_now(world.demo.mafioso, control.user)
    now = timezone.now() + MINUTE
    membership_services.do_kill_resident(victim, "killed", acting_user=None, now=now)
    after = posting.do_post_message(world.inbox("mafia1"), f"After his death. @{victim.name}",
                                           acting_user=fresh(control.user), now=now + MINUTE)
    mail.outbox.clear()
    services.do_send_notifications(now=now + 2 * MINUTE)
    living = {r.user_id for r in members if r.pk != victim.pk} | {world.demo.consigliere.pk}  # he reads it too
    assert _told(after) == living - {control.user_id} and world.demo.mafioso.pk not in _told(after)
    mafia_link = f"/inboxes/{world.inbox('mafia1').public_id}/"
    assert mafia_link not in _mail_of(world.demo.mafioso)
    assert all(n.notification.message_id != after.pk
               for n in notifications.notification_list_for(fresh(world.demo.mafioso)))
    reply = posting.do_post_message(world.inbox("mafia1"), "And the living hear it.",
                                           acting_user=fresh(world.demo.consigliere), now=now + 3 * MINUTE)
    services.do_send_notifications(now=now + 4 * MINUTE)
    assert control.user_id in _told(reply) and world.demo.mafioso.pk not in _told(reply)  # control: a living member
    assert mafia_link in _mail_of(control.user) and mafia_link not in _mail_of(world.demo.mafioso)


def test_a_member_removed_after_the_notification_was_written_gets_nothing_at_send_time_L_INBOX_17(world):
    secret = world.inbox("secret4")
    _email_now(world.demo.commissar, world.demo.mafioso)
    for user in (world.demo.commissar, world.demo.mafioso):
        services.do_update_notification_settings(acting_user=fresh(user), channels={"reply": "digest_hourly"})
    now = timezone.now() + MINUTE
    message = posting.do_post_message(secret, "Meet at noon.", acting_user=fresh(world.demo.honest), now=now)
    services.do_collect_notifications(now=now + MINUTE)
    readers = {u.pk for u in policies.readers_of_inbox(secret)
               if policies.readable_messages(u).filter(pk=message.pk).exists()} - {world.demo.honest.pk}
    assert _told(message) == readers and {world.demo.commissar.pk, world.demo.mafioso.pk} <= readers
    inbox_services.do_remove_member(secret, world.demo.seat("commissar"), acting_user=fresh(world.demo.honest),
                                    now=now + 2 * MINUTE)
    mail.outbox.clear()
    services.do_send_notifications(now=now + 3 * MINUTE)
    assert world.demo.mafioso.email in _mailed_to()  # control: the member still in it
    assert world.demo.commissar.email not in _mailed_to()
    removed = Notification.objects.get(message=message, user=world.demo.commissar)
    assert removed.withheld_at == now + 3 * MINUTE and removed.emailed_at is None
    assert notifications.notification_list_for(fresh(world.demo.commissar)) == []
    assert message.pk in [n.notification.message_id for n in notifications.notification_list_for(fresh(world.demo.mafioso))]


def test_after_a_replacement_the_old_account_gets_nothing_and_the_new_one_is_told_L_REPLACE_1(world):
    personal = world.inbox("personal:winner")
    old_user = world.demo.honest
    new_user = get_user_model().objects.create_user("taker", "taker@example.org", "x", display_name="Taker")
    _email_now(old_user, new_user)
    now = timezone.now() + MINUTE
    before = posting.do_post_message(personal, "A word from your Tribune.", acting_user=fresh(world.demo.tribune1),
                                            now=now)
    services.do_collect_notifications(now=now + MINUTE)
    assert _told(before) == {old_user.pk}
    do_replace_player(world.demo.seat("honest"), new_user, acting_user=fresh(world.demo.procurator), now=now + 2 * MINUTE)
    mail.outbox.clear()
    services.do_send_notifications(now=now + 3 * MINUTE)
    assert old_user.email not in _mailed_to()
    assert Notification.objects.get(message=before, user=old_user).withheld_at is not None
    assert notifications.notification_list_for(fresh(old_user)) == []
    after = posting.do_post_message(personal, "Welcome, Taker.", acting_user=fresh(world.demo.tribune1),
                                           now=now + 4 * MINUTE)
    services.do_send_notifications(now=now + 5 * MINUTE)
    assert old_user.pk not in _told(after) and new_user.pk in _told(after)
    assert old_user.email not in _mailed_to() and new_user.email in _mailed_to()
    assert all(n.notification.user_id == new_user.pk for n in notifications.notification_list_for(fresh(new_user)))


def test_a_commissar_offer_is_told_to_its_candidate_only_and_not_after_a_replacement_L_COMM_2(db):
    from rulesets.lepra.models import CommissarOffer
    from rulesets.lepra.setup.services import do_offer_commissar
    from tests.rulesets.lepra.setup.setup_helpers import FixedChoice
    from tests.setup_factory import build_game

    built = build_game("numbers", slug="notify-offer", cities=2, size=10)
    candidate = built.game.residents.filter(alignment="honest").select_related("user", "city").first()
    others = list(built.game.residents.exclude(pk=candidate.pk).select_related("user")[:3])
    now = timezone.now() + MINUTE
    offer = do_offer_commissar(candidate.city, acting_user=built.procurator, rng=FixedChoice(candidate), now=now)
    mail.outbox.clear()
    assert services.do_send_notifications(now=now + MINUTE) == 1  # offers go by e-mail at once by default
    assert _mailed_to() == {candidate.user.email}
    assert set(offer.notifications.values_list("user_id", flat=True)) == {candidate.user_id}
    shown = notifications.notification_list_for(fresh(candidate.user))
    assert [(n.notification.kind, n.url) for n in shown] == [
        (NotificationKind.OFFER, f"/games/{built.game.slug}/offers/{offer.public_id}/")]
    for other in [*others, built.procurator]:
        assert notifications.notification_list_for(fresh(other)) == []
    taker = get_user_model().objects.create_user("taker2", "taker2@example.org", "x", display_name="Taker Two")
    do_replace_player(candidate, taker, acting_user=built.procurator, now=now + 2 * MINUTE)
    assert notifications.notification_list_for(fresh(candidate.user)) == []  # the old account: nothing
    assert CommissarOffer.objects.get(pk=offer.pk).answered_at is None


def test_the_notifications_page_lists_marks_shown_read_and_marks_all_read_explicitly_L_INBOX_20(world, client):
    now = timezone.now() + MINUTE
    message = posting.do_post_message(world.inbox("personal:winner"), "Are you there?",
                                             acting_user=fresh(world.demo.tribune1), now=now)
    services.do_collect_notifications(now=now + MINUTE)
    client.force_login(world.demo.honest)
    page = client.get("/me/notifications/").content.decode()
    assert f'href="/inboxes/{world.inboxes["personal:winner"].public_id}/"' in page and 'class="notification unread"' in page
    assert " MSK</time>" in page and "Are you there?" not in page  # never quotes the message
    assert Notification.objects.get(message=message, user=world.demo.honest).read_at is not None  # shown: read
    Notification.objects.filter(user=world.demo.honest).update(read_at=None)
    assert client.post("/me/notifications/").status_code == 302
    assert not Notification.objects.filter(user=world.demo.honest, read_at__isnull=True).exists()
    client.force_login(world.demo.outsider)
    assert "/inboxes/" not in client.get("/me/notifications/").content.decode()
