"""The bug bank of night resolution: the cases that engines get wrong (RULES.md M-MAFIA-1, M-NIGHT-2, M-NIGHT-4,
M-NIGHT-5, M-NIGHT-6)."""
from __future__ import annotations

from .night_helpers import Night, deaths, events, results_of, visits


def test_bug_bank_who_carries_out_the_kill_when_the_last_voter_is_blocked_M_MAFIA_1():
    out = (Night().vote("Tom", "Joe").vote("Ivy", "Joe").vote("Gus", "Joe").act("Hal", "roleblock", "Gus")
           .resolve())
    assert events(out, "kills", "carries_out") == [{"event": "carries_out", "actor": "Ivy", "target": "Joe"}]
    assert ("Ivy", "Joe", 8) in visits(out) and ("Gus", "Joe", 8) not in visits(out)
    assert deaths(out) == {"Joe": "mafia"}


def test_bug_bank_a_block_on_the_killer_submitted_after_the_kill_is_scheduled_M_MAFIA_1_M_NIGHT_2():
    night = Night().player("Hal", items=["whiskey"]).vote("Ivy", "Joe").vote("Gus", "Joe")
    night.act("Bob", "watch", "Joe")
    night.use("Hal", "whiskey", "Gus")  # submitted last: the roleblock still resolves at step 2, before the kill
    out = night.resolve()
    assert deaths(out) == {"Joe": "mafia"}
    assert events(out, "kills", "carries_out") == [{"event": "carries_out", "actor": "Ivy", "target": "Joe"}]
    assert results_of(out, "Bob") == [("watch", "Joe", ["Ivy"])]
    alone = Night().player("Hal", items=["whiskey"]).vote("Gus", "Joe").use("Hal", "whiskey", "Gus").resolve()
    assert deaths(alone) == {}


def test_bug_bank_a_killer_that_dies_the_same_night_still_shoots_M_NIGHT_5():
    out = Night().vote("Ivy", "Cat").act("Cat", "shoot", "Gus").act("Dan", "protect", "Kim").resolve()
    assert deaths(out) == {"Cat": "mafia", "Gus": "desperado"}
    assert results_of(out, "Cat") == [("immunity", "Gus", "immune to gunshots tomorrow")]
    gun = Night().player("Ivy", items=["gun"]).act("Cat", "shoot", "Ivy").use("Ivy", "gun", "Cat").resolve()
    assert deaths(gun) == {"Cat": "gun", "Ivy": "desperado"}


def test_bug_bank_an_investigator_killed_that_night_still_gets_the_result_M_NIGHT_4():
    out = (Night().vote("Ivy", "Ann").vote("Gus", "Fay").vote("Hal", "Ann").act("Ann", "investigate", "Hal")
           .resolve())
    assert deaths(out) == {"Ann": "mafia"}
    assert out["results"] == [{"player": "Ann", "kind": "investigate", "target": "Hal", "answer": "guilty"}]


def test_bug_bank_an_investigation_of_the_godfather_M_NIGHT_6():
    out = (Night().player("Gus", items=["gun"]).act("Ann", "investigate", "Gus").act("Fay", "investigate", "Gus")
           .act("Ida", "investigate", "Gus").resolve())
    assert results_of(out, "Ann") == [("investigate", "Gus", "innocent")]
    assert results_of(out, "Fay") == [("investigate", "Gus", "vanilla")]
    assert results_of(out, "Ida") == [("investigate", "Gus", ["gun"])]


def test_bug_bank_an_item_delivered_to_a_player_who_dies_that_night_M_NIGHT_5():
    out = (Night().act("Inv", "deliver", "Kim", item="armour").vote("Ivy", "Kim").act("Sam", "strongman_kill")
           .resolve())
    assert deaths(out) == {"Kim": "strongman"}
    assert "Kim" not in out["items"]
    assert not any("armour" in held for held in out["items"].values())
    assert results_of(out, "Kim") == [("received", None, ["armour"])]
    saved = Night().act("Inv", "deliver", "Kim", item="armour").vote("Ivy", "Kim").resolve()
    assert deaths(saved) == {} and saved["items"]["Kim"] == []
