"""The M21 host's prods and replacement list (RULES.md M-VOTE-5, M-SETUP-4, L-REPLACE-1), and how the
notifications word a role PM's site messages (the role card, an action recorded, a prod)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import translation

from archive import services as archive_services
from archive.models import Channel, Notification, NotificationKind, NotificationSettings
from archive.notifications import notification_text
from cities import services as city_services
from cities.models import GameEvent, LifeStatus
from inboxes import membership_services
from inboxes import services as inbox_services
from inboxes.models import Message
from kernel.errors import NotAllowed, WrongState
from rulesets.m21 import host_tool_services as host_tools
from rulesets.m21 import night_services as ns
from rulesets.m21 import services
from rulesets.m21.models import M21ReplacementVolunteer, M21Seat
from sanctions import services as sanction_services
from tests.conftest import fresh

from .day_helpers import build_game, make_user
from .test_console import get, post, thread_texts
from tests.rulesets.m21.night_helpers import to_night

pytestmark = pytest.mark.django_db


def role_pm_bodies(table, name: str) -> list[str]:
    pm = M21Seat.objects.get(resident=table.seat(name)).role_pm
    return list(Message.objects.filter(inbox=pm).order_by("received_at", "id").values_list("body", flat=True))


def texts_for(user, game) -> list[str]:
    with translation.override(game.language):
        return [notification_text(n, "Europe/London")
                for n in Notification.objects.filter(user=user, game=game).select_related("message__inbox", "game")
                .order_by("created_at", "pk")]


def test_the_host_prods_who_has_not_voted_or_posted_twice_M_VOTE_5():
    table = build_game()
    for name in ("Alice", "Bob", "Carol", "Dave", "Erin"):
        table.post(name, "##VOTE Grace")
        table.post(name, "Thinking.")
    table.post("Frank", "##VOTE Grace")  # voted, posted once
    # Grace has neither voted nor posted.
    assert {seat.name: reasons for seat, reasons in host_tools.players_to_prod(table.game, table.tick())} == {
        "Frank": ("fewer_than_two_posts",), "Grace": ("never_voted", "fewer_than_two_posts")}
    prods = host_tools.do_prod_m21_players(table.game, acting_user=table.cohost, now=table.tick())
    assert [(p.name, p.reasons) for p in prods] == [("Frank", ("fewer_than_two_posts",)),
                                                    ("Grace", ("never_voted", "fewer_than_two_posts"))]
    assert role_pm_bodies(table, "Grace")[-1] == (
        "**A prod from the host.** Day 1: you have not voted yet today and you have posted fewer than twice today. "
        "Please vote and post in the game thread before the deadline, Wed 7 Jan 2026, 22:00 GMT "
        "(M-VOTE-5).")
    assert not any("prod" in b for b in role_pm_bodies(table, "Alice"))
    assert [(p.name, p.day, p.at) for p in host_tools.prods_of(table.game)] == [
        ("Frank", 1, table.now), ("Grace", 1, table.now)]
    assert GameEvent.objects.filter(game=table.game, kind="m21.prodded", actor=table.cohost).count() == 2


def test_a_prod_is_told_on_the_site_and_by_e_mail_where_the_player_chose_M_VOTE_5():
    table = build_game()
    grace, frank = table.users["Grace"], table.users["Frank"]
    # A site message in the role PM is told under the player's choice for it (the role PM's site messages).
    NotificationSettings.objects.create(user=grace, night_result=Channel.EMAIL_NOW)
    host_tools.do_prod_m21_players(table.game, acting_user=table.host, now=table.tick())
    mail.outbox.clear()
    archive_services.do_send_notifications(now=table.tick())
    assert "Prohibition Wars: the host prods you in “Role PM: Grace”." in texts_for(grace, table.game)
    assert "Prohibition Wars: the host prods you in “Role PM: Frank”." in texts_for(frank, table.game)
    assert [m.to for m in mail.outbox] == [[grace.email]]
    assert "the host prods you" in mail.outbox[0].body


def test_only_hosts_prod_and_only_during_a_day_M_SETUP_4():
    table = build_game()
    with pytest.raises(NotAllowed):
        host_tools.do_prod_m21_players(table.game, acting_user=table.users["Alice"], now=table.tick())
    to_night(table)
    with pytest.raises(WrongState, match="No day is open"):
        host_tools.do_prod_m21_players(table.game, acting_user=table.host, now=table.tick())


def test_the_console_lists_whom_to_prod_prods_them_and_lists_when_M_VOTE_5():
    table = build_game()
    page = get(table, table.host).content.decode()
    assert "Not voted or posted twice today:" in page and "Grace: you have not voted yet today" in page
    response = post(table, table.host, "prod")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-prod="Grace"' in html and "Prodded at" in html
    assert GameEvent.objects.filter(game=table.game, kind="m21.prodded").count() == 7


def test_a_volunteer_leaves_the_replacement_list_by_its_own_button_L_REPLACE_1():
    """Going on the list and leaving it are two buttons, each posting to its own URL (no field chooses); leaving
    when not on the list is the service's 409 and changes nothing."""
    table = build_game()
    sub = make_user("Sub")
    client = Client()
    client.force_login(sub)
    leave = reverse("m21_withdraw_volunteering", args=[table.game.slug])
    assert client.get(leave).status_code == 405
    refused = client.post(leave, follow=True)
    assert refused.redirect_chain[-1][1] == 302
    assert [str(m) for m in refused.context["messages"]] == ["You are not on the replacement list."]
    assert not M21ReplacementVolunteer.objects.filter(game=table.game).exists()
    assert client.post(reverse("m21_volunteer", args=[table.game.slug])).status_code == 302
    page = client.get(reverse("m21_game", args=[table.game.slug])).content.decode()
    assert f'action="{leave}"' in page and 'name="withdraw"' not in page
    assert client.post(leave).status_code == 302
    assert not host_tools.is_volunteer(fresh(sub), table.game)
    assert M21ReplacementVolunteer.objects.get(game=table.game, user=sub).withdrawn_at is not None


