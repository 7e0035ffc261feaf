"""Spectators of an M21 game (RULES.md M-SETUP-3): who may watch, what they read and write, and that an account that
has watched a game never plays in it; a replaced-out player's old account may watch (and then never returns)."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import translation

from cities.models import GameEvent, Resident, Signup
from cities.recruitment_services import do_sign_up, do_withdraw_signup
from inboxes import policies
from inboxes.models import Inbox, Message, Spectator
from rulesets.m21.kinds import M21InboxKind
from inboxes.posting import do_post_message
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.m21 import night_services as ns
from rulesets.m21 import services
from tests.conftest import fresh
from tests.rulesets.m21.night_helpers import mafia_post, to_night

from .day_helpers import START, build_game, make_user

pytestmark = pytest.mark.django_db


def _labels(user, game) -> set[str]:
    return {i.kind for i in policies.readable_inboxes(fresh(user), game)}


def test_a_spectator_reads_the_game_thread_and_talks_only_in_the_spectators_thread_M_SETUP_3():
    table = build_game()
    watcher = make_user("Watcher")
    row = services.do_join_as_spectator(table.game, acting_user=watcher, now=table.tick())
    assert (row.game_id, row.user_id, row.left_at) == (table.game.pk, watcher.pk, None)
    assert GameEvent.objects.filter(game=table.game, kind="m21.spectator_joined", actor=watcher).count() == 1
    assert _labels(watcher, table.game) == {M21InboxKind.GAME_THREAD, M21InboxKind.SPECTATORS}
    spectators = services.thread_of(table.game, M21InboxKind.SPECTATORS)
    message = do_post_message(spectators, "hello from the stands", acting_user=fresh(watcher), now=table.tick())
    assert (message.author_name, message.author_resident_id, message.author_staff_id) == ("Watcher", None, None)
    with translation.override("en"), pytest.raises(NotAllowed, match="You can read this inbox but not post in it."):
        do_post_message(table.thread, "##VOTE Alice", acting_user=fresh(watcher), now=table.tick())
    assert not Message.objects.filter(inbox=table.thread, body="##VOTE Alice").exists()
    assert watcher.pk in set(policies.readers_of_inbox(spectators).values_list("pk", flat=True))
    assert not any(policies.can_read_inbox(fresh(watcher), pm)
                   for pm in Inbox.objects.filter(game=table.game, kind=M21InboxKind.ROLE_PM))


def test_players_hosts_and_the_signed_up_never_become_spectators_M_SETUP_3():
    table = build_game()
    citizen = table.names_of_roles("citizen")[0]
    services.do_remove_m21_player(table.seat(citizen), acting_user=table.host, now=table.tick())
    refusals = {
        table.users["Alice"]: "You play in this game",
        table.users[citizen]: "You play in this game",  # dead: the game itself put them in the spectators' thread
        table.host: "You host this game", table.cohost: "You host this game",
    }
    for user, message in refusals.items():
        with pytest.raises(NotAllowed, match=message):
            services.do_join_as_spectator(table.game, acting_user=user, now=table.tick())
    assert not Spectator.objects.filter(game=table.game).exists()
    host = make_user("Organiser")
    game = services.do_create_m21_game(title="Later", slug="m21-later", acting_user=host, now=START)
    player = make_user("Early")
    do_sign_up(game, acting_user=player, now=START)
    with pytest.raises(NotAllowed, match="You are signed up to play in this game"):
        services.do_join_as_spectator(game, acting_user=player, now=START)
    do_withdraw_signup(game, acting_user=player, now=START)  # no longer a player: may watch, and never play again
    services.do_join_as_spectator(game, acting_user=player, now=START)
    assert Spectator.objects.filter(game=game, user=player).count() == 1


def test_a_spectator_never_signs_up_or_takes_a_seat_even_after_leaving_M_SETUP_3():
    host = make_user("Planner")
    game = services.do_create_m21_game(title="Watched", slug="m21-watched", acting_user=host, now=START)
    watcher = make_user("Watcher")
    services.do_join_as_spectator(game, acting_user=watcher, now=START)
    with pytest.raises(NotAllowed, match="You have watched this game as a spectator: you cannot play in it."):
        do_sign_up(game, acting_user=watcher, now=START)
    services.do_leave_as_spectator(game, acting_user=watcher, now=START + timedelta(minutes=1))
    with pytest.raises(NotAllowed, match="You have watched this game as a spectator"):
        do_sign_up(game, acting_user=watcher, now=START + timedelta(minutes=2))
    assert not Signup.objects.filter(game=game, user=watcher).exists()

    table = build_game(slug="m21-seats")
    other = make_user("Other")
    services.do_join_as_spectator(table.game, acting_user=other, now=table.tick())
    services.do_leave_as_spectator(table.game, acting_user=other, now=table.tick())
    seat = table.seat("Alice")
    # In the game's language, as the console's page speaks it (the site's default is Russian).
    with (translation.override(table.game.language),
          pytest.raises(InvalidInput, match="Other has watched this game as a spectator and cannot take a seat") as exc):
        services.do_replace_m21_player(seat, other, acting_user=table.host, now=table.tick())
    assert exc.value.rule == "M-SETUP-3"
    assert table.seat("Alice").user_id == table.users["Alice"].pk


def test_leaving_closes_both_threads_at_once_and_one_can_watch_again_M_SETUP_3():
    table = build_game()
    watcher = make_user("Watcher")
    services.do_join_as_spectator(table.game, acting_user=watcher, now=table.tick())
    with pytest.raises(WrongState, match="You already watch this game."):
        services.do_join_as_spectator(table.game, acting_user=watcher, now=table.tick())
    left = services.do_leave_as_spectator(table.game, acting_user=watcher, now=table.tick())
    assert left.left_at == table.now
    assert _labels(watcher, table.game) == {M21InboxKind.GAME_THREAD}  # public (M-SETUP-6), the spectators' closed
    with pytest.raises(WrongState, match="You do not watch this game."):
        services.do_leave_as_spectator(table.game, acting_user=watcher, now=table.tick())
    services.do_join_as_spectator(table.game, acting_user=watcher, now=table.tick())
    assert _labels(watcher, table.game) == {M21InboxKind.GAME_THREAD, M21InboxKind.SPECTATORS}
    assert Spectator.objects.filter(game=table.game, user=watcher).count() == 1


def test_a_replaced_out_player_may_watch_and_then_never_returns_M_SETUP_3_L_REPLACE_1():
    table = build_game()
    old = table.users["Alice"]
    seat = table.seat("Alice")
    services.do_replace_m21_player(seat, make_user("Newbie"), acting_user=table.host, now=table.tick())
    services.do_join_as_spectator(table.game, acting_user=old, now=table.tick())
    assert _labels(old, table.game) == {M21InboxKind.GAME_THREAD, M21InboxKind.SPECTATORS}
    assert not policies.can_read_inbox(fresh(old), Inbox.objects.get(kind=M21InboxKind.ROLE_PM, resident=seat))
    with (translation.override(table.game.language),
          pytest.raises(InvalidInput, match="has watched this game as a spectator")):
        services.do_replace_m21_player(Resident.objects.get(pk=seat.pk), old, acting_user=table.host,
                                       now=table.tick())


def test_spectators_are_refused_outside_a_running_m21_game_M_SETUP_3():
    table = build_game()
    with pytest.raises(NotAllowed, match="Log in to watch a game."):
        services.do_join_as_spectator(table.game, acting_user=None, now=table.tick())
    from cities.models import Game, GameStatus
    Game.objects.filter(pk=table.game.pk).update(status=GameStatus.FINISHED)
    table.game.refresh_from_db()
    with pytest.raises(WrongState, match="The game is over"):
        services.do_join_as_spectator(table.game, acting_user=make_user("Late"), now=table.tick())
    Game.objects.filter(pk=table.game.pk).update(ruleset="lepra", status=GameStatus.RUNNING)
    table.game.refresh_from_db()
    with pytest.raises(InvalidInput, match="Only M21 games have spectators."):
        services.do_join_as_spectator(table.game, acting_user=make_user("Lepra"), now=table.tick())
    assert not Spectator.objects.exists()


def test_the_game_page_offers_watching_and_a_spectator_sees_no_night_secrets_M_SETUP_3(client):
    table = build_game()
    victim = table.names_of_roles("citizen")[0]
    watcher = make_user("Watcher")
    client.force_login(watcher)
    page = client.get(reverse("m21_game", args=[table.game.slug])).content.decode()
    assert "Join the spectators' thread</button>" in page
    response = client.post(reverse("m21_spectate", args=[table.game.slug]))
    assert response.status_code == 302
    assert policies.spectator_of(fresh(watcher), table.game)
    assert "Stop watching" in client.get(reverse("m21_game", args=[table.game.slug])).content.decode()
    night = to_night(table, victim)
    cop, hooker = table.name_of_role("cop"), table.name_of_role("hooker")
    ns.do_submit_night_action(table.game, option="investigate", target=hooker, acting_user=table.users[cop],
                              now=table.tick())
    mafia_post(table, hooker, f"kill {cop}")
    with time_machine.travel(table.tick(), tick=False):
        html = client.get(reverse("m21_night_page", args=[table.game.slug])).content.decode()
    assert "Kill vote" not in html and "→ " not in html and "investigate" not in html.lower()
    for inbox in Inbox.objects.filter(game=table.game, kind__in=(M21InboxKind.ROLE_PM, M21InboxKind.MAFIA_THREAD,
                                                                 M21InboxKind.OFFICE)):
        assert client.get(reverse("inbox_thread", args=[inbox.public_id])).status_code == 404
    assert night is not None
    assert client.get(reverse("m21_stop_spectating", args=[table.game.slug])).status_code == 405
    left = client.post(reverse("m21_stop_spectating", args=[table.game.slug]))
    assert left.status_code == 302
    spectators = services.thread_of(table.game, M21InboxKind.SPECTATORS)
    assert client.get(reverse("inbox_thread", args=[spectators.public_id])).status_code == 404
    # The game thread is public (M-SETUP-6): leaving the spectators' thread does not close it.
    assert client.get(reverse("inbox_thread", args=[table.thread.public_id])).status_code == 200
    refused = client.post(reverse("m21_stop_spectating", args=[table.game.slug]), headers={"HX-Request": "true"})
    assert refused.status_code == 409
