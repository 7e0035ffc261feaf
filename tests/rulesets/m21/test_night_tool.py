"""``manage.py resolve_night m21 FILE.json``: the night tool without a database (RULES.md M-NIGHT-1), its worked
examples and its refusals of malformed files."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from rulesets.m21.management.commands.resolve_night import Command
from rulesets.m21.night_tool import resolve_night_json, run_night_file

EXAMPLES = Path(__file__).resolve().parents[3] / "rulesets" / "m21" / "examples"
EXAMPLE_FILES = sorted(p for p in EXAMPLES.glob("*.json") if not p.name.endswith(".out.json"))


def _run(*args) -> dict:
    out = StringIO()
    call_command(Command(), *args, stdout=out)
    return json.loads(out.getvalue())


def test_there_are_worked_examples_documented_in_the_readme():
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    assert [p.name for p in EXAMPLE_FILES] == ["night2_basic.json", "night3_bug_bank.json", "night4_items.json"]
    for path in EXAMPLE_FILES:
        assert f"`{path.name}`" in readme


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_each_example_resolves_to_its_documented_output_M_NIGHT_1(path):
    expected = json.loads(path.with_name(path.stem + ".out.json").read_text(encoding="utf-8"))
    assert _run("m21", str(path)) == expected
    assert _run("m21", str(path), "--compact") == expected


def test_basic_example_outcome_M_NIGHT_1_M_MAFIA_1():
    out = run_night_file(EXAMPLES / "night2_basic.json")
    assert out["deaths"] == [{"player": "Joe", "cause": "mafia"}, {"player": "Hal", "cause": "desperado"}]
    assert out["saved"] == []
    assert out["results"] == [
        {"player": "Ann", "kind": "investigate", "target": "Gus", "answer": "innocent"},
        {"player": "Cat", "kind": "immunity", "target": "Hal", "answer": "immune to gunshots tomorrow"},
        {"player": "Bob", "kind": "watch", "target": "Joe", "answer": ["Hal"]},
        {"player": "Eve", "kind": "visit", "target": "Hal", "answer": "went out"},
    ]
    assert out["headlines"] == ["Hal went out last night!"]
    assert out["items"] == {"Ann": ["armour"], "Bob": [], "Cat": [], "Dan": [], "Eve": [], "Gus": [],
                            "Ivy": ["gun"]}
    assert out["state"]["Cat"] == {"shots_left": 1} and out["state"]["Dan"]["bag_left"] == 1
    assert [s["key"] for s in out["steps"]][1:] == ["start_watching", "roleblocks", "reporter_hides",
                                                     "investigations", "inventor_delivers", "jailbreak",
                                                     "thief_robs", "kills", "protections"]


def test_the_issue_example_shape_is_accepted():
    out = resolve_night_json({
        "night": 2, "seed": 7,
        "players": [{"name": "Ann", "role": "cop", "alive": True, "sane": True, "items": ["armour"],
                     "state": {}}, {"name": "Gus", "role": "goon"}, {"name": "Joe", "role": "citizen"}],
        "mafia_votes": [{"voter": "Gus", "target": "Ann", "seq": 1}],
        "actions": [{"actor": "Ann", "action": "investigate", "target": "Gus", "seq": 2}]})
    assert out["deaths"] == [] and out["saved"] == ["Ann"]
    assert out["results"] == [{"player": "Ann", "kind": "investigate", "target": "Gus", "answer": "guilty"},
                              {"player": "Ann", "kind": "saved", "target": None, "answer": "saved"}]


def _base() -> dict:
    return {"night": 2, "seed": 1, "players": [{"name": "Ann", "role": "cop"}, {"name": "Gus", "role": "goon"}],
            "mafia_votes": [], "actions": []}


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.pop("seed"), "seed: is missing"),
    (lambda d: d.update(night=0), "night: must be at least 1"),
    (lambda d: d.update(night="2"), "night: must be a whole number, not '2'"),
    (lambda d: d.update(players=[]), "players: must list at least one player"),
    (lambda d: d.update(players={}), "players: must be a list"),
    (lambda d: d["players"].append({"name": "Ann", "role": "cop"}), "players[2].name: 'Ann' appears twice"),
    (lambda d: d["players"][1].update(role="doctor"), "players[1].role: unknown role 'doctor' (roles: citizen"),
    (lambda d: d["players"][0].update(alive="yes"), "players[0].alive: must be true or false, not 'yes'"),
    (lambda d: d["players"][0].update(items=["sword"]), "players[0].items[0]: unknown item 'sword'"),
    (lambda d: d["players"][0].update(state={"shots_left": 1}),
     "players[0].state: the cop has no state field 'shots_left'"),
    (lambda d: d["players"][0].update(colour="red"), "players[0].colour: unknown field"),
    (lambda d: d["actions"].append({"actor": "Zed", "action": "investigate", "seq": 1}),
     "actions[0].actor: no player is called 'Zed'"),
    (lambda d: d["actions"].append({"actor": "Ann", "action": "lynch", "seq": 1}),
     "actions[0].action: unknown action 'lynch'"),
    (lambda d: d["actions"].append({"actor": "Ann", "action": "investigate", "target": "Zed", "seq": 1}),
     "actions[0].target: no player is called 'Zed'"),
    (lambda d: d["actions"].append({"actor": "Ann", "action": "investigate", "target": "Gus"}),
     "actions[0].seq: is missing"),
    (lambda d: d["actions"].append({"actor": "Ann", "action": "use_item", "seq": 1}),
     "actions[0].item: use_item needs an item key"),
    (lambda d: d["actions"].append({"actor": "Ann", "action": "investigate", "item": "gun", "seq": 1}),
     "actions[0].item: investigate takes no item"),
    (lambda d: d["mafia_votes"].extend([{"voter": "Gus", "target": "Ann", "seq": 3},
                                        {"voter": "Gus", "target": "Ann", "seq": 3}]),
     "mafia_votes[1].seq: 3 is also the seq of mafia_votes[0]"),
    (lambda d: d["mafia_votes"].append({"voter": "Gus", "seq": 3}), "mafia_votes[0].target: is missing"),
    (lambda d: d.update(gadgets={"grenade": {"self_death_chance": 3}}),
     "gadgets: gadget 'grenade': self_death_chance must be a number from 0 to 1"),
    (lambda d: d.update(stash_assignment={"item": "grenade", "to": "Gus"}),
     "stash_assignment.item: must be a stash item (gun, binoculars, whiskey)"),
    (lambda d: d.update(extra=1), "extra: unknown field"),
])
def test_malformed_files_are_refused_naming_the_field(tmp_path, change, message):
    data = _base()
    change(data)
    path = tmp_path / "night.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    out = StringIO()
    with pytest.raises(CommandError) as excinfo:
        call_command(Command(), "m21", str(path), stdout=out)
    assert str(excinfo.value).startswith(message)
    assert out.getvalue() == ""


def test_invalid_json_unknown_ruleset_and_missing_file_are_refused(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"night": 2,,}', encoding="utf-8")
    with pytest.raises(CommandError, match=r"bad.json: not valid JSON: Expecting property name enclosed in double "
                                           r"quotes at line 1 column 13"):
        call_command(Command(), "m21", str(bad))
    with pytest.raises(CommandError, match="unknown ruleset 'lepra'; night files exist for: m21"):
        call_command(Command(), "lepra", str(bad))
    with pytest.raises(CommandError, match=r"missing.json: cannot be read \(No such file or directory\)"):
        call_command(Command(), "m21", str(tmp_path / "missing.json"))
    top = tmp_path / "list.json"
    top.write_text("[]", encoding="utf-8")
    with pytest.raises(CommandError, match="the night file: must be an object"):
        call_command(Command(), "m21", str(top))


def test_the_command_is_installed_under_its_name_M_NIGHT_1():
    """``manage.py resolve_night m21 FILE`` finds the command through the installed M21 app."""
    out = StringIO()
    call_command("resolve_night", "m21", str(EXAMPLE_FILES[0]), "--compact", stdout=out)
    assert json.loads(out.getvalue())["deaths"] == [{"player": "Joe", "cause": "mafia"},
                                                    {"player": "Hal", "cause": "desperado"}]
