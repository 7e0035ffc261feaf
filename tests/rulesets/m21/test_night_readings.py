"""The site's readings of the seed (RULES.md M-NIGHT-7, M-NIGHT-6, M-ROLE-1) and the night file's refusal of a
target an action does not take, checked on night files with exact outcomes."""
from __future__ import annotations

import pytest

from rulesets.m21.night_file import NightFileError

from .night_helpers import Night, deaths, events, results_of, visits


def test_a_roleblock_voids_a_watch_started_at_step_1_and_its_item_is_not_spent_M_NIGHT_7():
    out = (Night().player("Joe", items=["binoculars"]).player("Kim", items=["goggles"])
           .use("Joe", "binoculars", "Ann").use("Kim", "goggles", "Ann").act("Bob", "watch", "Ann")
           .act("Hal", "roleblock", "Joe").act("Tom", "rob", "Ivy").act("Ivy", "use_item", "Kim", "whiskey")
           .player("Ivy", items=["whiskey"]).act("Ann", "investigate", "Gus").resolve())
    assert results_of(out, "Joe") == [] and results_of(out, "Kim") == []
    assert out["items"]["Joe"] == ["binoculars"] and out["items"]["Kim"] == ["goggles"]
    assert out["items"]["Ivy"] == []
    assert [(v[0], v[1]) for v in visits(out) if v[2] == 1] == [("Bob", "Ann")]
    assert results_of(out, "Bob") == [("watch", "Ann", [])]


def test_step_2_roleblocks_are_simultaneous_a_hooked_players_whiskey_still_blocks_M_NIGHT_7():
    out = (Night().player("Ivy", items=["whiskey"]).act("Hal", "roleblock", "Ivy").use("Ivy", "whiskey", "Ann")
           .act("Ann", "investigate", "Gus").act("Ivy", "roleblock", "Joe").resolve())
    assert [e["target"] for e in events(out, "roleblocks", "roleblocked")] == ["Ivy", "Ann"]
    assert results_of(out, "Ann") == []
    assert out["items"]["Ivy"] == []
    both = Night().act("Hal", "roleblock", "Ann").player("Ann", items=["whiskey"]).use("Ann", "whiskey", "Hal")
    assert [e["target"] for e in events(both.resolve(), "roleblocks", "roleblocked")] == ["Ann", "Hal"]


def test_a_limited_use_is_spent_on_a_target_away_or_hiding_M_NIGHT_7():
    out = (Night().player("Joe", items=["balloon"]).use("Joe", "balloon").act("Eve", "hide")
           .act("Dan", "protect", "Joe").act("Cat", "shoot", "Eve").player("Ivy", items=["gun"])
           .use("Ivy", "gun", "Joe").act("Sam", "strongman_kill").vote("Gus", "Eve").resolve())
    assert deaths(out) == {}
    assert out["state"]["Dan"]["bag_left"] == 1
    assert out["state"]["Cat"]["shots_left"] == 1
    assert out["items"]["Ivy"] == []
    assert out["state"]["Sam"] == {"strongman_left": 0}
    assert [(e["actor"], e["reason"]) for e in events(out, "kills", "fails")] == [
        ("Sam", "target hiding"), ("Cat", "target hiding"), ("Ivy", "target away")]


def test_a_roleblocked_actor_keeps_the_use_M_NIGHT_7():
    out = (Night().player("Ivy", items=["gun"]).act("Hal", "roleblock", "Dan").act("Dan", "protect", "Joe")
           .act("Tom", "rob", "Kim").resolve())
    blocked = (Night().player("Joe", items=["gun"]).act("Hal", "roleblock", "Cat").act("Cat", "shoot", "Gus")
               .act("Ivy", "use_item", "Joe", "whiskey").player("Ivy", items=["whiskey"])
               .use("Joe", "gun", "Gus").resolve())
    assert out["state"]["Dan"]["bag_left"] == 2
    assert blocked["state"]["Cat"]["shots_left"] == 2 and blocked["items"]["Joe"] == ["gun"]
    assert deaths(blocked) == {}


def test_the_vanilla_cop_hears_vanilla_or_not_vanilla_and_the_insane_one_the_opposite_M_NIGHT_6_M_ROLE_1():
    sane = Night().act("Fay", "investigate", "Hal").resolve()
    insane = Night().player("Fay", sane=False).act("Fay", "investigate", "Hal").resolve()
    goon = Night().player("Fay", sane=False).act("Fay", "investigate", "Ivy").resolve()
    assert results_of(sane, "Fay") == [("investigate", "Hal", "not vanilla")]
    assert results_of(insane, "Fay") == [("investigate", "Hal", "vanilla")]
    assert results_of(goon, "Fay") == [("investigate", "Ivy", "not vanilla")]


def test_a_strongman_kill_naming_the_mafias_target_is_used_and_spent_M_NIGHT_1():
    out = Night().vote("Ivy", "Joe").act("Sam", "strongman_kill", "Joe").act("Dan", "protect", "Joe").resolve()
    assert deaths(out) == {"Joe": "strongman"}
    assert out["state"]["Sam"] == {"strongman_left": 0}
    assert events(out, "submissions", "ignored") == []


@pytest.mark.parametrize(("night", "message"), [
    (Night().vote("Ivy", "Joe").act("Sam", "strongman_kill", "Kim"),
     "actions[0].target: strongman_kill takes no target, and 'Kim' is not the mafia's target tonight (Joe)"),
    (Night().act("Sam", "strongman_kill", "Kim"),
     "actions[0].target: strongman_kill takes no target, and 'Kim' is not the mafia's target tonight: no kill is "
     "decided"),
    (Night().act("Eve", "hide", "Ann"),
     "actions[0].target: hide takes no target, and 'Ann' is not the actor themselves"),
    (Night().player("Joe", items=["balloon"]).use("Joe", "balloon", "Kim"),
     "actions[0].target: use_item takes no target, and 'Kim' is not the actor themselves"),
])
def test_a_night_file_never_sets_aside_an_action_for_a_target_it_does_not_take_M_NIGHT_1(night, message):
    with pytest.raises(NightFileError) as refused:
        night.resolve()
    assert str(refused.value) == message


def test_a_target_that_agrees_with_the_night_is_accepted_M_NIGHT_1():
    hide = Night().act("Eve", "hide", "Eve").act("Ann", "investigate", "Eve").resolve()
    assert hide["state"]["Eve"]["hide_left"] == 0 and results_of(hide, "Ann") == []
    balloon = Night().player("Joe", items=["balloon"]).use("Joe", "balloon", "Joe").resolve()
    assert balloon["items"]["Joe"] == [] and events(balloon, "start_watching", "away") == [
        {"event": "away", "player": "Joe"}]
