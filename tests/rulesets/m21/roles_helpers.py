"""Helpers of the M21 role tests: the setups with a Coroner and a Jailer, giving an item, a busted-out seat."""
from __future__ import annotations

from rulesets.m21 import night_services as ns
from rulesets.m21.night_models import HoldingPlace, M21Holding
from tests.rulesets.m21.night_helpers import end_night, to_night

SETUP = {"citizen": 2, "reporter": 1, "item_cop": 1, "desperado": 1, "godfather": 1, "goon": 1}


def give(table, name: str, item: str) -> None:
    M21Holding.objects.create(game=table.game, item=item, place=HoldingPlace.SEAT, seat=table.seat(name),
                              source="stash", since=table.now)


CORONER_SETUP = {"citizen": 2, "coroner": 1, "cop": 1, "desperado": 1, "godfather": 1, "goon": 1}


JAIL_SETUP = {"citizen": 4, "cop": 1, "godfather": 1, "jailbreaker": 1}


def _busted_out(table):
    """Imprison a citizen on day 1 and have the Jailbreaker bust them out in night 1; returns their name."""
    prisoner = table.names_of_roles("citizen")[0]
    night = to_night(table, prisoner)
    jailbreaker = table.name_of_role("jailbreaker")
    ns.do_submit_night_action(table.game, option="bust_out", target=prisoner, acting_user=table.users[jailbreaker],
                              now=table.tick())
    end_night(table, night)
    assert table.seat(prisoner).m21_seat.state["busted_out"] is True
    return prisoner
