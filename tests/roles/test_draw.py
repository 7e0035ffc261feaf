"""The pure draw core (roles/draw.py): L-CITY-2 mafia counts, the L-ASSIGN-3 commitment and its verification."""
from __future__ import annotations

import random

import pytest

from roles import draw
from rulesets.lepra.setup import draw as setup_draw

#: L-CITY-2: 20% of the population rounded half up, at least 1; written out for 5..40 (not computed).
MAFIA_TABLE = {
    5: 1, 6: 1, 7: 1, 8: 2, 9: 2, 10: 2, 11: 2, 12: 2, 13: 3, 14: 3, 15: 3, 16: 3, 17: 3, 18: 4, 19: 4, 20: 4,
    21: 4, 22: 4, 23: 5, 24: 5, 25: 5, 26: 5, 27: 5, 28: 6, 29: 6, 30: 6, 31: 6, 32: 6, 33: 7, 34: 7, 35: 7,
    36: 7, 37: 7, 38: 8, 39: 8, 40: 8,
}


def test_mafia_count_follows_the_table_for_sizes_5_to_40_L_CITY_2():
    assert {n: setup_draw.mafia_count(n) for n in range(5, 41)} == MAFIA_TABLE


def test_mafia_count_rounds_half_up_and_is_at_least_one_L_CITY_2():
    assert [setup_draw.mafia_count(n) for n in (2, 3, 4, 5)] == [1, 1, 1, 1]  # 0.4, 0.6, 0.8, 1.0 -> at least 1
    assert setup_draw.mafia_count(13) == 3  # 2.6
    assert setup_draw.mafia_count(12) == 2  # 2.4
    assert setup_draw.mafia_count(17) == 3  # 3.4
    assert setup_draw.mafia_count(38) == 8  # 7.6
    with pytest.raises(ValueError):
        setup_draw.mafia_count(1)


LISTS = {"1": ["Ания", "Boris", "Clara"], "2": ["Dmitri", "Ева", "Fyodor"]}
SALT = "00" * 31 + "ff"


def test_canonical_serialization_is_exactly_the_documented_json_L_ASSIGN_3():
    assert draw.canonical_bytes(LISTS, SALT).decode("utf-8") == (
        '{"lists":{"1":["Ания","Boris","Clara"],"2":["Dmitri","Ева","Fyodor"]},"salt":"' + SALT + '"}')
    import hashlib

    assert draw.commitment(LISTS, SALT) == hashlib.sha256(draw.canonical_bytes(LISTS, SALT)).hexdigest()


def test_commitment_verifies_and_any_change_of_an_entry_or_the_salt_fails_L_ASSIGN_3():
    published = draw.commitment(LISTS, SALT)
    assert draw.verify_commitment(LISTS, SALT, published) is True
    assert draw.verify_commitment(LISTS, SALT, published.upper()) is True
    changed_entry = {"1": ["Ания", "Boris", "Klara"], "2": LISTS["2"]}
    assert draw.verify_commitment(changed_entry, SALT, published) is False
    swapped = {"1": ["Boris", "Ания", "Clara"], "2": LISTS["2"]}
    assert draw.verify_commitment(swapped, SALT, published) is False
    assert draw.verify_commitment(LISTS, "00" * 32, published) is False
    assert draw.verify_commitment(LISTS, SALT, "") is False


def test_salt_is_32_bytes_of_hex_and_shuffles_keep_every_name():
    rng = random.Random(3)
    salt = draw.new_salt(rng)
    assert len(salt) == 64 and int(salt, 16) >= 0 and salt == salt.lower()
    lists = setup_draw.shuffled_lists({2: ["a", "b", "c"], 1: ["d", "e"]}, rng)
    assert list(lists) == ["1", "2"]
    assert sorted(lists["1"]) == ["d", "e"] and sorted(lists["2"]) == ["a", "b", "c"]


def test_drawn_numbers_are_distinct_in_range_and_checked_numbers_are_refused_when_wrong_L_ASSIGN_2():
    rng = random.Random(5)
    for n in range(5, 41):
        numbers = setup_draw.draw_numbers(n, setup_draw.mafia_count(n), rng)
        assert numbers == sorted(set(numbers)) and len(numbers) == MAFIA_TABLE[n] and 1 <= numbers[0] and numbers[-1] <= n
    assert setup_draw.check_numbers([9, 2, 5, 1], 20, 4) == [1, 2, 5, 9]
    for bad in ([1, 2, 3], [1, 1, 2, 3], [0, 1, 2, 3], [1, 2, 3, 21]):
        with pytest.raises(ValueError):
            setup_draw.check_numbers(bad, 20, 4)
