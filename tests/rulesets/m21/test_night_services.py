"""The hosted M21 night through the services: submissions until the planned end, the mafia thread's kill vote and
stash, the resolution on the clock, results in role inboxes, the morning post and victory (RULES.md M-NIGHT-1,
M-NIGHT-4, M-MAFIA-1, M-MAFIA-2, M-WIN-1), and that nobody reads another player's submissions or results."""
from __future__ import annotations

from datetime import timedelta

import pytest

from cities.models import GameStatus, LifeStatus, PublicPost, ScheduledEvent
from inboxes import policies
from inboxes.models import Message
from inboxes.posting import do_post_message
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.m21 import night_services as ns
from rulesets.m21 import services
from rulesets.m21.night_models import M21Holding
from rulesets.m21.night_tool import resolve_night_json
from tests.rulesets.m21.night_helpers import end_night, mafia_post, mafia_thread, role_pm_texts, to_night

from .day_helpers import build_game

pytestmark = pytest.mark.django_db


def test_a_submission_can_be_changed_until_the_planned_end_and_the_last_counts_M_NIGHT_1():
    table = build_game()
    night = to_night(table)
    cop = table.name_of_role("cop")
    godfather, hooker = table.name_of_role("godfather"), table.name_of_role("hooker")
    ns.do_submit_night_action(table.game, option="investigate", target=hooker, acting_user=table.users[cop],
                              now=table.tick())
    ns.do_submit_night_action(table.game, option="investigate", target=godfather, acting_user=table.users[cop],
                              now=table.tick())
    with pytest.raises(WrongState, match="The night is over"):
        ns.do_submit_night_action(table.game, option="investigate", target=hooker, acting_user=table.users[cop],
                                  now=night.planned_end)
    night = end_night(table, night)
    assert night.outcome["results"] == [{"player": cop, "kind": "investigate", "target": godfather,
                                         "answer": "innocent"}]
    texts = role_pm_texts(table, cop)
    assert f"Night 1: your action is **Investigate on {godfather}**. You can change it until the night ends." in texts
    assert f"**Night 1.** Your investigation of {godfather}: INNOCENT." in texts


def test_only_legal_actions_and_targets_are_accepted_M_NIGHT_1():
    table = build_game()
    victim = table.names_of_roles("citizen")[0]
    cop = table.name_of_role("cop")
    with pytest.raises(WrongState, match="It is not night"):
        ns.do_submit_night_action(table.game, option="investigate", target=victim, acting_user=table.users[cop],
                                  now=table.tick())
    to_night(table, victim)
    with pytest.raises(InvalidInput, match=f"{victim} is imprisoned: choose one of the players offered"):
        ns.do_submit_night_action(table.game, option="investigate", target=victim, acting_user=table.users[cop],
                                  now=table.tick())
    with pytest.raises(InvalidInput, match="That action is not open to you tonight."):
        ns.do_submit_night_action(table.game, option="shoot", target=table.name_of_role("hooker"),
                                  acting_user=table.users[cop], now=table.tick())
    with pytest.raises(NotAllowed, match="Only players of this game"):
        ns.do_submit_night_action(table.game, option="investigate", target=cop, acting_user=table.host,
                                  now=table.tick())
    citizen = table.names_of_roles("citizen")[1]
    assert ns.options_for(table.seat(citizen), ns.open_night(table.game)) == []


def test_the_mafia_vote_in_their_thread_with_a_live_tally_and_the_victim_dies_at_the_planned_end_M_MAFIA_1():
    table = build_game()
    night = to_night(table)
    godfather, hooker = table.name_of_role("godfather"), table.name_of_role("hooker")
    cop = table.name_of_role("cop")
    mafia_post(table, hooker, f"**kill {cop[:3]}**")
    reply = mafia_thread(table).messages.filter(author_resident__isnull=True).order_by("-received_at", "-id").first()
    assert reply.body == (f"{hooker} votes to kill {cop}.\n\nKill vote (2 mafia in play): {cop} 1. Tonight's kill "
                          f"now: {cop}, carried out by {hooker}.")
    mafia_post(table, godfather, "kill nobodyatall")
    reply = mafia_thread(table).messages.filter(author_resident__isnull=True).order_by("-received_at", "-id").first()
    assert reply.body.startswith('"kill nobodyatall" matches no living town player. Not counted.')
    night = end_night(table, night)
    assert table.seat(cop).status == LifeStatus.DEAD
    assert table.seat(cop).died_at == night.planned_end
    assert night.outcome["deaths"] == [{"player": cop, "cause": "mafia"}]
    post = PublicPost.objects.get(game=table.game, title="Morning after night 1")
    assert f"**{cop}** was killed in the night. They were the Cop (Town)." in post.body
    assert hooker not in post.body and godfather not in post.body


