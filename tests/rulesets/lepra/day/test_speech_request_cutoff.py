"""Confrontation and last-word requests (L-NOM-4) close at the planned opening of the city's voting, as nominations
and proxy requests do, however late the clock opens it; a late request is refused with the planned time in words."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import translation

from kernel.errors import WrongState
from cities.models import GameEvent
from tests.rulesets.lepra.day.day_helpers import CLOSES, MORNING, OPENS, US, city1_day, ru
from rulesets.lepra.models import SpeechRequest
from rulesets.lepra.day.services import _local, do_nominate, do_open_voting, do_schedule_voting
from rulesets.lepra.court.services import do_request_speech

REFUSAL = ("Requests for today closed when voting opened at %(at)s: a confrontation or a last word is asked for "
           "before the voting.")


def _scheduled(demo):
    day = city1_day(demo)
    do_nominate(day.plain[0], acting_user=day.plain[5].user, now=MORNING)
    session = do_schedule_voting(day.city, OPENS, CLOSES, acting_user=demo.tribune1, now=MORNING)
    return day, session


def test_a_request_before_the_planned_opening_is_recorded_L_NOM_4(demo):
    day, _session = _scheduled(demo)
    request = do_request_speech(demo.game, "last_word", acting_user=day.plain[1].user, now=OPENS - US)
    assert (request.resident, request.kind, request.at) == (day.plain[1], "last_word", OPENS - US)


def test_a_request_at_the_planned_opening_is_refused_though_the_clock_is_late_L_NOM_4(demo):
    day, session = _scheduled(demo)
    with translation.override("en"):
        expected = REFUSAL % {"at": _local(demo.game, OPENS, day.plain[1].user)}
        for now in (OPENS, OPENS + timedelta(minutes=40)):  # the clock has not opened it yet
            with pytest.raises(WrongState) as refused:
                do_request_speech(demo.game, "confrontation", other=day.plain[2], acting_user=day.plain[1].user,
                                  now=now)
            assert str(refused.value) == expected
    do_open_voting(session, acting_user=None, now=OPENS + timedelta(hours=1))
    with translation.override("en"), pytest.raises(WrongState) as refused:
        do_request_speech(demo.game, "last_word", acting_user=day.plain[1].user, now=OPENS + timedelta(hours=2))
    assert str(refused.value) == expected
    assert not SpeechRequest.objects.exists()
    assert not GameEvent.objects.filter(kind="voting.speech_requested").exists()


def test_an_early_opening_closes_requests_at_that_moment_L_NOM_4(demo):
    day, session = _scheduled(demo)
    early = OPENS - timedelta(hours=2)
    do_open_voting(session, acting_user=demo.tribune1, now=early)
    with translation.override("en"):
        with pytest.raises(WrongState) as refused:
            do_request_speech(demo.game, "last_word", acting_user=day.plain[1].user, now=early + US)
        assert str(refused.value) == REFUSAL % {"at": _local(demo.game, early, day.plain[1].user)}


def test_the_nomination_page_says_when_requests_closed_L_NOM_4(demo, client):
    day, _session = _scheduled(demo)
    client.force_login(day.plain[1].user)
    with time_machine.travel(OPENS + timedelta(minutes=5), tick=False):
        response = client.post(reverse("request_last_word", args=[demo.game.slug]), {"note": ""})
    assert response.status_code == 409
    with translation.override("ru"):
        at = _local(demo.game, OPENS, day.plain[1].user)
    assert ru(REFUSAL, at=at) in response.content.decode()
    assert not SpeechRequest.objects.exists()
