"""Irreversible actions take a second step that says what will happen (works without JavaScript): the first POST
changes nothing and shows a confirmation page whose form re-posts the same fields with the confirmation."""
from __future__ import annotations

import html
import re
from datetime import timedelta

import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from cities.models import Game, GameEvent, GameStatus, LifeStatus, Resident
from inboxes import services as inbox_services
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from tests.conftest import fresh
from tests.rulesets.lepra.day.day_helpers import MORNING, OPENS, city1_day, day_action, nominate_and_open, ru
from tests.rulesets.m21.day_helpers import build_game, make_user
from tests.support.staff_console import act, staff_client
from rulesets.lepra.models import SuicideDeclaration, VotingSession


def _reposted(response) -> tuple[str, list[tuple[str, str]]]:
    """The confirmation form's action and its fields (hidden inputs), as a browser would re-post them."""
    page = response.content.decode()
    form = re.search(r'<form method="post" action="([^"]*)" class="inline confirm-form">(.*?)</form>', page, re.DOTALL)
    assert form is not None, "no confirmation form on the page"
    fields = [(html.unescape(n), html.unescape(v))
              for n, v in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(2))]
    return html.unescape(form.group(1)), [f for f in fields if f[0] != "csrfmiddlewaretoken"]


def _post_fields(client, url: str, fields: list[tuple[str, str]], **kwargs):
    data: dict[str, list[str]] = {}
    for name, value in fields:
        data.setdefault(name, []).append(value)
    return client.post(url, data, **kwargs)


def test_leaving_a_secret_inbox_asks_first_and_changes_nothing_until_confirmed_L_INBOX_13(demo, client):
    honest, other = demo.seat("honest"), demo.seat("resident2")
    inbox = inbox_services.do_create_secret_inbox(demo.game, title="Заговор", members=[other, honest],
                                                  acting_user=fresh(demo.honest))
    client.force_login(demo.resident2)
    ask = client.post(f"/inboxes/{inbox.public_id}/leave/")
    assert ask.status_code == 200
    assert ru("The inbox disappears for you: you will no longer read it, and nobody can add you back.") \
        in html.unescape(ask.content.decode())
    assert Membership.objects.get(inbox=inbox, resident=other).state == MembershipState.MEMBER
    action, fields = _reposted(ask)
    assert action == f"/inboxes/{inbox.public_id}/leave/" and fields == [("confirmed", "yes")]
    done = _post_fields(client, action, fields)
    assert done.status_code == 302
    assert Membership.objects.get(inbox=inbox, resident=other).state == MembershipState.REMOVED


def test_declaring_suicide_asks_first_L_NOM_5(demo, client):
    resident = city1_day(demo).plain[4]
    client.force_login(resident.user)
    url = reverse("declare_suicide", args=[demo.game.slug])
    with time_machine.travel(MORNING, tick=False):
        ask = client.post(url)
        assert ask.status_code == 200 and ru("Declare suicide?") in html.unescape(ask.content.decode())
        assert not SuicideDeclaration.objects.filter(resident=resident).exists()
        action, fields = _reposted(ask)
        assert (action, fields) == (url, [("confirmed", "yes")])  # the action's own URL: no field names it
        assert _post_fields(client, action, fields).status_code == 302
    assert SuicideDeclaration.objects.filter(resident=resident).count() == 1


def test_closing_voting_now_on_the_day_page_asks_first_L_VOTE_6(demo, client):
    day = city1_day(demo)
    session = nominate_and_open(demo, day, [day.plain[0]])
    client.force_login(demo.tribune1)
    url = day_action(demo, "close_voting")
    with time_machine.travel(OPENS + timedelta(minutes=5), tick=False):
        ask = client.post(url)
        assert ask.status_code == 200
        assert VotingSession.objects.get(pk=session.pk).closed_at is None
        action, fields = _reposted(ask)
        assert (action, fields) == (url, [("confirmed", "yes")])
        assert _post_fields(client, action, fields).status_code == 302
    assert VotingSession.objects.get(pk=session.pk).closed_at == OPENS + timedelta(minutes=5)


