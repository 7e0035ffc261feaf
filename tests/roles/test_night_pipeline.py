"""The pure night pipeline (roles/night.py, rulesets/lepra/night/__init__.py) and victory (rulesets/lepra/victory.py): every Lepra
step by its rule, and hypothesis properties against slow reference implementations."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roles.night import (
    CHECK,
    KILL,
    TOUR,
    Death,
    NightAction,
    NightOutcome,
    NightState,
    NightStep,
    ResidentState,
    check_answer,
    resolve_night,
    touring_rotation,
)
from rulesets.lepra.night import NIGHT_STEPS
from rulesets.lepra.victory import CityCount, decide_winner

H, M = "honest", "mafia"


def state(night=2, touring=None):
    """Two cities: 10 = {1 honest, 2 honest, 3 mafia, 4 honest judge}; 20 = {5 honest, 6 honest judge, 7 mafia,
    8 honest}."""
    residents = (
        ResidentState(1, 10, H), ResidentState(2, 10, H), ResidentState(3, 10, M), ResidentState(4, 10, H, ranks=frozenset({"judge"})),
        ResidentState(5, 20, H), ResidentState(6, 20, H, ranks=frozenset({"judge"})), ResidentState(7, 20, M), ResidentState(8, 20, H),
    )
    return NightState(night=night, residents=residents, city_order=(10, 20), touring_city=touring)


def dead(outcome: NightOutcome) -> set[int]:
    return {d.resident for d in outcome.deaths}


def test_mafia_kill_one_honest_resident_of_own_city_L_NIGHT_1():
    out = resolve_night(state(), [NightAction(KILL, 10, 1, 1)], NIGHT_STEPS)
    assert out.deaths == (Death(resident=1, city=10, touring=False, by_city=10, spirit=False),)


def test_mafia_kill_of_own_mafioso_or_another_city_is_void_L_NIGHT_1():
    out = resolve_night(state(), [NightAction(KILL, 10, 3, 1), NightAction(KILL, 20, 1, 2)], NIGHT_STEPS)
    assert out.deaths == ()


def test_no_decision_and_no_kill_kill_nobody_L_NIGHT_2():
    assert resolve_night(state(), [], NIGHT_STEPS).deaths == ()
    assert resolve_night(state(), [NightAction(KILL, 10, None, 1)], NIGHT_STEPS).deaths == ()


def test_last_decision_counts_L_NIGHT_6():
    actions = [NightAction(KILL, 10, 1, 1), NightAction(KILL, 10, None, 2), NightAction(KILL, 10, 2, 3)]
    assert dead(resolve_night(state(), actions, NIGHT_STEPS)) == {2}
    actions = [NightAction(KILL, 10, 2, 3), NightAction(KILL, 10, 1, 1)]  # order is by seq, not by list position
    assert dead(resolve_night(state(), actions, NIGHT_STEPS)) == {2}


def test_night_1_kills_nobody_tours_nobody_checks_nobody_L_DAY_5():
    actions = [NightAction(KILL, 10, 1, 1), NightAction(TOUR, 10, 5, 2), NightAction(CHECK, 10, 3, 3)]
    out = resolve_night(state(night=1, touring=10), actions, NIGHT_STEPS)
    assert (out.deaths, out.checks, out.private) == ((), 0, ())


def test_touring_kills_a_resident_of_another_city_a_mafioso_too_L_NIGHT_4():
    out = resolve_night(state(touring=10), [NightAction(TOUR, 10, 7, 1)], NIGHT_STEPS)
    assert out.deaths == (Death(resident=7, city=20, touring=True, by_city=10, spirit=False),)


def test_touring_never_kills_the_other_citys_judge_L_JUDGE_7():
    assert resolve_night(state(touring=10), [NightAction(TOUR, 10, 6, 1)], NIGHT_STEPS).deaths == ()


def test_home_mafia_may_kill_their_own_judge_L_JUDGE_7():
    assert dead(resolve_night(state(), [NightAction(KILL, 10, 4, 1)], NIGHT_STEPS)) == {4}


def test_only_the_touring_city_tours_L_NIGHT_4():
    assert resolve_night(state(touring=10), [NightAction(TOUR, 20, 1, 1)], NIGHT_STEPS).deaths == ()
    assert resolve_night(state(touring=None), [NightAction(TOUR, 10, 5, 1)], NIGHT_STEPS).deaths == ()


def test_home_kill_and_touring_kill_together_L_NIGHT_4():
    out = resolve_night(state(touring=10), [NightAction(KILL, 20, 5, 1), NightAction(TOUR, 10, 8, 2),
                                            NightAction(KILL, 10, 1, 3)], NIGHT_STEPS)
    assert [(d.resident, d.touring, d.by_city) for d in out.deaths] == [(1, False, 10), (5, False, 20), (8, True, 10)]


def test_same_victim_of_home_and_touring_mafia_dies_once():
    out = resolve_night(state(touring=10), [NightAction(KILL, 20, 5, 1), NightAction(TOUR, 10, 5, 2)], NIGHT_STEPS)
    assert [(d.resident, d.touring) for d in out.deaths] == [(5, False)]


def test_commissar_check_answers_truthfully_and_is_counted_L_NIGHT_5():
    out = resolve_night(state(), [NightAction(CHECK, 10, 3, 1), NightAction(CHECK, 20, 8, 2)], NIGHT_STEPS)
    assert out.checks == 2
    assert [(p.city, p.target, p.is_mafia) for p in out.private] == [(10, 3, True), (20, 8, False)]
    assert check_answer(state(), 3) is True and check_answer(state(), 1) is False


def test_spirit_rule_victims_become_spirits_when_honest_equal_mafia_L_SPIRIT_1():
    s = NightState(night=2, city_order=(10,), residents=(
        ResidentState(1, 10, H), ResidentState(2, 10, H), ResidentState(3, 10, M)))
    out = resolve_night(s, [NightAction(KILL, 10, 1, 1)], NIGHT_STEPS)
    assert out.deaths == (Death(resident=1, city=10, touring=False, by_city=10, spirit=True),)
    out = resolve_night(state(), [NightAction(KILL, 10, 1, 1)], NIGHT_STEPS)  # 2 honest vs 1 mafia: no spirit
    assert out.deaths[0].spirit is False


def test_touring_victim_who_is_mafia_never_becomes_a_spirit_L_SPIRIT_1():
    s = NightState(night=2, city_order=(10, 20), touring_city=10, residents=(
        ResidentState(1, 10, M), ResidentState(2, 20, H), ResidentState(3, 20, M), ResidentState(4, 20, M)))
    out = resolve_night(s, [NightAction(TOUR, 10, 3, 1)], NIGHT_STEPS)
    assert out.deaths == (Death(resident=3, city=20, touring=True, by_city=10, spirit=False),)


def test_outcome_round_trips_through_its_dict():
    out = resolve_night(state(touring=10), [NightAction(KILL, 10, 1, 1), NightAction(CHECK, 20, 7, 2)], NIGHT_STEPS)
    assert NightOutcome.from_dict(out.as_dict()) == out


def test_duplicate_step_keys_are_refused():
    class Twice(NightStep):
        key = "x"

        def apply(self, ctx):
            pass
    with pytest.raises(ValueError):
        resolve_night(state(), [], [Twice(), Twice()])


def test_touring_rotation_follows_city_order_and_skips_cities_without_mafia_L_NIGHT_4():
    order = [10, 20, 30]
    alive = {10: True, 20: False, 30: True}
    assert touring_rotation(order, alive, None) == 10
    assert touring_rotation(order, alive, 10) == 30
    assert touring_rotation(order, alive, 30) == 10
    assert touring_rotation(order, {10: False, 20: False, 30: False}, 10) is None


def test_victory_both_ways_L_WIN_1():
    assert decide_winner({1: CityCount(5, 0), 2: CityCount(3, 0)}) == "honest"
    assert decide_winner({1: CityCount(1, 2), 2: CityCount(2, 0)}) is None  # 3 honest, 2 mafia: the game goes on
    assert decide_winner({1: CityCount(1, 2), 2: CityCount(1, 0)}) == "mafia"  # 2 and 2: mafia at least as many
    assert decide_winner({1: CityCount(3, 1), 2: CityCount(1, 1)}) is None
    assert decide_winner({1: CityCount(2, 1), 2: CityCount(0, 1)}) == "mafia"  # all cities together
    assert decide_winner({}) is None


# --------------------------------------------------------------------------------------------------------------
# Properties against slow references
# --------------------------------------------------------------------------------------------------------------

def reference_night(s: NightState, actions: list[NightAction]) -> list[tuple[int, bool, int, bool]]:
    """The Lepra night written plainly: (resident, touring, by_city, spirit) in resolution order."""
    if s.night < 2:
        return []
    by_id = {r.id: r for r in s.residents}
    killed: list[tuple[int, bool, int]] = []
    for city in s.city_order:
        mine = [a for a in actions if a.kind == KILL and a.city == city]
        if not mine:
            continue
        last = min(mine, key=lambda a: -a.seq)
        t = by_id.get(last.target) if last.target is not None else None
        if t and t.alive and t.city == city and t.alignment == H and t.id not in [k[0] for k in killed]:
            killed.append((t.id, False, city))
    if s.touring_city is not None:
        mine = [a for a in actions if a.kind == TOUR and a.city == s.touring_city]
        if mine:
            last = min(mine, key=lambda a: -a.seq)
            t = by_id.get(last.target) if last.target is not None else None
            if t and t.alive and t.city != s.touring_city and "judge" not in t.ranks and t.id not in [k[0] for k in killed]:
                killed.append((t.id, True, s.touring_city))
    gone = {k[0] for k in killed}
    result = []
    for rid, touring, by_city in killed:
        victim = by_id[rid]
        honest = len([r for r in s.residents if r.city == victim.city and r.alive and r.id not in gone and r.alignment == H])
        mafia = len([r for r in s.residents if r.city == victim.city and r.alive and r.id not in gone and r.alignment == M])
        result.append((rid, touring, by_city, victim.alignment == H and mafia > 0 and honest == mafia))
    return result


@st.composite
def nights(draw):
    n_cities = draw(st.integers(1, 3))
    cities = [10 * (i + 1) for i in range(n_cities)]
    residents = []
    rid = 1
    for city in cities:
        for _ in range(draw(st.integers(1, 5))):
            residents.append(ResidentState(rid, city, draw(st.sampled_from([H, M])), alive=draw(st.booleans()),
                                           ranks=frozenset({"judge"}) if draw(st.booleans()) else frozenset()))
            rid += 1
    ids = [r.id for r in residents] + [None, 999]
    actions = [NightAction(draw(st.sampled_from([KILL, TOUR, CHECK])), draw(st.sampled_from(cities)),
                           draw(st.sampled_from(ids)), seq)
               for seq in draw(st.lists(st.integers(1, 1000), unique=True, max_size=8))]
    touring = draw(st.sampled_from([*cities, None]))
    return NightState(night=draw(st.integers(1, 4)), residents=tuple(residents), city_order=tuple(cities),
                      touring_city=touring), actions


@settings(max_examples=300, deadline=None)
@given(nights())
def test_pipeline_matches_the_slow_reference(night_and_actions):
    s, actions = night_and_actions
    out = resolve_night(s, actions, NIGHT_STEPS)
    assert [(d.resident, d.touring, d.by_city, d.spirit) for d in out.deaths] == reference_night(s, actions)
    by_id = {r.id: r for r in s.residents}
    assert len(out.deaths) == len(dead(out)) <= len(s.city_order) + 1
    for d in out.deaths:
        assert by_id[d.resident].alive
        assert not (d.touring and "judge" in by_id[d.resident].ranks)  # L-JUDGE-7
        assert d.touring or by_id[d.resident].alignment == H  # L-NIGHT-1
    expected_checks = 0 if s.night < 2 else sum(1 for a in actions if a.kind == CHECK and a.target in by_id)
    assert out.checks == expected_checks


def reference_winner(people: list[tuple[str, bool]]) -> str | None:
    living = [side for side, alive in people if alive]
    if M not in living:
        return "honest"
    return "mafia" if living.count(M) >= living.count(H) else None


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.integers(1, 5), st.lists(st.tuples(st.sampled_from([H, M]), st.booleans()), max_size=6),
                       max_size=4))
def test_victory_matches_the_slow_reference_L_WIN_1(cities):
    counts = {c: CityCount(sum(1 for s, a in ps if a and s == H), sum(1 for s, a in ps if a and s == M))
              for c, ps in cities.items()}
    people = [p for ps in cities.values() for p in ps]
    expected = reference_winner(people) if cities else None
    assert decide_winner(counts) == expected
