"""Voting inboxes and precincts take posts only from those who vote there (L-VOTE-3, L-JUDGE-4): the Tribune who
runs a voting inbox and the Arbiter who runs a precinct read them but are refused a post, «казнить» included,
with a clear message, through the service and the page alike; the nominee's last word is still taken."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import override

from inboxes import policies, posting, services
from inboxes.models import Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import NotAllowed
from tests.conftest import fresh

STAFF_REFUSAL = "Only those who vote here post in this inbox; staff speak in the city inbox or the office."


@pytest.fixture
def voting(demo):
    city = demo.seat("honest").city
    residents = [demo.seat(p) for p in ("honest", "mafioso", "judge")]
    return services.do_create_inbox(demo.game, LepraInboxKind.VOTING, title="Голосование: X", city=city, acting_user=None,
                                    resident=demo.seat("judge"), members=residents)


@pytest.mark.parametrize("persona", ["tribune1", "procurator", "arbiter"])
@pytest.mark.parametrize("text", ["казнить", "Голосование идёт до 18:00."])
def test_staff_read_a_voting_inbox_but_may_not_post_there_L_VOTE_3(demo, voting, persona, text):
    user = fresh(getattr(demo, persona))
    assert policies.can_read_inbox(user, voting) is True
    with override("en"):
        assert policies.post_denial_reason(user, voting) == STAFF_REFUSAL
    with override("en"), pytest.raises(NotAllowed) as refused:
        posting.do_post_message(voting, text, acting_user=user, now=timezone.now())
    assert str(refused.value) == STAFF_REFUSAL
    assert not Message.objects.filter(inbox=voting).exists()


def test_the_page_refuses_the_tribunes_vote_with_the_reason_L_VOTE_3(demo, voting):
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(demo.tribune1)
    getter = getattr(voting, "get_absolute_url", None)
    url = getter() if getter else reverse("inbox_thread", args=[voting.public_id])
    response = client.post(url, {"text": "казнить"})
    assert response.status_code == 403
    assert not Message.objects.filter(inbox=voting).exists()


def test_the_arbiter_reads_a_precinct_but_may_not_post_there_L_JUDGE_4(demo):
    city = demo.seat("honest").city
    precinct = services.do_create_inbox(demo.game, LepraInboxKind.PRECINCT, title="Участок: X", city=city, acting_user=None,
                                        resident=demo.seat("honest"), members=[demo.seat("honest")])
    arbiter = fresh(demo.arbiter)
    assert policies.can_read_inbox(arbiter, precinct) is True
    with override("en"), pytest.raises(NotAllowed) as refused:
        posting.do_post_message(precinct, "Он - Ганди!", acting_user=arbiter)
    assert str(refused.value) == STAFF_REFUSAL
