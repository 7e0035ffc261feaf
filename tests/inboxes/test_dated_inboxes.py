"""Knowledge is dated in the inboxes whose content is their members' alone (RULES.md L-STAFF-6 [interp],
L-INBOX-13, L-INBOX-15; Lepra's ``dated_kinds``): a dead seat reads a secret inbox or a check channel only as it
was at its death. It reads the inbox it was a member of then and the messages received up to then; it reads
nothing of an inbox or membership made later, or of a message posted later: in the four forms of the policy, by
id, on the thread page, in the live poll, in unread badges and in notifications. Each refusal has a living control
member who does get it, so a test fails if nobody is ever told. The services refuse to open a secret inbox by or
with the dead.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.http import Http404
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from archive import notifications
from archive import services as archive_services
from archive.models import Notification, NotificationKind
from cities.models import GameStatus
from cities.services import do_set_game_status
from inboxes import membership_services, policies, posting, selectors, services
from inboxes.forms import SecretInboxForm
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import NotAllowed, WrongState
from tests.conftest import fresh

MINUTE = timedelta(minutes=1)
BEFORE = "Сказано до смерти: встречаемся в полдень."
AFTER = "Сказано после смерти: план меняется."


def _forms(user, inbox: Inbox, message: Message | None = None) -> dict:
    """The policy's four forms (and the by-id one) about ``user`` and ``inbox`` (and ``message``)."""
    user = fresh(user)
    try:
        by_id = policies.access_inbox_by_id(fresh(user), inbox.public_id).pk == inbox.pk
    except Http404:
        by_id = False
    out = {
        "can_read": policies.can_read_inbox(user, inbox),
        "listed": policies.readable_inboxes(user, inbox.game).filter(pk=inbox.pk).exists(),
        "audience": policies.readers_of_inbox(inbox).filter(pk=user.pk).exists(),
        "by_id": by_id,
    }
    if message is not None:
        out["message"] = policies.readable_messages(user).filter(pk=message.pk).exists()
    return out


def _told(message: Message) -> set[int]:
    return set(Notification.objects.filter(message=message).values_list("user_id", flat=True))


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def talk(demo):
    """A secret inbox of the honest resident (organizer), the mafioso and the judge, a word said in it, then the
    mafioso's death, then a word said after it. Returns (inbox, before, after, death)."""
    now = timezone.now() + MINUTE
    inbox = services.do_create_secret_inbox(demo.game, title="Тайна троих",
                                            members=[demo.seat("mafioso"), demo.seat("judge")],
                                            acting_user=fresh(demo.honest), now=now)
    before = posting.do_post_message(inbox, BEFORE, acting_user=fresh(demo.honest), now=now + MINUTE)
    death = now + 2 * MINUTE
    membership_services.do_kill_resident(demo.seat("mafioso"), "killed", acting_user=None, now=death)
    after = posting.do_post_message(inbox, AFTER, acting_user=fresh(demo.honest), now=death + MINUTE)
    inbox = Inbox.objects.select_related("game").get(pk=inbox.pk)
    return inbox, before, after, death


def test_a_dead_member_reads_the_secret_inbox_as_it_was_at_his_death_in_every_form_L_STAFF_6(demo, talk):
    inbox, before, after, _death = talk
    dead, living = demo.mafioso, demo.judge
    # The inbox and what was said before the death: still his (he was a member then).
    assert _forms(dead, inbox, before) == {"can_read": True, "listed": True, "audience": False, "by_id": True,
                                           "message": True}
    # What was said after it: not his; the living member reads both.
    assert _forms(dead, inbox, after)["message"] is False
    assert _forms(living, inbox, after) == {"can_read": True, "listed": True, "audience": True, "by_id": True,
                                            "message": True}
    assert selectors.latest_message_time(fresh(dead), inbox) == before.received_at
    assert selectors.latest_message_time(fresh(living), inbox) == after.received_at