def test_console_close_voting_asks_first_then_closes_the_same_selection_L_VOTE_6(demo):
    day = city1_day(demo)
    session = nominate_and_open(demo, day, [day.plain[0]])
    client = staff_client(demo.tribune1)
    changelist = "/staff/lepra/votingsession/"
    with time_machine.travel(OPENS + timedelta(minutes=5), tick=False):
        ask = client.post(changelist, {"action": "close_voting", "_selected_action": [session.public_id], "index": "0"})
        assert ask.status_code == 200
        assert day.city.name in html.unescape(ask.content.decode())
        assert VotingSession.objects.get(pk=session.pk).closed_at is None
        action, fields = _reposted(ask)
        # Posted to the action's own URL: the selection and the confirmation, no field naming the action.
        assert (action, fields) == (changelist + "actions/close_voting/",
                                    [("_selected_action", session.public_id), ("confirmed", "yes")])
        done = _post_fields(client, action, fields, follow=True)
        assert done.status_code == 200
    assert VotingSession.objects.get(pk=session.pk).closed_at == OPENS + timedelta(minutes=5)


def test_console_remove_member_asks_first_L_INBOX_17(demo):
    membership = Membership.objects.select_related("inbox", "resident").get(
        inbox__game=demo.game, inbox__kind=LepraInboxKind.CITY, inbox__city__number=1, inbox__rolled_over_at__isnull=True,
        resident=demo.seat("honest"))
    client = staff_client(demo.tribune1)
    changelist = "/staff/inboxes/membership/"
    ask = client.post(changelist, {"action": "remove_members", "_selected_action": [membership.public_id], "index": "0"})
    assert ask.status_code == 200 and membership.resident.name in html.unescape(ask.content.decode())
    # Removal can be undone («Вернуть в ящик»): the page says so instead of "This cannot be undone."
    page = html.unescape(ask.content.decode())
    assert "Действие отменяет «Вернуть в ящик»." in page and "Это действие нельзя отменить." not in page
    with translation.override("ru"):
        assert gettext("“Add back to the inbox” undoes it.") == "Действие отменяет «Вернуть в ящик»."
    assert Membership.objects.get(pk=membership.pk).state == MembershipState.MEMBER
    action, fields = _reposted(ask)
    assert (action, fields) == (changelist + "actions/remove_members/",
                                [("_selected_action", membership.public_id), ("confirmed", "yes")])
    _post_fields(client, action, fields, follow=True)
    assert Membership.objects.get(pk=membership.pk).state == MembershipState.REMOVED
    assert Inbox.objects.filter(pk=membership.inbox_id).exists()


def test_consenting_to_disclosure_asks_first_and_records_nothing_until_confirmed_L_ARCH_2(demo, client):
    from archive.models import DisclosureConsent

    personal = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.PERSONAL, resident=demo.seat("honest"))
    client.force_login(demo.honest)
    ask = client.post(reverse("archive_give_consent"), {"inbox": personal.public_id})
    assert ask.status_code == 200
    assert ru("After the game the inbox opens to everyone once every consent it needs is given; once it is "
              "disclosed, your consent cannot be withdrawn.") in html.unescape(ask.content.decode())
    assert not DisclosureConsent.objects.filter(inbox=personal).exists()
    action, fields = _reposted(ask)
    assert action == reverse("archive_give_consent")
    assert sorted(fields) == sorted([("inbox", personal.public_id), ("confirmed", "yes")])
    assert _post_fields(client, action, fields).status_code == 302
    assert DisclosureConsent.objects.filter(inbox=personal, revoked_at__isnull=True).count() == 1


