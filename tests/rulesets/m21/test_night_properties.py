"""Properties of every M21 night, over random rosters and submissions (RULES.md M-NIGHT-1..5, M-MAFIA-1).

hypothesis draws a roster of any roles, items and seat states, any mafia votes and any night actions (legal or
not): the night must hold these invariants whatever it is given.
"""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulesets.m21.items import ITEM_KEYS, item_catalogue
from rulesets.m21.night import M21Action, outcome_from_trace, resolve_m21_night
from rulesets.m21.night_file import ACTION_KEYS, parse_night_file
from rulesets.m21.roles import NO_TARGET, ROLES

NAMES = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jay"]


def _names_nobody(action: str, item: str | None) -> bool:
    if action == "use_item":
        return item_catalogue()[item].target == NO_TARGET
    return action in ("hide", "strongman_kill", "safecrack")


@st.composite
def nights(draw):
    size = draw(st.integers(min_value=3, max_value=len(NAMES)))
    names = NAMES[:size]
    players = []
    for name in names:
        players.append({
            "name": name, "role": draw(st.sampled_from(sorted(ROLES))),
            "alive": draw(st.booleans().filter(lambda b: b) | st.booleans()),
            "imprisoned": draw(st.sampled_from([False, False, False, True])),
            "sane": draw(st.sampled_from([True, True, False])),
            "items": draw(st.lists(st.sampled_from(ITEM_KEYS), max_size=2)),
        })
    seqs = iter(range(1, 1000))
    target = st.sampled_from(names) | st.none()
    votes = [{"voter": draw(st.sampled_from(names)), "target": draw(st.sampled_from(names)), "seq": next(seqs)}
             for _ in range(draw(st.integers(min_value=0, max_value=6)))]
    actions = []
    for _ in range(draw(st.integers(min_value=0, max_value=14))):
        action = draw(st.sampled_from(ACTION_KEYS))
        entry = {"actor": draw(st.sampled_from(names)), "action": action, "seq": next(seqs)}
        if action in ("deliver", "safecrack", "use_item"):
            entry["item"] = draw(st.sampled_from(ITEM_KEYS))
        # A target that an action takes no part of refuses the whole file (M-NIGHT-1): not drawn here.
        chosen_target = None if _names_nobody(action, entry.get("item")) else draw(target)
        if chosen_target is not None:
            entry["target"] = chosen_target
        actions.append(entry)
    data = {"night": draw(st.integers(min_value=1, max_value=5)), "seed": draw(st.integers(0, 2**32)),
            "players": players, "mafia_votes": votes, "actions": actions,
            "confiscated": draw(st.lists(st.sampled_from(ITEM_KEYS), max_size=1))}
    return data


def _run(data):
    state, actions = parse_night_file(data)
    return state, actions, resolve_m21_night(state, actions)


def _events(outcome, name):
    return [(s["step"], e) for s in outcome.steps for e in s["events"] if e["event"] == name]


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(nights())
def test_deaths_happen_only_at_step_9_and_once_each_M_NIGHT_2(data):
    _, _, outcome = _run(data)
    died = _events(outcome, "death")
    assert all(step == 9 for step, _ in died)
    assert [e["player"] for _, e in died] == [d.player for d in outcome.deaths]
    assert len({d.player for d in outcome.deaths}) == len(outcome.deaths)
    seats = {s.name: s for s in parse_night_file(data)[0].seats}
    assert all(seats[d.player].living for d in outcome.deaths)


@PROPERTY
@given(nights())
def test_a_protected_player_dies_only_to_the_strongman_M_NIGHT_2(data):
    _, _, outcome = _run(data)
    protected = {e["target"] for _, e in _events(outcome, "protected")}
    for death in outcome.deaths:
        if death.player in protected:
            assert death.cause == "strongman"
    assert not set(outcome.saved) & {d.player for d in outcome.deaths}


@PROPERTY
@given(nights())
def test_a_roleblocked_player_leaves_no_visit_M_NIGHT_2_M_NIGHT_3(data):
    """The only visits a roleblocked player keeps: their own roleblock of the same step (simultaneous, M-NIGHT-5)
    and the strongman's kill, which cannot be roleblocked (M-ROLE)."""
    _, _, outcome = _run(data)
    blocked = {e["target"] for _, e in _events(outcome, "roleblocked")}
    made = [(step, e["actor"], e["target"]) for step, e in _events(outcome, "visit")]
    for step, e in _events(outcome, "visit_void"):
        made.remove((e["step"], e["actor"], e["target"]))
    strongman = {(e["actor"], e["target"]) for _, e in _events(outcome, "carries_out")
                 if any(k["unstoppable"] for _, k in _events(outcome, "kill_pending") if k["by"] == e["actor"])}
    for step, actor, target in made:
        if actor in blocked:
            assert step == 2 or (step == 8 and (actor, target) in strongman), (step, actor, target)


@PROPERTY
@given(nights())
def test_the_trace_re_derives_the_outcome(data):
    state, _, outcome = _run(data)
    full = outcome.as_json()
    derived = outcome_from_trace(state, outcome.steps)
    assert derived == {key: full[key] for key in ("deaths", "saved", "results", "headlines", "items")}


@PROPERTY
@given(nights())
def test_the_same_seed_gives_the_same_night_and_submission_order_does_not_matter(data):
    state, actions, outcome = _run(data)
    again = resolve_m21_night(state, list(reversed(actions)))
    assert json.dumps(again.as_json(), sort_keys=True) == json.dumps(outcome.as_json(), sort_keys=True)
    assert json.loads(json.dumps(outcome.as_json())) == outcome.as_json()


@PROPERTY
@given(nights())
def test_the_dead_hold_no_items_and_only_players_in_play_hold_any_M_NIGHT_5(data):
    state, _, outcome = _run(data)
    dead = {d.player for d in outcome.deaths}
    assert not dead & set(outcome.items)
    assert set(outcome.items) == {s.name for s in state.seats if s.living} - dead


def test_a_resolution_is_the_same_as_stored_and_replayed():
    """A concrete night resolved twice from its stored input: same outcome, byte for byte."""
    data = {"night": 3, "seed": 99, "players": [{"name": n, "role": r} for n, r in
                                                 (("Ann", "cop"), ("Bob", "goon"), ("Cat", "inventor"))],
            "mafia_votes": [{"voter": "Bob", "target": "Ann", "seq": 1}],
            "actions": [{"actor": "Cat", "action": "deliver", "target": "Ann", "item": "grenade", "seq": 2},
                        {"actor": "Ann", "action": "investigate", "target": "Bob", "seq": 3}]}
    first = _run(data)[2].as_json()
    assert _run(json.loads(json.dumps(data)))[2].as_json() == first
    assert first["deaths"] == [{"player": "Ann", "cause": "mafia"}]
    state = parse_night_file(data)[0]
    assert outcome_from_trace(state, first["steps"])["results"] == first["results"]
    assert resolve_m21_night(state, [M21Action("Ann", "investigate", "Bob", seq=3)]).as_json()["results"] == [
        {"player": "Ann", "kind": "investigate", "target": "Bob", "answer": "guilty"}]
