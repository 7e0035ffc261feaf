"""The judges in the staff console (issue 5): the Arbiter schedules an election and records a recusal from the
city judges list, the Tribune passes the candidates, the Arbiter announces a valid removal; other personas are not
offered these actions and change nothing (L-DAY-4, L-JUDGE-3, L-JUDGE-8, L-JUDGE-9, L-STAFF-3)."""
from __future__ import annotations

import re
from datetime import timedelta

import time_machine

from rulesets.lepra.court.judge_services import do_propose_candidate
from tests.admin_keys import action_url
from tests.rulesets.lepra.court.conftest import CLOSES, DAY1, OPENS
from tests.support.staff_console import flashed, staff_client
from rulesets.lepra.models import JudgeElection, JudgeRecusal

CITIES = "/staff/lepra/cityjudge/"
ELECTIONS = "/staff/lepra/judgeelection/"
OPTION = re.compile(r'<option value="([a-z_]+)">')


def offered(client, url) -> set[str]:
    return set(OPTION.findall(client.get(url).content.decode())) - {""}


def test_the_arbiter_schedules_an_election_from_the_city_judges_list_L_DAY_4(jg):
    city = jg.cities[1]
    arbiter = staff_client(jg.arbiter)
    assert offered(arbiter, CITIES) == {"schedule_judge_election", "record_recusal"}
    tribune_page = staff_client(jg.tribunes[1]).get(CITIES)
    assert f"{CITIES}{city.pk}/change/" not in tribune_page.content.decode()
    assert offered(staff_client(jg.tribunes[1]), CITIES) == set()
    with time_machine.travel(DAY1, tick=False):
        page = arbiter.post(CITIES, {"action": "schedule_judge_election", "_selected_action": [city.public_id]})
        assert page.status_code == 200 and 'name="opens_at"' in page.content.decode()
        too_soon = arbiter.post(action_url(CITIES, "schedule_judge_election"), {"_selected_action": [city.public_id],
                                         "opens_at": "2026-11-19T15:00", "closes_at": "2026-11-19T20:00"},
                                follow=True)
        assert flashed(too_soon) == ["Выборы объявляются не менее чем за 6 ч до начала."]
        assert JudgeElection.objects.count() == 0
        done = arbiter.post(action_url(CITIES, "schedule_judge_election"), {"_selected_action": [city.public_id],
                                     "opens_at": "2026-11-19T16:00", "closes_at": "2026-11-19T20:00"},
                            follow=True)
    election = JudgeElection.objects.get(city=city)
    assert (election.opens_at, election.closes_at) == (OPENS, CLOSES)
    assert flashed(done) == ["Выборы судьи, City 1, назначены с 2026-11-19 16:00 до 2026-11-19 20:00 (Europe/Moscow)."]


def test_the_tribune_passes_the_candidates_and_only_the_arbiter_opens_L_JUDGE_3(jg):
    from rulesets.lepra.court.judge_services import do_schedule_judge_election
    election = do_schedule_judge_election(jg.cities[1], OPENS, CLOSES, acting_user=jg.arbiter, now=DAY1)
    ann, ben = jg.residents(1)[:2]
    do_propose_candidate(ben, acting_user=ann.user, now=DAY1)
    tribune = staff_client(jg.tribunes[1])
    assert offered(tribune, ELECTIONS) == {"pass_candidates"}
    assert offered(staff_client(jg.arbiter), ELECTIONS) == {"record_election_proxy", "open_election",
                                                            "close_election"}
    assert staff_client(jg.tribunes[2]).get(ELECTIONS).content.decode().count(f"{ELECTIONS}{election.pk}/change/") == 0
    with time_machine.travel(DAY1 + timedelta(hours=1), tick=False):
        response = tribune.post(ELECTIONS, {"action": "pass_candidates", "_selected_action": [election.public_id]},
                                follow=True)
        assert flashed(response) == ["Кандидаты города City 1 переданы арбитру."]
        refused = staff_client(jg.tribunes[1]).post(ELECTIONS, {"action": "open_election",
                                                                "_selected_action": [election.public_id]}, follow=True)
    election.refresh_from_db()
    assert (election.candidates_passed_at, election.opened_at) == (DAY1 + timedelta(hours=1), None)
    assert refused.status_code == 200


def test_the_arbiter_records_a_recusal_with_the_time_received_L_JUDGE_9(jg):
    judge = jg.residents(2)[0]
    jg.elect(2, judge)
    arbiter = staff_client(jg.arbiter)
    with time_machine.travel(DAY1 + timedelta(hours=12), tick=False):
        response = arbiter.post(action_url(CITIES, "record_recusal"), {"_selected_action": [jg.cities[2].public_id],
                                         "received_at": "2026-11-19T21:30"}, follow=True)
    assert flashed(response) == [f"Судья {judge.name} взял самоотвод."]
    recusal = JudgeRecusal.objects.get()
    assert (recusal.judge_id, recusal.at) == (judge.pk, DAY1 + timedelta(hours=11, minutes=30))