def test_a_judges_court_vote_asks_first_and_records_nothing_until_confirmed_L_COURT_2(demo, client):
    """The court vote is final (L-COURT-2: a judge's vote cannot be changed): the first POST records nothing and
    says so; the confirmation re-posts the same choice."""
    from cities.models import Resident
    from tests.rulesets.lepra.day.day_helpers import (
        CLOSES,  # the court scene of those tests
        _before_the_court,
    )
    from rulesets.lepra.models import CourtVote

    _url, nominee = _before_the_court(demo, client)
    with time_machine.travel(CLOSES + timedelta(minutes=1), tick=False):
        client.post(day_action(demo, "put_before_court"), {"deadline": "2026-11-20T23:50"})
        judge = Resident.objects.filter(seats.rank_q("is_judge"), game=demo.game).order_by("city__number").first()
        client.force_login(judge.user)
        ask = client.post(day_action(demo, "court_vote"), {"choice": nominee.public_id})
        assert ask.status_code == 200
        assert ru("A judge's vote cannot be changed: once recorded, it counts towards the Supreme Court's decision "
                  "on %(city)s.", city=judge.city.name) in html.unescape(ask.content.decode())
        assert not CourtVote.objects.filter(judge=judge).exists()
        action, fields = _reposted(ask)
        assert action == day_action(demo, "court_vote")
        assert sorted(fields) == sorted([("choice", nominee.public_id), ("confirmed", "yes")])
        assert _post_fields(client, action, fields).status_code == 302
    assert list(CourtVote.objects.filter(judge=judge).values_list("choice", flat=True)) == [nominee.pk]


def test_console_record_death_asks_first_L_DEATH_1(demo):
    seat = demo.seat("honest")
    client = staff_client(demo.procurator)
    ask = act(client, "resident", "record_death", [seat], submit=True, cause="executed")
    page = html.unescape(ask.content.decode())
    assert ask.status_code == 200 and "Записать смерть?" in page  # the console speaks the game's language
    assert f"Эти жители погибнут (казнён): {seat.name} ({seat.city.name})." in page
    assert "Это действие нельзя отменить." in page
    assert Resident.objects.get(pk=seat.pk).status == LifeStatus.ALIVE
    action, fields = _reposted(ask)
    assert action == "/staff/cities/resident/actions/record_death/"
    assert sorted(fields) == [("_selected_action", seat.public_id), ("cause", "executed"), ("confirmed", "yes")]
    _post_fields(client, action, fields, follow=True)
    assert Resident.objects.get(pk=seat.pk).status == LifeStatus.DEAD
    with translation.override("ru"):
        assert gettext("Record a death?") == "Записать смерть?"


def test_ending_the_game_early_asks_first_L_WIN_3(demo):
    client = Client(HTTP_ACCEPT_LANGUAGE="ru")
    client.force_login(demo.procurator)
    url = f"/games/{demo.game.slug}/end/"
    ask = client.post(url, {"reason": "Сервер горит"})
    page = html.unescape(ask.content.decode())
    assert ask.status_code == 200 and "Досрочно завершить игру?" in page
    assert f"Партия «{demo.game.title}» завершится сейчас, без победителя по правилам: Сервер горит" in page
    assert Game.objects.get(pk=demo.game.pk).status == GameStatus.RUNNING
    action, fields = _reposted(ask)
    done = _post_fields(client, action, fields)
    assert done.status_code == 302 and Game.objects.get(pk=demo.game.pk).status == GameStatus.FINISHED


def test_console_ending_the_game_early_asks_first_L_WIN_3(demo):
    client = staff_client(demo.procurator)
    url = f"/staff/games/{demo.game.slug}/end/"
    events = GameEvent.objects.filter(game=demo.game).count()
    ask = client.post(url, {"reason": "Сервер горит"})
    page = html.unescape(ask.content.decode())
    assert ask.status_code == 200 and "Досрочно завершить игру?" in page  # the console speaks the game's language
    assert f"Партия «{demo.game.title}» завершится сейчас, без победителя по правилам: Сервер горит" in page
    assert "Это действие нельзя отменить." in page
    assert Game.objects.get(pk=demo.game.pk).status == GameStatus.RUNNING
    assert GameEvent.objects.filter(game=demo.game).count() == events
    action, fields = _reposted(ask)
    assert action == url and sorted(fields) == [("confirmed", "yes"), ("reason", "Сервер горит")]
    done = _post_fields(client, action, fields)
    assert done.status_code == 302 and Game.objects.get(pk=demo.game.pk).status == GameStatus.FINISHED
    assert GameEvent.objects.filter(game=demo.game).count() > events