def test_a_secret_inbox_made_after_a_death_with_the_dead_among_its_rows_reaches_none_of_his_forms_L_STAFF_6(demo):
    """The rows as an older site wrote them (the service now refuses the dead): a secret inbox opened after the
    death with the dead seat among its members. The membership dates from after the death: it gives nothing."""
    now = timezone.now() + MINUTE
    membership_services.do_kill_resident(demo.seat("resident2"), "killed", acting_user=None, now=now)
    inbox = services.do_create_inbox(demo.game, LepraInboxKind.SECRET, title="Сговор после похорон",
                                     members=[demo.seat("honest"), demo.seat("resident2")], acting_user=None,
                                     now=now + MINUTE)
    message = posting.do_post_message(inbox, AFTER, acting_user=fresh(demo.honest), now=now + 2 * MINUTE)
    inbox = Inbox.objects.select_related("game").get(pk=inbox.pk)
    assert _forms(demo.resident2, inbox, message) == {"can_read": False, "listed": False, "audience": False,
                                                      "by_id": False, "message": False}
    assert _forms(demo.honest, inbox)["can_read"] is True  # control: the living member
    assert _client(demo.resident2).get(reverse("inbox_thread", args=[inbox.public_id])).status_code == 404
    archive_services.do_collect_notifications(now=now + 3 * MINUTE)
    assert demo.resident2.pk not in _told(message)
    page = _client(demo.resident2).get(reverse("my_inboxes", args=[demo.game.slug])).content.decode()
    assert "Сговор после похорон" not in page


def test_pages_live_poll_and_unread_badge_stop_at_the_death_of_the_reader_L_STAFF_6(demo, talk):
    inbox, before, after, _death = talk
    dead = _client(demo.mafioso)
    thread = dead.get(reverse("inbox_thread", args=[inbox.public_id]) + "?page=last").content.decode()
    assert BEFORE in thread and AFTER not in thread
    live = dead.get(reverse("inbox_live", args=[inbox.public_id]) + "?after=1")
    assert (live.status_code, live.content) == (204, b"")  # nothing new for him: the word after is not his
    living = _client(demo.judge)
    live = living.get(reverse("inbox_live", args=[inbox.public_id]) + "?after=1").content.decode()
    assert AFTER in live  # control: the living member gets it without reloading
    # Unread: the dead counts what he never read of his time (the word before his death), never what came after.
    listed = {i.pk: i.unread for i in selectors.inbox_list_for(fresh(demo.mafioso), demo.game)}
    assert listed[inbox.pk] == 0  # he opened the thread above: the word before the death is read
    posting.do_post_message(inbox, "Ещё одно слово после смерти.", acting_user=fresh(demo.honest),
                             now=timezone.now() + 10 * MINUTE)
    listed = {i.pk: i.unread for i in selectors.inbox_list_for(fresh(demo.mafioso), demo.game)}
    assert listed[inbox.pk] == 0
    judge_unread = {i.pk: i.unread for i in selectors.inbox_list_for(fresh(demo.judge), demo.game)}[inbox.pk]
    assert judge_unread == 3  # control: the living member never opened it (a poll after an unread marks nothing)
    fresh_dead = {i.pk: i for i in selectors.inbox_list_for(fresh(demo.mafioso), demo.game)}[inbox.pk]
    assert fresh_dead.last_activity == before.received_at
    # The top bar's badge sums the same counts: the dead's is the same before and after the word.
    total = sum(i.unread for i in selectors.inbox_list_for(fresh(demo.mafioso), demo.game))
    badge = dead.get(reverse("unread_badge", args=[demo.game.slug]))
    assert badge.status_code == 200 and (str(total) in badge.content.decode() or total == 0)


def test_a_dead_member_is_told_nothing_posted_after_his_death_in_a_secret_inbox_L_INBOX_20(demo, talk):
    inbox, before, after, death = talk
    archive_services.do_update_notification_settings(acting_user=fresh(demo.mafioso),
                                                     channels={k: "site" for k in NotificationKind.values})
    archive_services.do_collect_notifications(now=death + 2 * MINUTE)
    assert demo.judge.pk in _told(after)  # control
    assert demo.mafioso.pk not in _told(after)
    assert not any(n.notification.message_id == after.pk
                   for n in notifications.notification_list_for(fresh(demo.mafioso)))