def test_a_kill_vote_posted_after_the_planned_end_does_not_count_however_late_the_clock_runs_M_MAFIA_1():
    table = build_game()
    night = to_night(table)
    hooker = table.name_of_role("hooker")
    judge = table.name_of_role("judge")
    table.now = night.planned_end + timedelta(minutes=5)
    do_post_message(mafia_thread(table), f"kill {judge}", acting_user=table.users[hooker], now=table.now)
    table.run_clock(table.now + timedelta(minutes=1))
    night.refresh_from_db()
    assert night.outcome["deaths"] == []
    assert table.seat(judge).status == LifeStatus.ALIVE


def test_one_stash_item_per_night_collected_at_the_end_of_the_night_M_MAFIA_2():
    table = build_game()
    night = to_night(table)
    godfather, hooker = table.name_of_role("godfather"), table.name_of_role("hooker")
    cop = table.name_of_role("cop")
    with pytest.raises(NotAllowed, match="Only the living mafia"):
        ns.do_assign_stash_item(table.game, item="gun", holder=hooker, acting_user=table.users[cop], now=table.tick())
    with pytest.raises(InvalidInput, match="Stash items go to a living member of the mafia."):
        ns.do_assign_stash_item(table.game, item="gun", holder=cop, acting_user=table.users[hooker], now=table.tick())
    ns.do_assign_stash_item(table.game, item="gun", holder=hooker, acting_user=table.users[godfather],
                            now=table.tick())
    ns.do_assign_stash_item(table.game, item="whiskey", holder=godfather, acting_user=table.users[hooker],
                            now=table.tick())
    assert ns.stash_items(table.game) == ["gun", "binoculars", "whiskey"]
    end_night(table, night)
    held = list(M21Holding.objects.filter(game=table.game, until__isnull=True).values_list("seat__name", "item"))
    assert held == [(godfather, "whiskey")]
    assert ns.stash_items(table.game) == ["gun", "binoculars"]


def test_results_reach_the_dead_in_their_role_inbox_and_the_stored_night_re_derives_M_NIGHT_4():
    table = build_game()
    night = to_night(table)
    cop, hooker = table.name_of_role("cop"), table.name_of_role("hooker")
    ns.do_submit_night_action(table.game, option="investigate", target=hooker, acting_user=table.users[cop],
                              now=table.tick())
    mafia_post(table, hooker, f"kill {cop}")
    night = end_night(table, night)
    assert table.seat(cop).status == LifeStatus.DEAD
    assert f"**Night 1.** Your investigation of {hooker}: GUILTY." in role_pm_texts(table, cop)
    pm = table.seat(cop).m21_seat.role_pm
    assert policies.can_read_inbox(table.users[cop], pm)
    assert resolve_night_json(night.input) == night.outcome


def test_the_mafia_win_when_they_reach_half_of_the_living_after_the_night_M_WIN_1():
    table = build_game()
    citizens = table.names_of_roles("citizen")
    night = to_night(table, citizens[0])
    hooker = table.name_of_role("hooker")
    mafia_post(table, hooker, f"kill {citizens[1]}")
    end_night(table, night)
    table.game.refresh_from_db()
    assert table.game.status == GameStatus.RUNNING  # 4 town, 2 mafia left
    assert services.m21_winner(table.game) is None
    assert ScheduledEvent.objects.filter(game=table.game, kind="m21_night_end", done_at__isnull=False).count() == 1


def test_nobody_reads_another_players_submissions_or_results():
    table = build_game()
    night = to_night(table)
    cop, hooker = table.name_of_role("cop"), table.name_of_role("hooker")
    godfather = table.name_of_role("godfather")
    ns.do_submit_night_action(table.game, option="investigate", target=hooker, acting_user=table.users[cop],
                              now=table.tick())
    ns.do_submit_night_action(table.game, option="roleblock", target=cop, acting_user=table.users[hooker],
                              now=table.tick())
    mafia_post(table, godfather, f"kill {cop}")
    end_night(table, night)
    cop_pm, hooker_pm = table.seat(cop).m21_seat.role_pm, table.seat(hooker).m21_seat.role_pm
    for name, user in table.users.items():
        assert policies.can_read_inbox(user, cop_pm) == (name == cop), name
        assert policies.can_read_inbox(user, hooker_pm) == (name == hooker), name
        readable = set(policies.readable_messages(user, Message.objects.filter(inbox__game=table.game))
                       .values_list("body", flat=True))
        secret = [b for b in readable if "your action is" in b]
        assert all((name == cop) == ("Investigate" in b) for b in secret), name
        tally = any("Kill vote" in b for b in readable)
        assert tally == (name in (godfather, hooker)), name
