"""The archive's account of a night: one English sentence per event of the trace, a title per step of M-NIGHT-1."""
from __future__ import annotations

from pathlib import Path

import pytest

from rulesets.m21 import night_story
from rulesets.m21.night_tool import run_night_file

EXAMPLES = Path(__file__).resolve().parents[3] / "rulesets" / "m21" / "examples"


@pytest.mark.parametrize("name", ["night2_basic", "night3_bug_bank", "night4_items"])
def test_every_event_of_the_worked_examples_reads_as_a_sentence_M_NIGHT_1(name):
    out = run_night_file(EXAMPLES / f"{name}.json")
    for step in out["steps"]:
        assert step["key"] in night_story.STEP_TITLES
        for event in step["events"]:
            assert event["event"] in night_story._SENTENCES, event
            text = night_story.event_sentence(event)
            assert text[0].isupper() and text.rstrip("”").endswith((".", "!", "?")), text
            assert "{" not in text and "_" not in text.replace("_risk", ""), text


def test_sentences_of_a_night_M_NIGHT_1_M_NIGHT_7():
    say = night_story.event_sentence
    assert say({"event": "counted", "actor": "Ann", "action": "investigate", "target": "Gus", "item": None,
                "seq": 5, "step": 4}) == "Ann submitted the investigation on Gus; it counts (resolved at step 4)."
    assert say({"event": "fails", "actor": "Sam", "action": "kill", "target": "Eve", "reason": "target hiding"}) \
        == "Sam's kill on Eve failed: the target was hiding."
    assert say({"event": "item", "holder": "Joe", "item": "binoculars", "change": "gained",
                "reason": "roleblocked"}) == "Joe gained the binoculars (keeps it: the roleblock voided its use)."
    assert say({"event": "kill_pending", "target": "Joe", "cause": "grenade_backfire", "by": "Joe",
                "unstoppable": False}) == "Joe is caught by their own grenade."
    assert say({"event": "result", "player": "Fay", "kind": "investigate", "target": "Hal",
                "answer": "not vanilla"}) == "Fay learns (investigate) about Hal: “not vanilla”."
    assert say({"event": "something_new", "who": "Ann"}) == "Something new: who Ann."
    assert night_story.step_title("kills") == "8. Shots and the mafia kill"
