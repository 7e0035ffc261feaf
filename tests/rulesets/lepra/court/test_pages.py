"""The judge section of the city day page (issue 5): residents propose, demand and confirm a removal and resign
there; the precincts show live standing scores to those who may read them, and to nobody else (L-JUDGE-3..5,
L-JUDGE-8, L-JUDGE-9, L-INBOX-20)."""
from __future__ import annotations

from datetime import timedelta

import time_machine
from django.test import Client
from django.urls import reverse

from tests.rulesets.lepra.court.conftest import CON, DAY1, OPENS, PRO
from tests.rulesets.lepra.court.judge_helpers import precinct, start, vote
from rulesets.lepra.models import JudgeProposal, RemovalDemand


def client_for(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def day_url(jg, number: int) -> str:
    return f"/games/{jg.game.slug}/cities/{number}/day/"


def action_url(jg, name: str, number: int) -> str:
    """The URL of the city day page's action ``name`` (its own URL, posted by its own button)."""
    return reverse(name, args=[jg.game.slug, number])


def test_a_resident_proposes_a_candidate_on_the_day_page_L_JUDGE_3(jg):
    from rulesets.lepra.court.judge_services import do_schedule_judge_election
    do_schedule_judge_election(jg.cities[1], OPENS, OPENS + timedelta(hours=4), acting_user=jg.arbiter,
                               now=DAY1)
    ann, ben = jg.residents(1)[:2]
    client = client_for(ann.user)
    with time_machine.travel(DAY1 + timedelta(minutes=5), tick=False):
        page = client.get(day_url(jg, 1))
        assert page.status_code == 200 and action_url(jg, "propose_candidate", 1) in page.content.decode()
        response = client.post(action_url(jg, "propose_candidate", 1), {"candidate": ben.public_id})
        assert response.status_code == 302
        again = client.post(action_url(jg, "propose_candidate", 1), {"candidate": ann.public_id})
    assert again.status_code == 400
    assert list(JudgeProposal.objects.values_list("proposer_id", "candidate_id")) == [(ann.pk, ben.pk)]
    anonymous = client_for(None).post(action_url(jg, "propose_candidate", 1), {"candidate": ben.public_id})
    assert anonymous.status_code == 302 and anonymous.url.startswith(reverse("account_login"))
    assert JudgeProposal.objects.count() == 1


def test_precincts_show_live_standing_scores_to_their_readers_only_L_JUDGE_4_L_INBOX_20(jg):
    candidate = jg.residents(1)[0]
    _, others = start(jg, 1, [candidate])
    vote(others[0], candidate, PRO, 1)
    vote(others[1], candidate, PRO, 2)
    vote(others[2], candidate, CON, 3)
    with time_machine.travel(OPENS + timedelta(minutes=10), tick=False):
        rows = client_for(others[3].user).get(day_url(jg, 1)).context["day"].judges.precincts
        assert [(r.candidate, r.pros, r.cons, r.score, r.latest_pro_at) for r in rows] == [
            (candidate.name, 2, 1, 1, OPENS + timedelta(minutes=2))]
        assert client_for(jg.arbiter).get(day_url(jg, 1)).context["day"].judges.precincts[0].score == 1
        for outsider in (jg.residents(2)[0].user, jg.tribunes[2], None):
            page = client_for(outsider).get(day_url(jg, 1))
            assert page.context["day"].judges.precincts == []
            assert f"/inboxes/{precinct(candidate).public_id}/" not in page.content.decode()


def test_removal_demand_and_confirmation_on_the_day_page_L_JUDGE_8(jg):
    for n in (1, 2, 3):
        jg.elect(n, jg.residents(n)[0])
    jg.set_day(2, DAY1 + timedelta(hours=23))
    others = jg.residents(1)[1:]
    with time_machine.travel(DAY1 + timedelta(days=1), tick=False):
        assert client_for(others[0].user).post(action_url(jg, "open_removal_demand", 1), {}).status_code == 302
        demand = RemovalDemand.objects.get()
        for r in others[1:4]:
            assert client_for(r.user).post(action_url(jg, "confirm_removal_demand", 1), {"demand": demand.public_id}
                                           ).status_code == 302
        item = client_for(others[4].user).get(day_url(jg, 1)).context["day"].judges.demands[0]
        assert (item["confirmations"], item["can_confirm"]) == (4, True)
        assert client_for(others[4].user).post(action_url(jg, "confirm_removal_demand", 1), {"demand": demand.public_id}
                                               ).status_code == 302
        stranger = client_for(jg.residents(2)[1].user)
        assert stranger.get(day_url(jg, 1)).context["day"].judges.demands == []
        # Removal demands are public in their game (inboxes.access): a resident of another city may name one, and
        # the service refuses his confirmation with a 403 that says why, recording nothing.
        refused = stranger.post(action_url(jg, "confirm_removal_demand", 1), {"demand": demand.public_id})
        assert refused.status_code == 403
        assert jg.cities[1].name in refused.content.decode()
        assert not demand.confirmations.filter(resident=jg.residents(2)[1]).exists()
    demand.refresh_from_db()
    assert demand.valid_at == DAY1 + timedelta(days=1)


def test_a_precinct_thread_shows_the_live_standing_of_the_election_L_JUDGE_4(jg):
    ann, ben = jg.residents(1)[:2]
    _, others = start(jg, 1, [ann, ben])
    vote(others[0], ann, PRO, 1)
    vote(others[1], ben, CON, 2)
    with time_machine.travel(OPENS + timedelta(minutes=10), tick=False):
        page = client_for(others[2].user).get(f"/inboxes/{precinct(ben).public_id}/")
    assert page.status_code == 200
    box = page.context["tally"]
    assert [(r.candidate, r.pros, r.cons, r.score) for r in box.rows] == [(ann.name, 1, 0, 1), (ben.name, 0, 1, -1)]
    assert 'class="tally-box precinct-box"' in page.content.decode()


def test_day_1_page_says_there_is_no_execution_voting_not_that_it_is_unscheduled_L_DAY_5(jg):
    # Found by the browser suite: on day 1 the city page said "Voting is not scheduled yet.", as if one would be.
    from django.utils import translation
    resident = jg.residents(1)[0]
    with time_machine.travel(DAY1 + timedelta(minutes=5), tick=False):
        page = client_for(resident.user).get(day_url(jg, 1)).content.decode()
    with translation.override("ru"):
        day_one = translation.gettext("Day 1: judge elections; there is no execution voting.")
        unscheduled = translation.gettext("Voting is not scheduled yet.")
    assert f'<p class="muted day-one">{day_one}</p>' in page
    assert unscheduled not in page
