"""Each M21 role at night, with exact outcomes (RULES.md M-ROLE, M-ROLE-1, M-NIGHT-3, M-NIGHT-6)."""
from __future__ import annotations

import pytest

from rulesets.m21.night import M21Action, resolve_m21_night
from rulesets.m21.night_file import parse_night_file

from .night_helpers import Night, deaths, events, results_of, visits


def _ignored(out: dict) -> list[tuple[str, str]]:
    return [(e["actor"], e["reason"]) for e in events(out, "submissions", "ignored")]


@pytest.mark.parametrize(("actor", "action"), [("Joe", "investigate"), ("Ivy", "roleblock"), ("Gus", "shoot"),
                                               ("Jud", "watch")])
def test_roles_without_that_night_action_are_refused_M_ROLE(actor, action):
    out = Night().act(actor, action, "Kim").resolve()
    role = {"Joe": "citizen", "Ivy": "goon", "Gus": "godfather", "Jud": "judge"}[actor]
    assert _ignored(out) == [(actor, f"the {role} has no night action {action!r}")]
    assert out["results"] == [] and visits(out) == []


def test_day_powers_are_not_night_actions_M_ROLE():
    state, _ = parse_night_file(Night().data())
    out = resolve_m21_night(state, [M21Action("Jud", "close_proceedings", seq=1),
                                    M21Action("Eve", "extra", seq=2), M21Action("Ida", "confiscate", "Joe", seq=3)])
    assert [(e["actor"], e["reason"]) for e in out.steps[0]["events"]] == [
        ("Jud", "the judge has no night action 'close_proceedings'"),
        ("Eve", "the reporter has no night action 'extra'"),
        ("Ida", "the item_cop has no night action 'confiscate'")]


def test_reporter_hides_once_and_actions_on_them_fail_M_ROLE():
    out = (Night().act("Eve", "hide").act("Ann", "investigate", "Eve").vote("Ivy", "Eve")
           .act("Dan", "protect", "Eve").resolve())
    assert deaths(out) == {}
    assert out["saved"] == []
    assert results_of(out, "Ann") == []
    assert out["state"]["Eve"]["hide_left"] == 0
    assert out["state"]["Dan"]["bag_left"] == 1  # M-NIGHT-7: spent on a hiding target too
    assert [(e["actor"], e["reason"]) for e in events(out, "kills", "fails")] == [("Ivy", "target hiding")]
    again = Night().player("Eve", state={"hide_left": 0}).act("Eve", "hide").resolve()
    assert _ignored(again) == [("Eve", "no uses of 'hide' left")]


def test_reporter_headline_names_only_a_target_who_went_out_M_ROLE():
    out = Night().act("Eve", "visit", "Tom").act("Tom", "rob", "Joe").resolve()
    assert out["headlines"] == ["Tom went out last night!"]
    assert results_of(out, "Eve") == [("visit", "Tom", "went out")]


def test_desperado_shooting_town_dies_instead_and_the_target_is_told_M_ROLE():
    out = Night().act("Cat", "shoot", "Joe").resolve()
    assert out["deaths"] == [{"player": "Cat", "cause": "desperado_backfire"}]
    assert results_of(out, "Joe") == [("desperado", "Cat", "targeted you")]
    assert out["state"]["Cat"] == {"shots_left": 1}


def test_desperado_saved_from_the_backfire_does_not_name_himself_M_ROLE():
    out = Night().act("Cat", "shoot", "Joe").act("Dan", "protect", "Cat").resolve()
    assert out["deaths"] == [] and out["saved"] == ["Cat"]
    assert results_of(out, "Joe") == []


def test_desperado_killing_mafia_is_immune_the_next_day_and_has_two_shots_M_ROLE():
    out = Night().act("Cat", "shoot", "Gus").resolve()
    assert deaths(out) == {"Gus": "desperado"}
    assert results_of(out, "Cat") == [("immunity", "Gus", "immune to gunshots tomorrow")]
    saved = Night().act("Cat", "shoot", "Gus").player("Gus", items=["first_aid_kit"]).use(
        "Gus", "first_aid_kit", "Gus").resolve()
    assert deaths(saved) == {} and results_of(saved, "Cat") == []
    empty = Night().player("Cat", state={"shots_left": 0}).act("Cat", "shoot", "Gus").resolve()
    assert _ignored(empty) == [("Cat", "no uses of 'shoot' left")] and deaths(empty) == {}


def test_coroner_bag_is_spent_even_without_an_attack_and_holds_two_uses_M_ROLE():
    out = Night().act("Dan", "protect", "Joe").resolve()
    assert out["state"]["Dan"] == {"post_mortem_left": 1, "bag_left": 1}
    assert out["saved"] == [] and results_of(out, "Joe") == []
    empty = Night().player("Dan", state={"bag_left": 0}).act("Dan", "protect", "Joe").resolve()
    assert _ignored(empty) == [("Dan", "no uses of 'protect' left")]
    selfish = Night().act("Dan", "protect", "Dan").resolve()
    assert _ignored(selfish) == [("Dan", "the actor cannot target themselves")]


def test_watcher_sees_every_visitor_but_the_ninja_M_ROLE():
    out = (Night().act("Bob", "watch", "Joe").vote("Nin", "Joe").act("Ann", "investigate", "Joe")
           .act("Dan", "protect", "Joe").resolve())
    assert results_of(out, "Bob") == [("watch", "Joe", ["Ann", "Dan"])]
    assert events(out, "kills", "carries_out") == [{"event": "carries_out", "actor": "Nin", "target": "Joe"}]


