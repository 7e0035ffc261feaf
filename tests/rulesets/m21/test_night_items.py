"""The M21 items at night, with exact outcomes (RULES.md M-ITEM-1, M-MAFIA-2, M-NIGHT-7)."""
from __future__ import annotations

from .night_helpers import Night, deaths, events, results_of


def test_gun_is_one_shot_M_ITEM_1_M_MAFIA_2():
    out = Night().player("Ivy", items=["gun"]).use("Ivy", "gun", "Joe").resolve()
    assert deaths(out) == {"Joe": "gun"}
    assert out["items"]["Ivy"] == []


def test_binoculars_tell_whether_the_target_went_out_and_stay_M_ITEM_1_M_MAFIA_2():
    out = (Night().player("Gus", items=["binoculars"]).use("Gus", "binoculars", "Ann")
           .act("Ann", "investigate", "Joe").resolve())
    assert results_of(out, "Gus") == [("binoculars", "Ann", "went out")]
    assert out["items"]["Gus"] == ["binoculars"]
    assert out["headlines"] == []
    home = Night().player("Gus", items=["binoculars"]).use("Gus", "binoculars", "Joe").resolve()
    assert results_of(home, "Gus") == [("binoculars", "Joe", "stayed home")]


def test_whiskey_roleblocks_once_M_ITEM_1_M_MAFIA_2():
    out = (Night().player("Ivy", items=["whiskey"]).use("Ivy", "whiskey", "Dan").vote("Gus", "Joe")
           .act("Dan", "protect", "Joe").resolve())
    assert deaths(out) == {"Joe": "mafia"}
    assert out["items"]["Ivy"] == []
    assert out["state"]["Dan"]["bag_left"] == 2


def test_goggles_watch_once_M_ITEM_1():
    out = (Night().player("Kim", items=["goggles"]).use("Kim", "goggles", "Joe").vote("Nin", "Joe")
           .act("Ann", "investigate", "Joe").resolve())
    assert results_of(out, "Kim") == [("goggles", "Joe", ["Ann"])]
    assert out["items"]["Kim"] == []


def test_grenade_kills_and_risks_its_user_from_the_recorded_seed_M_ITEM_1():
    outcomes = set()
    for seed in range(16):
        out = Night(seed=seed).player("Kim", items=["grenade"]).use("Kim", "grenade", "Ivy").resolve()
        [draw] = events(out, "kills", "draw")
        assert draw["purpose"] == "grenade_risk:Kim"
        expected = {"Ivy": "grenade"} | ({"Kim": "grenade_backfire"} if draw["value"] < 0.5 else {})
        assert deaths(out) == expected
        outcomes.add(len(expected))
    assert outcomes == {1, 2}


def test_host_configured_grenade_never_backfires_M_ITEM_1():
    night = Night().player("Kim", items=["grenade"]).use("Kim", "grenade", "Ivy")
    night.extra["gadgets"] = {"grenade": {"self_death_chance": 0}}
    out = night.resolve()
    assert deaths(out) == {"Ivy": "grenade"}
    assert events(out, "kills", "draw") == []


def test_host_configured_radio_as_binoculars_M_ITEM_1():
    night = Night().player("Kim", items=["police_radio"]).use("Kim", "police_radio", "Ann").act(
        "Ann", "investigate", "Joe")
    night.extra["gadgets"] = {"police_radio": {"effect": "went_out"}}
    out = night.resolve()
    assert results_of(out, "Kim") == [("police_radio", "Ann", "went out")]


def test_armour_needs_no_use_and_an_active_armour_works_the_night_it_is_worn_M_ITEM_1():
    worn = Night().player("Joe", items=["armour"]).use("Joe", "armour").vote("Ivy", "Joe").resolve()
    assert deaths(worn) == {} and worn["saved"] == ["Joe"]
    night = Night().player("Joe", items=["armour"]).vote("Ivy", "Joe")
    night.extra["gadgets"] = {"armour": {"passive": False}}
    assert deaths(night.resolve()) == {"Joe": "mafia"}
    night.use("Joe", "armour")
    out = night.resolve()
    assert deaths(out) == {} and out["items"]["Joe"] == []


def test_balloon_holder_cannot_act_M_ITEM_1():
    out = Night().player("Ann", items=["balloon"]).use("Ann", "balloon").act("Ann", "investigate", "Ivy").resolve()
    assert results_of(out, "Ann") == []
    assert events(out, "investigations", "fails") == [
        {"event": "fails", "actor": "Ann", "action": "investigate", "reason": "away"}]


def test_first_aid_kit_protects_once_the_user_too_M_ITEM_1():
    out = Night().player("Joe", items=["first_aid_kit"]).use("Joe", "first_aid_kit", "Joe").vote("Ivy", "Joe")
    result = out.resolve()
    assert deaths(result) == {} and result["saved"] == ["Joe"] and result["items"]["Joe"] == []
    other = Night().player("Joe", items=["first_aid_kit"]).use("Joe", "first_aid_kit", "Kim").vote("Ivy", "Kim")
    assert other.resolve()["saved"] == ["Kim"]


def test_police_radio_hears_every_investigation_of_the_night_M_ITEM_1():
    out = (Night().player("Kim", items=["police_radio"]).use("Kim", "police_radio").act("Ann", "investigate", "Ivy")
           .act("Fay", "investigate", "Hal").resolve())
    assert results_of(out, "Kim") == [("police_radio", None, [{"target": "Ivy", "answer": "guilty"},
                                                              {"target": "Hal", "answer": "not vanilla"}])]
    assert out["items"]["Kim"] == []


def test_an_item_not_held_is_not_used_M_ITEM_1():
    out = Night().use("Kim", "gun", "Ivy").resolve()
    assert deaths(out) == {}
    assert events(out, "kills", "fails") == [
        {"event": "fails", "actor": "Kim", "action": "gun", "reason": "no longer holds the item"}]