def test_an_account_volunteers_and_the_host_gives_it_a_seat_that_keeps_its_role_L_REPLACE_1():
    table = build_game()
    sub = make_user("Sub")
    client = Client()
    client.force_login(sub)
    page = client.get(reverse("m21_game", args=[table.game.slug])).content.decode()
    assert "Volunteer to replace</button>" in page
    assert client.post(reverse("m21_volunteer", args=[table.game.slug])).status_code == 302
    assert host_tools.is_volunteer(fresh(sub), table.game)
    assert "Leave the replacement list</button>" in client.get(
        reverse("m21_game", args=[table.game.slug])).content.decode()
    # A player of the game is not offered the list.
    player = Client()
    player.force_login(table.users["Alice"])
    assert "Volunteer to replace" not in player.get(reverse("m21_game", args=[table.game.slug])).content.decode()
    role = table.roles["Bob"]
    table.post("Bob", "##VOTE Alice")
    volunteer = M21ReplacementVolunteer.objects.get(game=table.game, user=sub)
    console = get(table, table.host).content.decode()
    assert "Replacement list" in console and "Sub (sub)" in console
    bob = table.seat("Bob")
    confirm = post(table, table.host, "volunteer", {"volunteer-player": bob.public_id,
                                       "volunteer-volunteer": volunteer.pk})
    assert "Replace this player?" in confirm.content.decode()
    assert table.seat("Bob").user_id == table.users["Bob"].pk  # nothing happened before the confirmation
    done = post(table, table.host, "volunteer", {"volunteer-player": bob.public_id,
                                    "volunteer-volunteer": volunteer.pk, "confirmed": "yes"})
    assert done.status_code == 200
    bob.refresh_from_db()
    assert (bob.user_id, bob.name, bob.status) == (sub.pk, "Sub", LifeStatus.ALIVE)
    assert M21Seat.objects.get(resident=bob).role == role
    assert "**Sub is replacing Bob.** The seat keeps its role, items, votes and history." in thread_texts(table)
    volunteer.refresh_from_db()
    assert (volunteer.seat_id, volunteer.replaced_name, volunteer.taken_at is not None) == (bob.pk, "Bob", True)
    assert host_tools.volunteers_of(table.game) == []
    assert "(replacing Bob)" in get(table, table.host).content.decode()


def test_who_may_not_volunteer_and_withdrawing_L_REPLACE_1_M_SETUP_3():
    table = build_game()
    assert host_tools.volunteer_refusal(table.users["Alice"], table.game) == "You already have a seat in this game."
    assert host_tools.volunteer_refusal(table.cohost, table.game) == "The hosts of a game do not replace in it."
    watcher = make_user("Watcher")
    services.do_join_as_spectator(table.game, acting_user=watcher, now=table.tick())
    with pytest.raises(NotAllowed, match="You have been a spectator of this game"):
        host_tools.do_volunteer_to_replace(table.game, acting_user=fresh(watcher), now=table.tick())
    sub = make_user("Sub")
    host_tools.do_volunteer_to_replace(table.game, acting_user=sub, now=table.tick())
    with pytest.raises(NotAllowed, match="already"):
        host_tools.do_volunteer_to_replace(table.game, acting_user=sub, now=table.tick())
    host_tools.do_withdraw_volunteering(table.game, acting_user=sub, now=table.tick())
    assert host_tools.volunteers_of(table.game) == []
    with pytest.raises(WrongState, match="not on the replacement list"):
        host_tools.do_withdraw_volunteering(table.game, acting_user=sub, now=table.tick())


