"""Each button of the city day page and of the nomination page posts its own form to its own URL, and the service
decides who may (RULES.md L-NOM-6, L-COURT-4, L-JUDGE-9): the success changes exactly what it should; a refusal
gives the service's reason with its status (page_status) and changes nothing."""
from __future__ import annotations

from datetime import timedelta

import time_machine
from django.urls import reverse

from cities.models import GameEvent
from rulesets.lepra.court import judge_services
from rulesets.lepra.court.services import do_put_before_court
from rulesets.lepra.day.services import do_nominate
from tests.rulesets.lepra.day.day_helpers import (  # noqa: F401 - english: the autouse fixture
    CLOSES,
    MORNING,
    US,
    city1_day,
    day_action,
    english,
    ru,
    tied_session,
)
from rulesets.lepra.models import CourtCase, ProxyRequest, ProxyState


def _events(demo) -> int:
    return GameEvent.objects.filter(game=demo.game).count()


def test_a_proxy_vote_is_asked_and_accepted_each_at_its_own_url_L_NOM_6(demo, client):
    day = city1_day(demo)
    nominee, asker = day.plain[0], day.plain[5]
    with time_machine.travel(MORNING, tick=False):
        do_nominate(nominee, acting_user=day.plain[4].user, now=MORNING)
        client.force_login(asker.user)
        asked = client.post(reverse("request_proxy", args=[demo.game.slug]), {"nominee": nominee.public_id})
        assert asked.status_code == 302 and asked.url == reverse("nominate", args=[demo.game.slug])
        proxy = ProxyRequest.objects.get(resident=asker)
        assert (proxy.nominee, proxy.state) == (nominee, ProxyState.REQUESTED)
        # The resident may name their own request, but only the Tribune accepts it: the service's 403.
        before = _events(demo)
        refused = client.post(day_action(demo, "accept_proxy"), {"proxy": proxy.public_id})
        assert refused.status_code == 403
        assert ru("Only the Tribune of %(city)s may do this.", city=day.city.name) in refused.content.decode()
        proxy.refresh_from_db()
        assert proxy.state == ProxyState.REQUESTED and _events(demo) == before
        client.force_login(demo.tribune1)
        accepted = client.post(day_action(demo, "accept_proxy"), {"proxy": proxy.public_id})
    assert accepted.status_code == 302 and accepted.url == reverse("city_day", args=[demo.game.slug, 1])
    proxy.refresh_from_db()
    assert proxy.state == ProxyState.ACCEPTED
    assert list(ProxyRequest.objects.filter(resident=asker).values_list("state", flat=True)) == [ProxyState.ACCEPTED]


def test_a_proxy_for_a_resident_nobody_nominated_is_refused_with_the_reason_L_NOM_6(demo, client):
    day = city1_day(demo)
    client.force_login(day.plain[5].user)
    before = _events(demo)
    with time_machine.travel(MORNING, tick=False):
        refused = client.post(reverse("request_proxy", args=[demo.game.slug]), {"nominee": day.plain[0].public_id})
    assert refused.status_code == 400
    assert ru("%(name)s is not nominated today.", name=day.plain[0].name) in refused.content.decode()
    assert not ProxyRequest.objects.exists() and _events(demo) == before


def test_the_arbiter_closes_the_court_case_at_its_own_url_and_nobody_else_may_L_COURT_4(demo, client):
    _day, _a, _b, session = tied_session(demo)
    url = day_action(demo, "close_court_case")
    client.force_login(demo.arbiter)
    with time_machine.travel(CLOSES + timedelta(minutes=1), tick=False):
        none = client.post(url)  # nothing before the court yet: the page says so
        assert none.status_code == 409
        assert ru("No result of this city is before the Supreme Court today.") in none.content.decode()
        case = do_put_before_court(session, CLOSES + timedelta(minutes=50), acting_user=demo.arbiter,
                                   now=CLOSES + US)
        before = _events(demo)
        client.force_login(demo.tribune1)
        refused = client.post(url)
        assert refused.status_code == 403
        assert ru("Only the Supreme Arbiter closes a court case.") in refused.content.decode()
        assert CourtCase.objects.get(pk=case.pk).decided_at is None and _events(demo) == before
        client.force_login(demo.arbiter)
        closed = client.post(url)
    assert closed.status_code == 302
    case.refresh_from_db()
    assert case.decided_at == CLOSES + timedelta(minutes=1) and case.sentenced is not None


def test_the_sitting_judge_resigns_at_its_own_url_and_another_resident_may_not_L_JUDGE_9(demo, client):
    day = city1_day(demo)
    judge = judge_services.sitting_judge_of(day.city)
    url = day_action(demo, "recuse_judge")
    before = _events(demo)
    client.force_login(day.plain[0].user)
    with time_machine.travel(MORNING, tick=False):
        refused = client.post(url)
        assert refused.status_code == 403
        assert ru("Only the judge or the Supreme Arbiter may record a recusal.") in refused.content.decode()
        assert judge_services.sitting_judge_of(day.city) == judge and _events(demo) == before
        client.force_login(judge.user)
        page = client.get(reverse("city_day", args=[demo.game.slug, 1])).content.decode()
        assert f'action="{url}"' in page
        resigned = client.post(url)
    assert resigned.status_code == 302
    assert judge_services.sitting_judge_of(day.city) is None
    assert GameEvent.objects.filter(game=demo.game).count() > before
