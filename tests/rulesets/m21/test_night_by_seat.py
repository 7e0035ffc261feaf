"""The hosted M21 night is resolved from its rows keyed by seats, its deaths go through the shared death service,
and the night file stays the offline tool over the same resolver (RULES.md M-NIGHT-1, M-NIGHT-4, M-MAFIA-1)."""
from __future__ import annotations

import pytest

from cities.models import GameEvent, LifeStatus, Resident
from inboxes.models import Membership, MembershipState
from rulesets.m21.kinds import M21InboxKind
from rulesets.m21 import night_services as ns
from rulesets.m21.night import resolve_m21_night
from rulesets.m21.night_data import M21Action
from rulesets.m21.night_tool import resolve_night_json

from .day_helpers import build_game
from tests.rulesets.m21.night_helpers import end_night, mafia_post, to_night

pytestmark = pytest.mark.django_db


def test_the_night_input_is_keyed_by_seats_not_names_M_NIGHT_1():
    table = build_game()
    night = to_night(table)
    cop, hooker = table.name_of_role("cop"), table.name_of_role("hooker")
    ns.do_submit_night_action(table.game, option="investigate", target=hooker, acting_user=table.users[cop],
                              now=table.tick())
    mafia_post(table, hooker, f"kill {cop}")
    state, actions = ns.night_input(ns.open_night(table.game))
    cop_key, hooker_key = str(table.seat(cop).pk), str(table.seat(hooker).pk)
    assert actions == [M21Action(actor=cop_key, action="investigate", target=hooker_key, item=None, seq=2)]
    assert [(v.voter, v.target, v.seq) for v in state.votes] == [(hooker_key, cop_key, 1)]
    assert {s.key: s.name for s in state.seats} == {str(r.pk): r.name for r in
                                                     Resident.objects.filter(game=table.game)}
    outcome = resolve_m21_night(state, actions)
    assert [(d.player, d.cause, d.killer) for d in outcome.deaths] == [(cop_key, "mafia", hooker_key)]
    night = end_night(table, night)
    # The record is by name, with each player's seat, and resolves offline to the stored outcome.
    assert next(p for p in night.input["players"] if p["name"] == cop)["seat"] == cop_key
    assert night.input["actions"] == [{"actor": cop, "action": "investigate", "seq": 2, "target": hooker}]
    assert night.outcome["deaths"] == [{"player": cop, "cause": "mafia"}]
    assert resolve_night_json(night.input) == night.outcome


def test_a_night_death_goes_through_the_shared_death_service_M_NIGHT_4():
    table = build_game()
    night = to_night(table)
    cop, hooker = table.name_of_role("cop"), table.name_of_role("hooker")
    mafia_post(table, hooker, f"kill {cop}")
    night = end_night(table, night)
    seat = table.seat(cop)
    assert (seat.status, seat.died_at, seat.alignment_announced) == (LifeStatus.DEAD, night.planned_end, True)
    died = GameEvent.objects.filter(game=table.game, kind="resident.died")
    assert [(e.payload["resident"], e.payload["cause"], e.at) for e in died] == [(seat.pk, "killed",
                                                                                 night.planned_end)]
    states = dict(Membership.objects.filter(resident=seat).values_list("inbox__kind", "state"))
    assert states[M21InboxKind.GAME_THREAD] == MembershipState.BANNED
    assert states[M21InboxKind.SPECTATORS] == MembershipState.MEMBER
    assert not GameEvent.objects.filter(game=table.game, kind="m21.killed").exists()


def test_a_player_renamed_during_the_night_keeps_their_submission_M_NIGHT_1():
    table = build_game()
    night = to_night(table)
    cop, hooker = table.name_of_role("cop"), table.name_of_role("hooker")
    ns.do_submit_night_action(table.game, option="investigate", target=hooker, acting_user=table.users[cop],
                              now=table.tick())
    Resident.objects.filter(pk=table.seat(hooker).pk).update(name="Newcomer")
    night = end_night(table, night)
    assert night.outcome["results"] == [{"player": cop, "kind": "investigate", "target": "Newcomer",
                                         "answer": "guilty"}]
