"""Refusals say why and change nothing (issue found in play): the Arbiter putting a case before the court twice
(L-COURT-1), a judge's second court vote (L-COURT-3), a complaint of no confidence from someone who may not
complain (L-IMPEACH-3); the removal demand after the cut-off is refused at once (tests/rulesets/lepra/court)."""
from __future__ import annotations

from datetime import timedelta

import time_machine
from django.urls import reverse

from cities.models import Resident
from inboxes.membership_services import do_kill_resident
from inboxes.models import DeathCause
from rulesets.lepra import seats
from rulesets.lepra.court.services import do_court_vote, do_put_before_court
from rulesets.lepra.models import NoConfidenceCase
from tests.rulesets.lepra.day.day_helpers import CLOSES, MORNING, US, day_action, ru, tied_session
from rulesets.lepra.models import CourtCase, CourtVote

DEADLINE = CLOSES + timedelta(minutes=50)


def test_a_second_put_before_the_court_is_refused_with_its_reason_L_COURT_1(demo, client):
    _day, _a, _b, session = tied_session(demo)
    do_put_before_court(session, DEADLINE, acting_user=demo.arbiter, now=CLOSES + US)
    client.force_login(demo.arbiter)
    with time_machine.travel(CLOSES + timedelta(minutes=1), tick=False):
        response = client.post(day_action(demo, "put_before_court"),
                               {"deadline": "2026-11-20T23:55"})
    assert response.status_code == 409
    assert ru("This result is already before the court.") in response.content.decode()
    assert CourtCase.objects.count() == 1


def test_a_judges_second_court_vote_is_refused_with_its_reason_L_COURT_3(demo, client):
    _day, a, b, session = tied_session(demo)
    case = do_put_before_court(session, DEADLINE, acting_user=demo.arbiter, now=CLOSES + US)
    judge = Resident.objects.filter(seats.rank_q("is_judge"), game=demo.game).order_by("pk").first()
    do_court_vote(case, a, acting_user=judge.user, now=CLOSES + 2 * US)
    client.force_login(judge.user)
    with time_machine.travel(CLOSES + timedelta(minutes=1), tick=False):
        response = client.post(day_action(demo, "court_vote"),
                               {"choice": b.public_id, "confirmed": "yes"})
    assert response.status_code == 400
    assert ru("You have already voted in this case.") in response.content.decode()
    assert list(CourtVote.objects.filter(case=case).values_list("judge_id", "choice_id")) == [(judge.pk, a.pk)]


def test_a_complaint_of_no_confidence_from_the_dead_or_a_non_mafioso_is_refused_with_its_reason_L_IMPEACH_3(
        demo, client):
    honest = demo.seat("honest")
    client.force_login(demo.honest)
    with time_machine.travel(MORNING, tick=False):
        response = client.post(reverse("no_confidence_consigliere", args=[demo.game.slug]), {"mafia-text": ""})
    assert response.status_code == 403
    assert ru("Only the living mafia of a city may express no confidence in the Consigliere.") in (
        response.content.decode())
    do_kill_resident(honest, DeathCause.KILLED, acting_user=None, now=MORNING)
    with time_machine.travel(MORNING + timedelta(minutes=1), tick=False):
        response = client.post(reverse("no_confidence_arbiter", args=[demo.game.slug]), {"arbiter-text": ""})
    assert response.status_code == 403
    assert ru("Only living residents may express no confidence.") in response.content.decode()
    assert not NoConfidenceCase.objects.exists()