def test_notifications_call_the_role_pm_your_role_and_a_confirmation_your_action_was_recorded():
    table = build_game()
    cop = table.name_of_role("cop")
    pm = M21Seat.objects.get(resident=table.seat(cop)).role_pm
    card = Message.objects.filter(inbox=pm).order_by("received_at", "id").first()
    told = Notification(user=table.users[cop], game=table.game, kind=NotificationKind.NIGHT_RESULT, message=card)
    with translation.override(table.game.language):
        assert notification_text(told, "Europe/London") == f"Prohibition Wars: your role in “Role PM: {cop}”."
    to_night(table)
    hooker = table.name_of_role("hooker")
    ns.do_submit_night_action(table.game, option="investigate", target=hooker, acting_user=table.users[cop],
                              now=table.tick())
    archive_services.do_collect_notifications(now=table.tick())
    texts = texts_for(table.users[cop], table.game)
    assert texts == [f"Prohibition Wars: your action was recorded in “Role PM: {cop}”."]
    assert Notification.objects.filter(user=table.users[cop], kind=NotificationKind.NIGHT_RESULT).exists()


def test_the_host_makes_the_game_thread_members_only_and_public_again_in_the_console_M_SETUP_6():
    table = build_game()
    thread_url = reverse("inbox_thread", args=[table.thread.public_id])
    assert Client().get(thread_url).status_code == 200
    assert "Make it members-only" in get(table, table.host).content.decode()
    post(table, table.host, "thread_members_only")
    assert Client().get(thread_url).status_code == 404
    assert "Make it public" in get(table, table.host).content.decode()
    post(table, table.cohost, "thread_public")
    assert Client().get(thread_url).status_code == 200
    assert [e.payload["public"] for e in GameEvent.objects.filter(
        game=table.game, kind="m21.game_thread_visibility_set").order_by("id")] == [False, True]


def test_an_m21_player_refused_by_the_engine_reads_the_host_as_m21_names_it_not_the_procurator():
    # The engine's refusals name the game's host by its ruleset's label: "Host" in an M21 game.
    table = build_game()
    alice, bob = table.users["Alice"], table.users["Bob"]
    thread = table.thread
    with translation.override("en"):
        refusals = []
        for call in (lambda: city_services.check_procurator(table.game, alice),
                     lambda: membership_services.do_replace_player(table.seat("Bob"), make_user("Newcomer"),
                                                                   acting_user=alice, now=table.tick()),
                     lambda: inbox_services.do_kill_inbox(thread, acting_user=alice, now=table.tick()),
                     lambda: sanction_services.do_record_play_ban(
                         table.game, bob, "omerta", "Quoted the role PM.", ends_at=None, evidence=[],
                         acting_user=alice, now=table.tick())):
            with pytest.raises(NotAllowed) as refused:
                call()
            refusals.append(str(refused.value))
    assert refusals == ["Only the Host of this game may do this.",
                        "Only the Host or Co-host of this game may replace a player.",
                        "Only the organizer of this inbox or the Host of the game may close it.",
                        "Only the Host of the game of the offence records a play ban."]
    with translation.override("ru"), pytest.raises(NotAllowed) as refused:
        membership_services.do_replace_player(table.seat("Bob"), make_user("Newcomer2"), acting_user=alice,
                                              now=table.tick())
    assert str(refused.value) == "Заменить игрока может только Ведущий или Соведущий этой игры."
    thread.refresh_from_db()
    assert thread.killed_at is None and table.seat("Bob").user == bob
    # M21 has no court: even its host reads that only a game's court imposes a penalty ban, in no ruleset's title.
    with translation.override("en"), pytest.raises(NotAllowed) as refused:
        membership_services.do_penalty_ban(table.seat("Bob"), [thread], table.now + timedelta(hours=1), "Spam.",
                                           acting_user=table.host, now=table.tick())
    assert str(refused.value) == "Only the game's court may impose a penalty ban."
