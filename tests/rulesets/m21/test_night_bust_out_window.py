"""A busted-out player is in play for the next night only (RULES.md M-ROLE jailbreaker, M-NIGHT-7: "a jailbroken
player's unused night action is resolved the next night"), whether they act then or not. Found by the simulated M21
game: a busted-out citizen, who has no night action to use, stayed in play every night after (a target of night
actions, counted among the living of the night) for the rest of the game."""
from __future__ import annotations

from datetime import timedelta

import pytest

from cities.models import LifeStatus
from rulesets.m21 import night_services as ns
from rulesets.m21.night_models import M21Night

from .day_helpers import build_game

pytestmark = pytest.mark.django_db

EIGHT = {"citizen": 6, "jailbreaker": 1, "goon": 1}
NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi")


def _entry(night: M21Night, name: str) -> dict:
    return next(p for p in night.input["players"] if p["name"] == name)


def test_a_busted_out_citizen_is_in_play_the_next_night_only_M_NIGHT_7():
    table = build_game(NAMES, EIGHT, slug="m21-bust-out")
    prisoner = table.names_of_roles("citizen")[0]
    jailbreaker = table.name_of_role("jailbreaker")
    for name in [n for n in NAMES if n != prisoner][:5]:
        table.post(name, f"##VOTE {prisoner}\n##END")
    table.run_clock(table.now + timedelta(minutes=1))
    assert table.seat(prisoner).status == LifeStatus.IMPRISONED
    night = ns.open_night(table.game)
    ns.do_submit_night_action(table.game, option="bust_out", target=prisoner, acting_user=table.users[jailbreaker],
                              now=table.tick())
    table.run_clock(night.planned_end)
    night.refresh_from_db()
    assert night.outcome["busted_out"] == [prisoner]

    for number in (2, 3):  # days 2 and 3 end at their deadline with no votes; nights 2 and 3 follow
        table.run_clock(table.day(number).deadline + timedelta(minutes=1))
        night = ns.open_night(table.game)
        assert night.number == number
        table.run_clock(night.planned_end)
        night.refresh_from_db()
        entry = _entry(night, prisoner)
        if number == 2:  # the next night: in play for one unused action (a citizen has none)
            assert entry.get("busted_out") is True and not entry.get("imprisoned", False)
        else:  # the night after: back in the penitentiary, out of play
            assert entry.get("imprisoned") is True and not entry.get("busted_out", False)
    assert table.seat(prisoner).status == LifeStatus.IMPRISONED