def _m21_console_ask(table, user, button, data):
    """The first POST of an M21 console form (``button``: its own URL), at the table's next minute:
    (client, response)."""
    client = Client()
    client.force_login(user)
    with time_machine.travel(table.tick(), tick=False):
        return client, client.post(reverse(f"staff_admin:m21_console_{button}", args=[table.game.slug]), data)


def _m21_state(table) -> tuple:
    """The seats (name, user, status, alignment announced), the audit count and the message count of the game."""
    seats = tuple(Resident.objects.filter(game=table.game).order_by("pk")
                  .values_list("name", "user_id", "status", "alignment_announced"))
    return (seats, GameEvent.objects.filter(game=table.game).count(),
            Message.objects.filter(inbox__game=table.game).count())


def test_m21_modkill_with_a_role_reveal_asks_first_M_SETUP_4(db):
    table = build_game()
    carol = table.seat("Carol")
    before = _m21_state(table)
    client, ask = _m21_console_ask(table, table.host, "modkill", {"modkill-player": carol.public_id,
                                                      "modkill-reveal_role": "on"})
    page = html.unescape(ask.content.decode())
    assert ask.status_code == 200 and "Modkill this player?" in page  # English, the language of M21
    assert ("Carol is removed from the game of “Prohibition Wars” as dead. The game thread announces it and names "
            "their role.") in page
    assert "This cannot be undone." in page
    assert _m21_state(table) == before
    action, fields = _reposted(ask)
    assert action == reverse("staff_admin:m21_console_modkill", args=[table.game.slug])
    assert sorted(fields) == [("confirmed", "yes"), ("modkill-player", carol.public_id), ("modkill-reveal_role", "on")]
    with time_machine.travel(table.tick(), tick=False):
        done = _post_fields(client, action, fields)
    assert done.status_code == 302
    carol.refresh_from_db()
    assert (carol.status, carol.alignment_announced) == (LifeStatus.DEAD, True)
    assert [e.payload["reveal_role"] for e in GameEvent.objects.filter(game=table.game, kind="m21.modkill")] == [True]


def test_m21_modkill_without_a_role_reveal_says_so_M_SETUP_4(db):
    table = build_game()
    bob = table.seat("Bob")
    before = _m21_state(table)
    client, ask = _m21_console_ask(table, table.cohost, "modkill", {"modkill-player": bob.public_id})
    page = html.unescape(ask.content.decode())
    assert ask.status_code == 200
    assert ("Bob is removed from the game of “Prohibition Wars” as dead. The game thread announces it without "
            "naming their role.") in page
    assert _m21_state(table) == before
    action, fields = _reposted(ask)
    with time_machine.travel(table.tick(), tick=False):
        assert _post_fields(client, action, fields).status_code == 302
    bob.refresh_from_db()
    assert (bob.status, bob.alignment_announced) == (LifeStatus.DEAD, False)


def test_m21_replacing_a_player_asks_first_L_REPLACE_1(db):
    table = build_game()
    newcomer = make_user("Newcomer")
    seat = table.seat("Dave")
    before = _m21_state(table)
    client, ask = _m21_console_ask(table, table.host, "replace", {"replace-player": seat.public_id,
                                                      "replace-username": "NEWCOMER"})
    page = html.unescape(ask.content.decode())
    assert ask.status_code == 200 and "Replace this player?" in page
    assert ("The account with the login “NEWCOMER” takes over the seat of Dave in “Prohibition Wars” with its role; "
            "Dave no longer plays in the game.") in page
    assert "This cannot be undone." in page
    assert _m21_state(table) == before
    action, fields = _reposted(ask)
    assert action == reverse("staff_admin:m21_console_replace", args=[table.game.slug])
    assert sorted(fields) == [("confirmed", "yes"), ("replace-player", seat.public_id), ("replace-username", "NEWCOMER")]
    with time_machine.travel(table.tick(), tick=False):
        assert _post_fields(client, action, fields).status_code == 302
    seat.refresh_from_db()
    assert seat.user == newcomer
