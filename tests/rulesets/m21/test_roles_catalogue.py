"""The M21 role and item catalogue as data (RULES.md M-ROLE, M-ROLE-1, M-MAFIA-2, M-ITEM-1, M-SETUP-1)."""
from __future__ import annotations

from pathlib import Path

import pytest

from rulesets.m21 import items, roles

#: The seed's setup post (the English original of RULES.md Part 2), kept as test data.
ORIGINAL = Path(__file__).resolve().parents[2] / "data" / "m21" / "mafia21-setup.en.txt"

TOWN_KEYS = ["citizen", "judge", "reporter", "cop", "vanilla_cop", "item_cop", "desperado", "coroner", "watcher",
             "inventor"]
MAFIA_KEYS = ["goon", "godfather", "ninja", "jailbreaker", "hooker", "strongman", "thief"]


def test_catalogue_holds_every_role_of_M_ROLE_with_its_alignment():
    assert list(roles.ROLES) == TOWN_KEYS + MAFIA_KEYS
    assert [k for k, r in roles.ROLES.items() if r.alignment == roles.TOWN] == TOWN_KEYS
    assert [k for k, r in roles.ROLES.items() if r.alignment == roles.MAFIA] == MAFIA_KEYS
    assert roles.TOWN_POWER_ROLES == tuple(TOWN_KEYS[1:])
    assert roles.MAFIA_POWER_ROLES == tuple(MAFIA_KEYS[1:])
    assert roles.COP_ROLES == ("cop", "vanilla_cop", "item_cop")


@pytest.mark.parametrize("key", TOWN_KEYS + MAFIA_KEYS)
def test_every_role_text_quotes_the_seed_and_has_the_day_vote_M_ROLE_M_SETUP_1(key):
    role = roles.role(key)
    assert role.text.startswith("You are ")
    assert roles.DAY_VOTE_TEXT in role.text
    original = " ".join(ORIGINAL.read_text(encoding="utf-8").split())
    for paragraph in role.text.split("\n\n"):
        assert " ".join(paragraph.split()) in original, paragraph


@pytest.mark.parametrize(("key", "actions"), [
    ("citizen", []),
    ("judge", [("close_proceedings", "day", "none", 1, "judge_power_left"),
               ("casting_vote", "day", "tied", 1, "judge_power_left")]),
    ("reporter", [("visit", "night", "other_living", None, None), ("hide", "night", "none", 1, "hide_left"),
                  ("extra", "day", "text", 1, "extra_left")]),
    ("cop", [("investigate", "night", "other_living", None, None)]),
    ("vanilla_cop", [("investigate", "night", "other_living", None, None)]),
    ("item_cop", [("investigate", "night", "other_living", None, None),
                  ("confiscate", "day", "found_item", 1, "confiscate_left")]),
    ("desperado", [("shoot", "night", "other_living", 2, "shots_left")]),
    ("coroner", [("post_mortem", "any", "killed", 1, "post_mortem_left"),
                 ("protect", "night", "other_living", 2, "bag_left")]),
    ("watcher", [("watch", "night", "other_living", None, None)]),
    ("inventor", [("deliver", "night", "other_living", None, None)]),
    ("goon", []),
    ("godfather", []),
    ("ninja", []),
    ("jailbreaker", [("bust_out", "night", "imprisoned", 1, "jailbreak_left"),
                     ("safecrack", "night", "confiscated_item", 1, "jailbreak_left")]),
    ("hooker", [("roleblock", "night", "other_living", None, None)]),
    ("strongman", [("strongman_kill", "night", "none", 1, "strongman_left")]),
    ("thief", [("rob", "night", "other_living", None, None)]),
])
def test_role_actions_phase_target_and_uses_M_ROLE(key, actions):
    got = [(a.key, a.phase, a.target, a.uses, a.counter) for a in roles.role(key).actions]
    assert got == actions


def test_night_actions_resolve_at_their_M_NIGHT_1_step():
    steps = {(r.key, a.key): a.step for r in roles.ROLES.values() for a in r.night_actions() if a.step}
    assert steps == {
        ("reporter", "visit"): 1, ("watcher", "watch"): 1, ("hooker", "roleblock"): 2, ("reporter", "hide"): 3,
        ("cop", "investigate"): 4, ("vanilla_cop", "investigate"): 4, ("item_cop", "investigate"): 4,
        ("inventor", "deliver"): 5, ("jailbreaker", "bust_out"): 6, ("jailbreaker", "safecrack"): 6,
        ("thief", "rob"): 7, ("desperado", "shoot"): 8, ("strongman", "strongman_kill"): 8,
        ("coroner", "protect"): 9,
    }
    assert roles.MAFIA_KILL_VOTE.step == 8


