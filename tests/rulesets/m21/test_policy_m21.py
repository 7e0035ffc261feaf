"""The access policy for M21 personas (DESIGN.md "Tests", RULES.md M-SETUP-3/4, M-VOTE-6): host, co-host, a town
citizen, the cop, the Judge, each mafia role, an imprisoned player, a dead player, a spectator, a spectator who left,
a logged-in outsider and an anonymous visitor, over every inbox of an M21 game, with exact expected sets and the four forms of the policy
(``can_read_inbox``, ``readable_inboxes``, ``readers_of_inbox``, ``readable_messages``) agreeing; and page
tests: nobody but the mafia and the hosts learns the mafia, and the spectators' thread is closed to players."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from cities.models import Resident
from inboxes import knowledge, policies
from inboxes.models import Inbox, Message
from rulesets.m21.kinds import M21InboxKind
from inboxes.posting import do_post_message
from kernel.public_ids import new_public_id
from rulesets.m21 import services
from tests.rulesets.m21.day_helpers import build_game, make_user

pytestmark = pytest.mark.django_db

# Nine players: town = citizen x3, cop, judge; mafia = godfather, hooker, ninja; plus two who leave the game.
NINE = {"citizen": 4, "judge": 1, "cop": 1, "godfather": 1, "hooker": 1, "ninja": 1}
NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan")


def label(inbox: Inbox) -> str:
    return f"pm:{inbox.resident.name}" if inbox.kind == M21InboxKind.ROLE_PM else inbox.kind


@pytest.fixture
def table():
    t = build_game(NAMES, NINE, seed=5, slug="m21-policy")
    citizens = t.names_of_roles("citizen")
    # One citizen is imprisoned by the day (a hammer of 5 of the 8 left), another dies during the day (the host's removal).
    imprisoned, dead = citizens[0], citizens[1]
    services.do_remove_m21_player(t.seat(dead), acting_user=t.host, now=t.tick())
    for name in [n for n in t.users if n not in (imprisoned, dead)][:5]:  # 8 living: 5 is a majority
        t.post(name, f"##VOTE {imprisoned}\n##END")
    assert t.seat(imprisoned).status == "imprisoned"
    t.imprisoned, t.dead = imprisoned, dead
    t.outsider = make_user("Outsider")
    t.spectator, t.former_spectator = make_user("Watcher"), make_user("Gone")
    services.do_join_as_spectator(t.game, acting_user=t.spectator, now=t.tick())
    services.do_join_as_spectator(t.game, acting_user=t.former_spectator, now=t.tick())
    services.do_leave_as_spectator(t.game, acting_user=t.former_spectator, now=t.tick())
    mafia_thread = services.thread_of(t.game, M21InboxKind.MAFIA_THREAD)
    do_post_message(mafia_thread, "SECRET-KILL-PLAN tonight", acting_user=t.user_of_role("hooker"), now=t.tick())
    spectators = services.thread_of(t.game, M21InboxKind.SPECTATORS)
    do_post_message(spectators, "SPECTATOR-CHATTER about the game", acting_user=t.users[imprisoned], now=t.tick())
    return t


def personas(t) -> dict[str, object]:
    living_citizen = [n for n in t.names_of_roles("citizen") if n not in (t.imprisoned, t.dead)][0]
    return {
        "host": t.host, "cohost": t.cohost, "town": t.users[living_citizen], "cop": t.user_of_role("cop"),
        "judge": t.user_of_role("judge"), "godfather": t.user_of_role("godfather"),
        "hooker": t.user_of_role("hooker"), "ninja": t.user_of_role("ninja"),
        "imprisoned": t.users[t.imprisoned], "dead": t.users[t.dead], "spectator": t.spectator,
        "former_spectator": t.former_spectator, "outsider": t.outsider, "anonymous": AnonymousUser(),
    }


def expected(t) -> dict[str, tuple[set[str], set[str]]]:
    """persona -> (labels readable, labels postable), written from RULES.md M-SETUP-3/4 and M-VOTE-6."""
    all_pms = {f"pm:{n}" for n in t.users}
    hosts = ({"game_thread", "mafia_thread", "spectators", "office"} | all_pms,) * 2
    name = {p: next(n for n, u in t.users.items() if u == user) for p, user in personas(t).items()
            if p not in ("host", "cohost", "spectator", "former_spectator", "outsider", "anonymous")}

    def living(persona, mafia=False):
        labels = {"game_thread", f"pm:{name[persona]}"} | ({"mafia_thread"} if mafia else set())
        return labels, labels

    def gone(persona):
        return ({"game_thread", f"pm:{name[persona]}", "spectators"}, {f"pm:{name[persona]}", "spectators"})

    return {
        "host": hosts, "cohost": hosts, "town": living("town"), "cop": living("cop"), "judge": living("judge"),
        "godfather": living("godfather", True), "hooker": living("hooker", True), "ninja": living("ninja", True),
        "imprisoned": gone("imprisoned"), "dead": gone("dead"),
        # M-SETUP-6: the game thread is public while the game runs; reading it makes nobody a spectator.
        "spectator": ({"game_thread", "spectators"}, {"spectators"}), "former_spectator": ({"game_thread"}, set()),
        "outsider": ({"game_thread"}, set()),
        "anonymous": ({"game_thread"}, set()),
    }


#: Personas who read the game thread only because it is public: they are not told of its posts (readers_of_inbox).
PUBLIC_ONLY = ("former_spectator", "outsider", "anonymous")


def test_the_m21_policy_matrix_four_forms_agree_M_SETUP_3_M_VOTE_6(table):
    inboxes = list(Inbox.objects.filter(game=table.game))
    assert sorted(label(i) for i in inboxes) == sorted(
        ["game_thread", "mafia_thread", "spectators", "office", *[f"pm:{n}" for n in table.users]])
    want = expected(table)
    readers = {label(i): set(policies.readers_of_inbox(i).values_list("pk", flat=True)) for i in inboxes}
    for persona, user in personas(table).items():
        user = policies_fresh(user)
        readable = {label(i) for i in inboxes if policies.can_read_inbox(user, i)}
        postable = {label(i) for i in inboxes if policies.can_post_in_inbox(user, i, table.now)}
        assert (readable, postable) == want[persona], persona
        assert {label(i) for i in policies.readable_inboxes(user, table.game)} == readable, persona
        messages = policies.readable_messages(user, Message.objects.filter(inbox__game=table.game))
        assert {label(m.inbox) for m in messages} <= readable, persona
        if user.is_authenticated:
            told = readable - {"game_thread"} if persona in PUBLIC_ONLY else readable
            assert {lab for lab, users in readers.items() if user.pk in users} == told, persona


def test_a_members_only_game_thread_is_closed_to_the_public_M_SETUP_6(table):
    services.do_set_m21_game_thread_public(table.game, False, acting_user=table.host, now=table.tick())
    table.game.refresh_from_db()
    thread = services.thread_of(table.game)
    for persona in PUBLIC_ONLY:
        user = policies_fresh(personas(table)[persona])
        assert policies.can_read_inbox(user, thread) is False, persona
        assert not policies.readable_inboxes(user, table.game).exists(), persona
        assert not policies.readable_messages(user, Message.objects.filter(inbox=thread)).exists(), persona
    assert Client().get(reverse("inbox_thread", args=[thread.public_id])).status_code == 404
    for persona in ("town", "imprisoned", "spectator", "host"):
        assert policies.can_read_inbox(policies_fresh(personas(table)[persona]), thread), persona
    services.do_set_m21_game_thread_public(table.game, True, acting_user=table.host, now=table.tick())
    assert Client().get(reverse("inbox_thread", args=[thread.public_id])).status_code == 200


def test_a_logged_out_visitor_follows_the_game_thread_but_nothing_else_M_SETUP_6(table):
    thread = services.thread_of(table.game)
    town = next(n for n in table.names_of_roles("citizen") if n not in (table.imprisoned, table.dead))
    do_post_message(thread, "PUBLIC-TOWN-TALK: I trust nobody", acting_user=table.users[town], now=table.tick())
    visitor = Client()
    page = visitor.get(reverse("inbox_thread", args=[thread.public_id]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "PUBLIC-TOWN-TALK" in html
    assert 'name="text"' not in html  # no post form for a visitor
    live = visitor.get(reverse("inbox_live", args=[thread.public_id]) + "?after=0")
    assert live.status_code == 200 and "PUBLIC-TOWN-TALK" in live.content.decode()
    game_page = visitor.get(reverse("m21_game", args=[table.game.slug])).content.decode()
    assert reverse("inbox_thread", args=[thread.public_id]) in game_page
    for inbox in Inbox.objects.filter(game=table.game).exclude(pk=thread.pk):
        assert visitor.get(reverse("inbox_thread", args=[inbox.public_id])).status_code == 404, inbox.kind
    refused = visitor.post(reverse("inbox_thread", args=[thread.public_id]), {"text": "##VOTE Alice"})
    assert refused.status_code in (302, 403)
    assert not Message.objects.filter(inbox=thread, body="##VOTE Alice").exists()


def test_reading_the_game_thread_never_bars_playing_or_replacing_M_SETUP_6(table):
    reader = make_user("Reader")
    client = Client()
    client.force_login(reader)
    thread = services.thread_of(table.game)
    assert client.get(reverse("inbox_thread", args=[thread.public_id])).status_code == 200
    assert client.get(reverse("m21_game", args=[table.game.slug])).status_code == 200
    assert not policies.spectator_of(policies_fresh(reader), table.game)
    town = next(n for n in table.names_of_roles("citizen") if n not in (table.imprisoned, table.dead))
    seat = services.do_replace_m21_player(table.seat(town), reader, acting_user=table.host, now=table.tick())
    assert seat.user_id == reader.pk


def policies_fresh(user):
    from tests.conftest import fresh
    return fresh(user) if user.is_authenticated else user


def test_only_the_mafia_and_the_hosts_know_the_mafia_M_SETUP_4(table):
    mafia = [table.seat(n) for n in table.names_of_roles("godfather", "hooker", "ninja")]
    for persona, user in personas(table).items():
        user = policies_fresh(user)
        known = {r.name for r in mafia if knowledge.visible_alignment(user, r) == "mafia"}
        if persona in ("host", "cohost", "godfather", "hooker", "ninja"):
            assert known == {r.name for r in mafia}, persona
        else:
            assert known == set(), persona


def _pages(table, user) -> dict[str, str]:
    client = Client()
    if user.is_authenticated:
        client.force_login(user)
    urls = [reverse("m21_game", args=[table.game.slug]), reverse("game_detail", args=[table.game.slug]),
            reverse("my_inboxes", args=[table.game.slug])]
    urls += [reverse("resident_detail", args=[table.game.slug, r.public_id]) for r in Resident.objects.filter(game=table.game)]
    urls.append(reverse("m21_night_page", args=[table.game.slug]))
    readable = {i.pk for i in policies.readable_inboxes(user, table.game)}
    # The thread's reading tools answer as the game thread does (the policy's 404 for who may not read it).
    thread = services.thread_of(table.game)
    seats = [r.public_id for r in Resident.objects.filter(game=table.game)]
    tools = {reverse("m21_iso", args=[table.game.slug]) + "?" + "&".join(f"players={s}" for s in seats): None,
             reverse("m21_activity", args=[table.game.slug]): None}
    for url in tools:
        response = client.get(url)
        assert response.status_code == (200 if thread.pk in readable else 404), url
        urls.append(url)
    inboxes = {reverse("inbox_thread", args=[i.public_id]): i.pk in readable for i in Inbox.objects.filter(game=table.game)}
    pages = {}
    for url in urls + list(inboxes):
        response = client.get(url)
        assert response.status_code in (200, 302, 404), url
        if url in inboxes:
            assert response.status_code == (200 if inboxes[url] else 404), url
        pages[url] = response.content.decode() if response.status_code == 200 else ""
    return pages


@pytest.mark.parametrize("persona", ["host", "cohost", "town", "cop", "judge", "godfather", "hooker", "ninja",
                                     "imprisoned", "dead", "spectator", "former_spectator", "outsider",
                                     "anonymous"])
def test_pages_never_show_the_mafia_or_the_spectators_to_who_may_not_know_M_SETUP_3(table, persona):
    user = personas(table)[persona]
    html = "\n".join(_pages(table, user).values())
    mafia_names = table.names_of_roles("godfather", "hooker", "ninja")
    mafia_secrets = ["SECRET-KILL-PLAN", "Your role: Godfather", "Your role: Hooker", "Your role: Ninja",
                     *[f"{n} (Godfather)" for n in mafia_names], *[f"{n} (Hooker)" for n in mafia_names],
                     *[f"{n} (Ninja)" for n in mafia_names]]
    knows_mafia = persona in ("host", "cohost", "godfather", "hooker", "ninja")
    seen = [secret for secret in mafia_secrets if secret in html]
    if knows_mafia:
        assert "SECRET-KILL-PLAN" in html
    else:
        assert seen == [], persona
    sees_spectators = persona in ("host", "cohost", "imprisoned", "dead", "spectator")
    assert ("SPECTATOR-CHATTER" in html) == sees_spectators, persona


def test_the_spectators_thread_is_one_404_for_players(table):
    spectators = services.thread_of(table.game, M21InboxKind.SPECTATORS)
    for persona in ("town", "godfather", "judge", "former_spectator", "outsider"):
        client = Client()
        client.force_login(personas(table)[persona])
        assert client.get(reverse("inbox_thread", args=[spectators.public_id])).status_code == 404
        assert client.get(reverse("inbox_thread", args=[new_public_id()])).status_code == 404
    client = Client()
    client.force_login(personas(table)["town"])
    response = client.post(reverse("inbox_thread", args=[spectators.public_id]), {"text": "let me in"})
    assert response.status_code == 404
    assert not Message.objects.filter(inbox=spectators, body="let me in").exists()


def test_an_imprisoned_player_cannot_post_in_the_game_thread_page_M_VOTE_6(table):
    client = Client()
    client.force_login(table.users[table.imprisoned])
    thread = services.thread_of(table.game)
    response = client.post(reverse("inbox_thread", args=[thread.public_id]), {"text": "##VOTE Alice"})
    assert response.status_code in (403, 409)
    assert not Message.objects.filter(inbox=thread, body="##VOTE Alice").exists()


def test_a_replaced_player_loses_the_role_pm_L_REPLACE_1(table):
    town = personas(table)["town"]
    seat = Resident.objects.get(game=table.game, user=town)
    newcomer = make_user("Newbie")
    services.do_replace_m21_player(seat, newcomer, acting_user=table.host, now=table.now + timedelta(minutes=5))
    pm = Inbox.objects.get(game=table.game, kind=M21InboxKind.ROLE_PM, resident=seat)
    assert not policies.can_read_inbox(policies_fresh(town), pm)
    assert policies.can_read_inbox(policies_fresh(newcomer), pm)
