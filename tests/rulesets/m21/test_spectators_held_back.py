"""The spectators' thread is for those out for good (RULES.md M-SETUP-3 [interp]): an imprisoned player whom a
bust-out could still bring back (a jailbreaker alive with the action unused) neither reads nor posts there until that
can no longer happen; then they join by themselves. Asked through the policy's four forms and over HTTP."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse

from cities.models import LifeStatus
from inboxes import policies
from inboxes.models import Message
from rulesets.m21.kinds import M21InboxKind
from inboxes.posting import do_post_message
from rulesets.m21 import night_services as ns
from rulesets.m21 import services
from rulesets.m21.bust_out import seats_held_back
from rulesets.m21.console_services import do_modkill_m21_player
from tests.conftest import fresh

from .day_helpers import build_game, make_user
from tests.rulesets.m21.night_helpers import end_night, to_night

pytestmark = pytest.mark.django_db

EIGHT = {"citizen": 6, "jailbreaker": 1, "goon": 1}
NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi")


def game_with_a_prisoner(**kwargs):
    table = build_game(NAMES, EIGHT, slug="m21-held-back", **kwargs)
    prisoner = table.names_of_roles("citizen")[0]
    for name in [n for n in NAMES if n != prisoner][:5]:  # 5 of 8: the hammer (M-VOTE-3)
        table.post(name, f"##VOTE {prisoner}\n##END")
    table.run_clock(table.now + timedelta(minutes=1))
    night = ns.open_night(table.game)
    assert table.seat(prisoner).status == LifeStatus.IMPRISONED
    spectators = services.thread_of(table.game, M21InboxKind.SPECTATORS)
    watcher = make_user("Watcher")
    services.do_join_as_spectator(table.game, acting_user=watcher, now=table.tick())
    said = do_post_message(spectators, "the goon is obvious", acting_user=fresh(watcher), now=table.tick())
    return table, prisoner, night, spectators, said


def four_forms(user, inbox, message: Message) -> tuple[bool, bool, bool, bool]:
    """(can_read_inbox, in readable_inboxes, message in readable_messages, in readers_of_inbox)."""
    return (policies.can_read_inbox(fresh(user), inbox),
            policies.readable_inboxes(fresh(user), inbox.game).filter(pk=inbox.pk).exists(),
            policies.readable_messages(fresh(user), Message.objects.filter(pk=message.pk)).exists(),
            policies.readers_of_inbox(inbox).filter(pk=user.pk).exists())


def test_a_prisoner_a_jailbreaker_could_bust_out_is_kept_out_of_the_spectators_thread_M_SETUP_3():
    table, prisoner, _night, spectators, said = game_with_a_prisoner()
    user = table.users[prisoner]
    assert seats_held_back(table.game) == {table.seat(prisoner).pk}
    assert four_forms(user, spectators, said) == (False, False, False, False)
    assert policies.can_post_in_inbox(fresh(user), spectators) is False
    # The game thread stays readable (M-VOTE-6: they read it, they no longer post there).
    assert policies.can_read_inbox(fresh(user), table.thread) is True
    client = Client()
    client.force_login(user)
    url = reverse("inbox_thread", args=[spectators.public_id])
    assert client.get(url).status_code == 404
    assert client.post(url, {"text": "let me in"}).status_code == 404
    assert not Message.objects.filter(inbox=spectators, body="let me in").exists()
    assert "the goon is obvious" not in client.get(reverse("m21_game", args=[table.game.slug])).content.decode()


def test_the_prisoner_joins_by_itself_once_the_jailbreaker_is_gone_M_SETUP_3():
    table, prisoner, _night, spectators, said = game_with_a_prisoner()
    jailbreaker = table.name_of_role("jailbreaker")
    do_modkill_m21_player(table.seat(jailbreaker), reveal_role=True, acting_user=table.host, now=table.tick())
    user = table.users[prisoner]
    assert seats_held_back(table.game) == frozenset()
    assert four_forms(user, spectators, said) == (True, True, True, True)
    client = Client()
    client.force_login(user)
    url = reverse("inbox_thread", args=[spectators.public_id])
    assert "the goon is obvious" in client.get(url).content.decode()
    client.post(url, {"text": "I was a citizen, for the record"})
    assert Message.objects.filter(inbox=spectators, body="I was a citizen, for the record",
                                  author_resident=table.seat(prisoner)).exists()


def test_a_busted_out_prisoner_waits_for_its_night_and_then_joins_M_SETUP_3():
    table, prisoner, night, spectators, said = game_with_a_prisoner()
    jailbreaker = table.name_of_role("jailbreaker")
    ns.do_submit_night_action(table.game, option="bust_out", target=prisoner, acting_user=table.users[jailbreaker],
                              now=table.tick())
    night = end_night(table, night)
    assert night.outcome["busted_out"] == [prisoner]
    user = table.users[prisoner]
    # The bust-out is spent, but the busted-out prisoner is in play for one more night: still kept out.
    assert seats_held_back(table.game) == {table.seat(prisoner).pk}
    assert four_forms(user, spectators, said) == (False, False, False, False)
    table.run_clock(table.day(2).deadline)
    end_night(table, ns.open_night(table.game))
    assert table.seat(prisoner).status == LifeStatus.IMPRISONED
    assert seats_held_back(table.game) == frozenset()
    assert four_forms(user, spectators, said) == (True, True, True, True)


def test_without_a_jailbreaker_the_imprisoned_join_at_once_M_SETUP_3():
    table = build_game(slug="m21-no-jailbreaker")
    prisoner = table.names_of_roles("citizen")[0]
    to_night(table, prisoner)
    spectators = services.thread_of(table.game, M21InboxKind.SPECTATORS)
    said = do_post_message(spectators, "welcome", acting_user=table.host, now=table.tick())
    assert four_forms(table.users[prisoner], spectators, said) == (True, True, True, True)


def test_the_dead_are_never_held_back_M_SETUP_3():
    table, prisoner, _night, spectators, said = game_with_a_prisoner()
    citizen = table.names_of_roles("citizen")[1]
    do_modkill_m21_player(table.seat(citizen), reveal_role=False, acting_user=table.host, now=table.tick())
    assert four_forms(table.users[citizen], spectators, said) == (True, True, True, True)
    assert four_forms(table.users[prisoner], spectators, said) == (False, False, False, False)