def test_ninja_is_never_seen_going_out_M_ROLE():
    out = Night().act("Eve", "visit", "Nin").vote("Nin", "Joe").resolve()
    assert results_of(out, "Eve") == [("visit", "Nin", "stayed home")]
    assert out["headlines"] == []


def test_inventor_invents_each_gadget_once_and_the_recipient_is_told_M_ROLE():
    out = Night().act("Inv", "deliver", "Ann", item="police_radio").resolve()
    assert results_of(out, "Ann") == [("received", None, ["police_radio"])]
    assert out["items"]["Ann"] == ["police_radio"]
    again = (Night().player("Inv", state={"gadgets_delivered": ["police_radio"]})
             .act("Inv", "deliver", "Ann", item="police_radio").resolve())
    assert _ignored(again) == [("Inv", "the police_radio was already invented")]
    stash = Night().act("Inv", "deliver", "Ann", item="gun").resolve()
    gadgets = "goggles, grenade, armour, balloon, first_aid_kit, police_radio"
    assert _ignored(stash) == [("Inv", f"a delivery needs a gadget ({gadgets})")]


def test_godfather_investigates_as_innocent_and_vanilla_but_items_show_M_ROLE():
    out = (Night().player("Gus", items=["binoculars"]).act("Ann", "investigate", "Gus")
           .act("Fay", "investigate", "Gus").act("Ida", "investigate", "Gus").resolve())
    assert [r["answer"] for r in out["results"]] == ["innocent", "vanilla", ["binoculars"]]


def test_jailbreaker_busts_out_an_imprisoned_player_once_M_ROLE():
    out = Night().player("Kim", imprisoned=True).act("Jay", "bust_out", "Kim").resolve()
    assert out["busted_out"] == ["Kim"]
    assert results_of(out, "Kim") == [("busted_out", None, "busted out")]
    assert results_of(out, "Jay") == [("bust_out", "Kim", "busted out")]
    assert out["state"]["Jay"] == {"jailbreak_left": 0}
    free = Night().act("Jay", "bust_out", "Kim").resolve()
    assert _ignored(free) == [("Jay", "the target is not imprisoned")]


def test_jailbreaker_safecrack_steals_a_confiscated_item_and_the_item_cop_is_told_M_ROLE():
    night = Night().act("Jay", "safecrack", item="gun")
    night.extra["confiscated"] = ["gun"]
    out = night.resolve()
    assert out["items"]["Jay"] == ["gun"] and out["confiscated"] == []
    assert results_of(out, "Jay") == [("safecrack", None, ["gun"])]
    assert results_of(out, "Ida") == [("safe_robbed", None, ["gun"])]
    assert visits(out) == []
    missing = Night().act("Jay", "safecrack", item="gun").resolve()
    assert _ignored(missing) == [("Jay", "that item is not in the evidence safe")]


def test_hooker_roleblocks_every_night_M_ROLE():
    out = Night().act("Hal", "roleblock", "Ann").act("Ann", "investigate", "Ivy").resolve()
    assert results_of(out, "Ann") == []
    assert out["state"]["Hal"] == {}


def test_strongman_carries_out_the_kill_unstoppably_and_cannot_be_roleblocked_M_ROLE():
    out = (Night().player("Ivy", items=["whiskey"]).vote("Ivy", "Joe").act("Sam", "strongman_kill")
           .use("Ivy", "whiskey", "Sam").act("Dan", "protect", "Joe").act("Bob", "watch", "Joe").resolve())
    assert deaths(out) == {"Joe": "strongman"}
    assert events(out, "kills", "carries_out") == [{"event": "carries_out", "actor": "Sam", "target": "Joe"}]
    assert results_of(out, "Bob") == [("watch", "Joe", ["Sam", "Dan"])]
    used = Night().player("Sam", state={"strongman_left": 0}).vote("Ivy", "Joe").act("Sam", "strongman_kill")
    assert _ignored(used.resolve()) == [("Sam", "no uses of 'strongman_kill' left")]


def test_strongman_without_a_kill_decided_keeps_the_use_M_ROLE():
    out = Night().act("Sam", "strongman_kill").resolve()
    assert out["state"]["Sam"] == {"strongman_left": 1}
    assert events(out, "kills", "fails") == [
        {"event": "fails", "actor": "Sam", "action": "strongman_kill", "reason": "no kill decided"}]


def test_thief_takes_every_item_and_can_use_it_that_night_M_ROLE():
    out = (Night().player("Joe", items=["first_aid_kit", "binoculars"]).act("Tom", "rob", "Joe")
           .use("Tom", "first_aid_kit", "Tom").act("Cat", "shoot", "Tom").resolve())
    assert results_of(out, "Tom") == [("rob", "Joe", ["first_aid_kit", "binoculars"]), ("saved", None, "saved")]
    assert deaths(out) == {}
    assert out["items"]["Tom"] == ["binoculars"]
    nothing = Night().act("Tom", "rob", "Kim").resolve()
    assert results_of(nothing, "Tom") == [("rob", "Kim", [])] and results_of(nothing, "Kim") == []


def test_cop_sanity_only_changes_answers_M_ROLE_1():
    out = Night().player("Ann", sane=False).act("Ann", "investigate", "Joe").act("Bob", "watch", "Joe").resolve()
    assert results_of(out, "Ann") == [("investigate", "Joe", "guilty")]
    assert results_of(out, "Bob") == [("watch", "Joe", ["Ann"])]
