"""Night decisions only at night (L-NIGHT-6, L-NIGHT-5, L-NIGHT-3): on a game with a phase plan every kind of night
decision (the mafia's kill, the touring kill, the commissar's check, the godfather election and its votes) is
refused by day with one clear message and changes nothing, accepted during the night, and refused after the
planned end of the night however late the resolution runs. The services decide, so every page agrees."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils.translation import override

from cities.models import GameDay, GameEvent
from kernel.errors import WrongState
from rulesets.lepra.models import CommissarCheck, GodfatherElection, GodfatherVote, NightActionKind, NightDecision
from rulesets.lepra.night import services as night_services
from tests.rulesets.lepra.night.conftest import NOW, set_day

DAY_END = NOW + timedelta(hours=2)   # 00:00 in Moscow: night 2 starts
NIGHT_END = NOW + timedelta(hours=11)
BY_DAY = NOW
AT_NIGHT = DAY_END + timedelta(minutes=5)
AFTER = NIGHT_END + timedelta(seconds=1)
NOT_YET = "Night 2 has not started yet: night decisions are made at night, from 21.11 00:00 MSK."


@pytest.fixture
def clocked(ng):
    """``ng`` (day 2) with the clock's plan for day 2 and night 2."""
    GameDay.objects.create(game=ng.game, number=2, starts_at=NOW - timedelta(hours=12), ends_at=DAY_END,
                           night_ends_at=NIGHT_END)
    return ng


def _attempts(ng):
    city1, touring = ng.cities[0], night_services.touring_city_for(ng.game, 2)
    return {
        "kill": lambda at: night_services.do_submit_night_decision(city1, ng.honest[1][0], acting_user=ng.godfather[1].user,
                                                             now=at),
        "tour": lambda at: night_services.do_submit_night_decision(
            touring, next(r for c in ng.cities if c.pk != touring.pk for r in ng.honest[c.number]),
            kind=NightActionKind.TOUR, acting_user=ng.godfather[touring.number].user, now=at),
        "check": lambda at: night_services.do_check_resident(ng.honest[1][0], acting_user=ng.commissar[1].user, now=at),
        "godfather election": lambda at: night_services.do_open_godfather_election(city1, acting_user=ng.consigliere, now=at),
    }


def _rows(ng):
    return (NightDecision.objects.filter(game=ng.game).count(), CommissarCheck.objects.filter(game=ng.game).count(),
            GodfatherElection.objects.filter(game=ng.game).count(), GameEvent.objects.filter(game=ng.game).count())


@pytest.mark.parametrize("kind", ["kill", "tour", "check", "godfather election"])
def test_every_night_decision_is_refused_by_day_with_one_message_L_NIGHT_6(clocked, kind):
    before = _rows(clocked)
    with override("en"), pytest.raises(WrongState) as refused:
        _attempts(clocked)[kind](BY_DAY)
    assert (str(refused.value), refused.value.rule) == (NOT_YET, "L-NIGHT-6")
    assert _rows(clocked) == before


@pytest.mark.parametrize("kind", ["kill", "tour", "check", "godfather election"])
def test_every_night_decision_is_taken_at_night_and_refused_after_its_planned_end_L_NIGHT_6(clocked, kind):
    _attempts(clocked)[kind](AT_NIGHT)
    after_one = _rows(clocked)
    with override("en"), pytest.raises(WrongState) as refused:
        _attempts(clocked)[kind](AFTER)
    assert str(refused.value) in ("This night is over.",
                                  f"A godfather election is already open in {clocked.cities[0].name}.")
    assert _rows(clocked) == after_one


def test_godfather_votes_only_at_night_L_NIGHT_3(clocked):
    city = clocked.cities[0]
    election = night_services.do_open_godfather_election(city, acting_user=None, now=BY_DAY)  # the site, by day: allowed
    voter, candidate = clocked.mafia[1][0], clocked.mafia[1][0]
    with override("en"), pytest.raises(WrongState) as refused:
        night_services.do_vote_godfather(election, candidate, acting_user=voter.user, now=BY_DAY)
    assert str(refused.value) == NOT_YET
    assert not GodfatherVote.objects.filter(election=election).exists()
    night_services.do_vote_godfather(election, candidate, acting_user=voter.user, now=AT_NIGHT)
    assert GodfatherVote.objects.filter(election=election).count() == 1


def test_a_game_run_by_hand_has_no_clock_limit_L_NIGHT_6(ng):
    """Without a phase plan for the day (the host runs the phases), the night is the host's call."""
    set_day(ng, 2)
    decision = _attempts(ng)["kill"](BY_DAY)
    assert decision.night == 2


def test_the_refusal_names_the_time_in_the_viewers_own_display_zone_with_its_abbreviation_L_NIGHT_6(clocked):
    godfather = clocked.godfather[1].user
    godfather.time_zone = "Asia/Tokyo"
    godfather.save(update_fields=["time_zone"])
    with override("en"), pytest.raises(WrongState) as refused:
        _attempts(clocked)["kill"](BY_DAY)
    assert str(refused.value) == "Night 2 has not started yet: night decisions are made at night, from 21.11 06:00 JST."