def test_fresh_seat_has_every_use_left_M_ROLE():
    assert roles.fresh_state("desperado") == {"shots_left": 2}
    assert roles.fresh_state("coroner") == {"post_mortem_left": 1, "bag_left": 2}
    assert roles.fresh_state("reporter") == {"hide_left": 1, "extra_left": 1}
    assert roles.fresh_state("judge") == {"judge_power_left": 1}
    assert roles.fresh_state("item_cop") == {"confiscate_left": 1}
    assert roles.fresh_state("jailbreaker") == {"jailbreak_left": 1}
    assert roles.fresh_state("strongman") == {"strongman_left": 1}
    assert roles.fresh_state("inventor") == {"gadgets_delivered": []}
    assert roles.fresh_state("citizen") == {}


def test_seat_state_completes_a_partial_state_and_refuses_unknown_fields():
    assert roles.seat_state("desperado", {"shots_left": 1}) == {"shots_left": 1}
    assert roles.seat_state("coroner", {"bag_left": 0}) == {"post_mortem_left": 1, "bag_left": 0}
    with pytest.raises(ValueError, match="the cop has no state field 'shots_left'"):
        roles.seat_state("cop", {"shots_left": 2})
    with pytest.raises(ValueError, match="'shots_left' must be a whole number"):
        roles.seat_state("desperado", {"shots_left": -1})
    with pytest.raises(ValueError, match="'shots_left' must be a whole number"):
        roles.seat_state("desperado", {"shots_left": True})
    assert roles.uses_left("desperado", {"shots_left": 1}, "shoot") == 1
    assert roles.uses_left("cop", {}, "investigate") is None


def test_unknown_role_is_refused_with_the_known_keys():
    with pytest.raises(roles.UnknownRole, match="unknown role 'doctor'; the roles are: citizen, judge"):
        roles.role("doctor")


def test_vanilla_roles_are_citizen_goon_and_godfather_M_NIGHT_7():
    assert {k for k, r in roles.ROLES.items() if r.vanilla} == {"citizen", "goon", "godfather"}


def test_stash_holds_gun_binoculars_whiskey_M_MAFIA_2():
    assert list(items.STASH_ITEMS) == ["gun", "binoculars", "whiskey"]
    gun, binoculars, whiskey = items.STASH_ITEMS.values()
    assert (gun.uses, gun.phase, gun.effect, gun.step) == (1, "any", "kill", 8)
    assert (binoculars.uses, binoculars.phase, binoculars.effect, binoculars.step) == (None, "night", "went_out", 1)
    assert (whiskey.uses, whiskey.phase, whiskey.effect, whiskey.step) == (1, "night", "roleblock", 2)


def test_gadget_defaults_are_the_interp_of_M_ITEM_1():
    g = items.gadget_effects()
    assert list(g) == ["goggles", "grenade", "armour", "balloon", "first_aid_kit", "police_radio"]
    assert {k: (i.effect, i.uses, i.source) for k, i in g.items()} == {
        "goggles": ("watch", 1, "gadget"), "grenade": ("kill", 1, "gadget"), "armour": ("armour", 1, "gadget"),
        "balloon": ("away", 1, "gadget"), "first_aid_kit": ("protect", 1, "gadget"),
        "police_radio": ("radio", 1, "gadget"),
    }
    assert g["grenade"].self_death_chance == 0.5
    assert g["armour"].passive is True
    assert g["balloon"].target == "none" and g["armour"].target == "none"
    assert g["first_aid_kit"].target == "any_living"


def test_host_configures_gadget_effects_M_ITEM_1():
    g = items.gadget_effects({"grenade": {"self_death_chance": 0}, "police_radio": {"effect": "went_out"},
                              "armour": {"passive": False}})
    assert g["grenade"].self_death_chance == 0.0
    assert (g["police_radio"].effect, g["police_radio"].step, g["police_radio"].visits) == ("went_out", 1, True)
    assert g["armour"].passive is False
    assert items.item_catalogue()["gun"].name == "Gun"


@pytest.mark.parametrize(("config", "message"), [
    ({"jetpack": {}}, "unknown gadget 'jetpack'"),
    ({"grenade": {"effect": "explode"}}, "gadget 'grenade': effect must be one of"),
    ({"grenade": {"self_death_chance": 2}}, "self_death_chance must be a number from 0 to 1"),
    ({"goggles": {"passive": True}}, "only an armour effect can be passive"),
    ({"goggles": {"self_death_chance": 0.3}}, "self_death_chance needs the kill effect"),
    ({"goggles": {"colour": "red"}}, "unknown setting 'colour'"),
    ({"goggles": "watch"}, "the settings must be an object"),
])
def test_impossible_gadget_configuration_is_refused_naming_the_field_M_ITEM_1(config, message):
    with pytest.raises(items.ItemConfigError, match=message):
        items.gadget_effects(config)