def test_the_members_of_a_dead_readers_secret_inbox_are_those_of_his_death_L_STAFF_6(demo, talk):
    inbox, _before, _after, death = talk
    services.do_add_member(inbox, demo.seat("resident2"), acting_user=fresh(demo.honest), now=death + 5 * MINUTE)
    names = {m.resident.name for m in selectors.thread_page_for(fresh(demo.mafioso), inbox, None).members}
    assert demo.seat("resident2").name not in names and demo.seat("judge").name in names
    names = {m.resident.name for m in selectors.thread_page_for(fresh(demo.judge), inbox, None).members}
    assert demo.seat("resident2").name in names  # control: the living see the new member


def test_a_dead_commissar_reads_no_check_made_after_his_death_in_his_citys_channel_L_INBOX_15(demo):
    now = timezone.now() + MINUTE
    commissar = demo.seat("commissar")
    channel = services.do_create_inbox(demo.game, LepraInboxKind.CHECK, title="Check channel", city=commissar.city,
                                       banned=[commissar], acting_user=None, now=now)
    asked = posting.do_post_message(channel, "Проверка при жизни.", acting_user=fresh(demo.consigliere),
                                     now=now + MINUTE)
    membership_services.do_kill_resident(commissar, "killed", acting_user=None, now=now + 2 * MINUTE)
    later = posting.do_post_message(channel, "Проверка нового комиссара.", acting_user=fresh(demo.consigliere),
                                     now=now + 3 * MINUTE)
    channel = Inbox.objects.select_related("game").get(pk=channel.pk)
    assert _forms(demo.commissar, channel, asked)["message"] is True
    assert _forms(demo.commissar, channel, later) == {"can_read": True, "listed": True, "audience": False,
                                                      "by_id": True, "message": False}
    assert _forms(demo.consigliere, channel, later)["message"] is True  # control: he reads the channel by role


def test_after_the_game_the_dead_members_dating_ends_with_the_knowledge_matrix_L_ARCH_2(demo, talk):
    inbox, _before, after, _death = talk
    do_set_game_status(demo.game, GameStatus.FINISHED, acting_user=fresh(demo.procurator))
    inbox = Inbox.objects.select_related("game").get(pk=inbox.pk)
    assert _forms(demo.mafioso, inbox, after) == {"can_read": True, "listed": True, "audience": True,
                                                  "by_id": True, "message": True}
    assert _forms(demo.outsider, inbox, after)["can_read"] is False  # still closed without every consent


def test_the_dead_neither_open_nor_are_invited_to_a_secret_inbox_L_DEATH_1_L_STAFF_6(demo):
    now = timezone.now() + MINUTE
    membership_services.do_kill_resident(demo.seat("resident2"), "killed", acting_user=None, now=now)
    count = Inbox.objects.filter(kind=LepraInboxKind.SECRET).count()
    with pytest.raises(WrongState, match="^Abrikos мёртв: секретный ящик, открытый сейчас, — новость, которой мёртвые не"):
        services.do_create_secret_inbox(demo.game, title="С мёртвым", members=[demo.seat("resident2")],
                                        acting_user=fresh(demo.honest), now=now + MINUTE)
    with pytest.raises(NotAllowed, match="^У мёртвых нет голоса среди живых: они не могут открыть секретный ящик.$"):
        services.do_create_secret_inbox(demo.game, title="От мёртвого", members=[demo.seat("honest")],
                                        acting_user=fresh(demo.resident2), now=now + MINUTE)
    with pytest.raises(WrongState, match="^Abrikos мёртв: секретный ящик"):  # staff cannot invite the dead either
        services.do_create_secret_inbox(demo.game, title="Прокурор и мёртвый", members=[demo.seat("resident2")],
                                        acting_user=fresh(demo.procurator), now=now + MINUTE)
    assert Inbox.objects.filter(kind=LepraInboxKind.SECRET).count() == count
    # The form offers the living only (legal choices), and posting the dead's id is the form's error.
    form = SecretInboxForm(game=demo.game, exclude=demo.seat("honest"))
    offered = {r.pk for r in form.fields["members"].queryset}
    assert demo.seat("resident2").pk not in offered and demo.seat("judge").pk in offered
    response = _client(demo.honest).post(reverse("secret_new", args=[demo.game.slug]),
                                         {"title": "С мёртвым", "members": [demo.seat("resident2").public_id]})
    assert response.status_code == 400
    assert Inbox.objects.filter(kind=LepraInboxKind.SECRET).count() == count
