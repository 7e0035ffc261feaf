"""The Lepra day through the browser forms and the scheduler (issue 4): nominate, schedule, vote «казнить» in a
voting inbox and see the standing tally; the scheduler closes at closes_at and posts the result exactly once."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import translation

from cities.models import ScheduledEvent
from cities.scheduler import dispatch_due_events
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from rulesets.lepra.day.services import do_nominate
from tests.rulesets.lepra.day.day_helpers import (
    CLOSES,
    MORNING,
    OPENS,
    US,
    _before_the_court,
    city1_day,
    day_action,
    nominate_and_open,
    ru,
)
from rulesets.lepra.models import LepraVote, Nomination, VotingSession


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def test_resident_nominates_from_the_personal_inbox_page_L_NOM_1(demo, client):
    day = city1_day(demo)
    voter, nominee = day.plain[5], day.plain[0]
    personal = Inbox.objects.get(kind=LepraInboxKind.PERSONAL, resident=voter)
    client.force_login(voter.user)
    with time_machine.travel(MORNING, tick=False):
        page = client.get(reverse("inbox_thread", args=[personal.public_id]))
        assert reverse("nominate", args=[demo.game.slug]) in page.content.decode()
        response = client.post(reverse("nominate_resident", args=[demo.game.slug]), {"nominee": nominee.public_id})
        assert response.status_code == 302
        again = client.post(reverse("nominate_resident", args=[demo.game.slug]), {"nominee": day.plain[1].public_id})
    assert again.status_code == 400
    assert Nomination.objects.get(nominator=voter).nominee == nominee


def test_tribune_sees_nominations_and_others_do_not_before_voting_L_NOM_1(demo, client):
    day = city1_day(demo)
    do_nominate(day.plain[0], acting_user=day.plain[5].user, now=MORNING)
    url = reverse("city_day", args=[demo.game.slug, 1])
    client.force_login(demo.tribune1)
    html = client.get(url).content.decode()
    assert f"{day.plain[5].name} → <strong>{day.plain[0].name}</strong>" in html
    client.force_login(day.plain[6].user)
    html = client.get(url).content.decode()
    assert day.plain[5].name not in html


def test_tribune_schedules_voting_from_the_city_day_page_L_DAY_3(demo, client):
    day = city1_day(demo)
    client.force_login(demo.tribune1)
    with time_machine.travel(MORNING, tick=False):
        late = client.post(day_action(demo, "schedule_voting"), {"opens_at": "2026-11-20T18:00", "closes_at": "2026-11-21T00:01"})
        assert late.status_code == 400
        ok = client.post(day_action(demo, "schedule_voting"), {"opens_at": "2026-11-20T18:00", "closes_at": "2026-11-20T23:00"})
    assert ok.status_code == 302
    session = VotingSession.objects.get(city=day.city, day=2)
    assert (session.opens_at, session.closes_at) == (OPENS, CLOSES)
    assert list(ScheduledEvent.objects.filter(payload__session=session.pk).order_by("due_at")
                .values_list("kind", "due_at")) == [("voting_open", OPENS), ("voting_close", CLOSES)]


def test_posting_kaznit_in_the_browser_shows_in_the_tally_box_L_VOTE_2_L_VOTE_4(demo, client):
    day = city1_day(demo)
    nominee, voter = day.plain[0], day.plain[5]
    nominate_and_open(demo, day, [nominee])
    inbox = day.inbox_of(nominee)
    url = reverse("inbox_thread", args=[inbox.public_id])
    client.force_login(voter.user)
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=False):
        response = client.post(url, {"text": "казнить"})
        assert response.status_code == 302
        flood = client.post(url, {"text": "казнить, он мафия"})
        assert flood.status_code == 400
        assert ru("Only «казнить» or «не казнить» can be posted here.") in flood.content.decode()
        twice = client.post(url, {"text": "казнить"})
        assert twice.status_code == 400
        assert ru("You already vote here: this vote does not count again.") in twice.content.decode()
        page = client.get(url).content.decode()
    box = page[page.index('class="tally-box"'):page.index("</section>", page.index('class="tally-box"'))]
    assert '<td class="count">1</td>' in box
    assert f"<td>{voter.name}</td>" in box
    assert f"{ru('Leader')}: <strong>{nominee.name}</strong>" in box
    client.force_login(demo.tribune1)
    day_page = client.get(reverse("city_day", args=[demo.game.slug, 1])).content.decode()
    assert f"<td>{voter.name}</td>" in day_page
    assert LepraVote.objects.filter(inbox=inbox).count() == 1


def test_scheduler_opens_and_closes_voting_and_posts_the_result_once_L_VOTE_6_L_VOTE_8(demo):
    from rulesets.lepra.day.services import do_schedule_voting
    day = city1_day(demo)
    nominee = day.plain[0]
    do_nominate(nominee, acting_user=day.plain[4].user, now=MORNING)
    do_schedule_voting(day.city, OPENS, CLOSES, acting_user=demo.tribune1, now=MORNING)
    dispatch_due_events(now=OPENS)
    inbox = day.inbox_of(nominee)
    from inboxes.posting import do_post_message
    do_post_message(inbox, "казнить", acting_user=day.plain[5].user, now=CLOSES - US)
    city_inbox = Inbox.objects.filter(kind=LepraInboxKind.CITY, city=day.city, rolled_over_at__isnull=True).get()
    before = Message.objects.filter(inbox=city_inbox).count()
    dispatch_due_events(now=CLOSES - US)
    assert VotingSession.objects.get(city=day.city).closed_at is None
    dispatch_due_events(now=CLOSES + timedelta(seconds=40))  # the tick comes late: the cut-off stays closes_at
    dispatch_due_events(now=CLOSES + timedelta(seconds=70))
    session = VotingSession.objects.get(city=day.city)
    assert session.closed_at == CLOSES + timedelta(seconds=40)
    assert session.result["nominees"][0]["voters"] == [str(day.plain[5].pk)]
    assert Message.objects.filter(inbox=city_inbox).count() == before + 1
    assert Inbox.objects.get(pk=inbox.pk).killed_at == CLOSES + timedelta(seconds=40)


def test_suicide_declared_on_the_nominate_page_and_confirmed_on_the_day_page_L_NOM_5(demo, client):
    from rulesets.lepra.models import SuicideDeclaration
    day = city1_day(demo)
    resident = day.plain[4]
    client.force_login(resident.user)
    with time_machine.travel(MORNING, tick=False):
        assert client.post(reverse("declare_suicide", args=[demo.game.slug]), {"confirmed": "yes"}).status_code == 302
        declaration = SuicideDeclaration.objects.get(resident=resident)
        client.force_login(demo.tribune1)
        response = client.post(day_action(demo, "confirm_suicide"), {"declaration": declaration.public_id})
    assert response.status_code == 302
    declaration.refresh_from_db()
    assert declaration.confirmed_at == MORNING


def test_procurator_names_the_executed_from_the_day_page_L_VOTE_7(demo, client):
    from cities.models import LifeStatus, Resident
    day = city1_day(demo)
    url = reverse("city_day", args=[demo.game.slug, 1])
    client.force_login(day.plain[6].user)
    assert ru("Awaiting the Procurator's decision.").replace("'", "&#x27;") in client.get(url).content.decode()
    decide = day_action(demo, "decide_execution")
    refused = client.post(decide, {"resident": day.plain[2].public_id})  # the service decides who may
    assert refused.status_code == 403
    assert ru("Only the Procurator names the executed when nobody was voted for.").replace("'", "&#x27;") \
        in refused.content.decode()
    assert Resident.objects.get(pk=day.plain[2].pk).status == LifeStatus.ALIVE
    client.force_login(demo.procurator)
    assert client.post(decide, {"resident": day.plain[2].public_id}).status_code == 302
    assert Resident.objects.get(pk=day.plain[2].pk).status == LifeStatus.DEAD
    assert f"<strong>{day.plain[2].name}</strong>" in client.get(url).content.decode()


def test_day_page_shows_nominees_publicly_once_voting_opens_but_tallies_only_to_readers_L_INBOX_20(demo, client):
    day = city1_day(demo)
    nominee, nominator, voter = day.plain[0], day.plain[4], day.plain[5]
    url = reverse("city_day", args=[demo.game.slug, 1])
    do_nominate(nominee, acting_user=nominator.user, now=MORNING)
    assert nominee.name not in client.get(url).content.decode()  # anonymous, before the opening
    from rulesets.lepra.day.services import do_open_voting, do_schedule_voting
    session = do_schedule_voting(day.city, OPENS, CLOSES, acting_user=demo.tribune1, now=MORNING)
    do_open_voting(session, acting_user=None, now=OPENS)
    from inboxes.posting import do_post_message
    do_post_message(day.inbox_of(nominee), "казнить", acting_user=voter.user, now=OPENS + US)
    for viewer in (None, demo.resident2):
        if viewer is None:
            client.logout()
        else:
            client.force_login(viewer)
        html = client.get(url).content.decode()
        assert f"<li>{nominee.name}</li>" in html
        assert voter.name not in html and nominator.name not in html and 'class="tally-box"' not in html
    client.force_login(day.plain[9].user)  # a resident of the city reads the voting inboxes
    html = client.get(url).content.decode()
    assert f"<td>{voter.name}</td>" in html
    assert nominator.name not in html  # who nominated whom stays with the Tribune, Procurator and Arbiter


def test_confrontation_request_is_seen_by_the_tribune_and_the_procurator_only_L_NOM_4(demo, client):
    from rulesets.lepra.models import SpeechKind, SpeechRequest
    day = city1_day(demo)
    asker, other = day.plain[4], day.plain[8]
    client.force_login(asker.user)
    with time_machine.travel(MORNING, tick=False):
        response = client.post(reverse("request_confrontation", args=[demo.game.slug]),
                               {"other": other.public_id, "note": "при всех"})
    assert response.status_code == 302
    request = SpeechRequest.objects.get(resident=asker)
    assert (request.kind, request.other, request.note) == (SpeechKind.CONFRONTATION, other, "при всех")
    url = reverse("city_day", args=[demo.game.slug, 1])
    line = f"{asker.name}: {ru('confrontation')} — {other.name} · при всех"
    for viewer, sees in ((demo.tribune1, True), (demo.procurator, True), (demo.arbiter, False),
                         (demo.tribune2, False), (day.plain[9].user, False)):
        client.force_login(viewer)
        assert (line in client.get(url).content.decode()) is sees


def test_arbiter_puts_the_result_before_the_court_and_a_judge_votes_on_the_day_page_L_COURT_1_L_COURT_2(demo, client):
    from cities.models import Resident
    from inboxes.posting import do_post_message
    from rulesets.lepra.day.services import do_close_voting
    from rulesets.lepra.models import CourtCase
    day = city1_day(demo)
    a = day.plain[0]
    session = nominate_and_open(demo, day, [a])
    do_post_message(day.inbox_of(a), "казнить", acting_user=day.plain[5].user, now=OPENS + US)
    do_close_voting(session, acting_user=None, now=CLOSES)
    url = reverse("city_day", args=[demo.game.slug, 1])
    client.force_login(demo.arbiter)
    with time_machine.travel(CLOSES + timedelta(minutes=1), tick=False):
        assert client.post(day_action(demo, "put_before_court"), {"deadline": "2026-11-20T23:50"}).status_code == 302
        case = CourtCase.objects.get(session=session)
        assert case.candidates == [str(a.pk)]
        judges = list(Resident.objects.filter(seats.rank_q("is_judge"), game=demo.game).order_by("city__number"))
        for judge in judges[:2]:
            client.force_login(judge.user)
            assert client.post(day_action(demo, "court_vote"), {"choice": a.public_id, "confirmed": "yes"}).status_code == 302
    case.refresh_from_db()
    assert (case.sentenced, case.fallback) == (a, False)
    assert f"<strong>{a.name}</strong>" in client.get(url).content.decode()


def test_a_judges_court_vote_is_confirmed_by_a_message_saying_what_was_recorded_L_COURT_2(demo, client):
    from cities.models import Resident
    from rulesets.lepra.models import CourtVote
    url, a = _before_the_court(demo, client)
    with time_machine.travel(CLOSES + timedelta(minutes=1), tick=False):
        assert client.post(day_action(demo, "put_before_court"), {"deadline": "2026-11-20T23:50"}).status_code == 302
        judge = Resident.objects.filter(seats.rank_q("is_judge"), game=demo.game).order_by("city__number").first()
        client.force_login(judge.user)
        page = client.get(url).content.decode()
        assert 'type="radio" name="choice"' in page and f'value="{a.public_id}"' in page
        asked = client.post(day_action(demo, "court_vote"), {"choice": a.public_id})
        assert asked.status_code == 200 and 'class="inline confirm-form"' in asked.content.decode()
        assert not CourtVote.objects.filter(judge=judge).exists()  # the first step records nothing
        voted = client.post(day_action(demo, "court_vote"), {"choice": a.public_id, "confirmed": "yes"}, follow=True)
    assert voted.status_code == 200
    shown = [str(m) for m in voted.context["messages"]]
    assert shown == [ru("Your vote is recorded: you confirm the sentence of %(name)s. A judge's vote cannot be "
                        "changed.", name=a.name)]
    assert list(CourtVote.objects.filter(judge=judge).values_list("choice", flat=True)) == [a.pk]
    assert 'name="choice"' not in voted.content.decode()  # voted: the form is gone


def test_a_court_vote_without_a_choice_is_a_form_error_and_records_nothing_L_COURT_2(demo, client):
    from cities.models import Resident
    from rulesets.lepra.models import CourtVote
    _url, _nominee = _before_the_court(demo, client)
    with time_machine.travel(CLOSES + timedelta(minutes=1), tick=False):
        client.post(day_action(demo, "put_before_court"), {"deadline": "2026-11-20T23:50"})
        judge = Resident.objects.filter(seats.rank_q("is_judge"), game=demo.game).order_by("city__number").first()
        client.force_login(judge.user)
        for bad in ({}, {"choice": "nobody123456"}, {"choice": demo.seat("judge").public_id}):
            refused = client.post(day_action(demo, "court_vote"), {**bad})
            assert refused.status_code == 400
            form = refused.content.decode().split('class="court-vote"')[1].split("</form>")[0]
            assert 'class="errorlist' in form
    assert CourtVote.objects.count() == 0


def test_an_error_on_the_court_form_keeps_the_tally_and_shows_the_error_inside_the_form_L_COURT_1(demo, client):
    from rulesets.lepra.models import CourtCase
    url, a = _before_the_court(demo, client)
    with time_machine.travel(CLOSES + timedelta(minutes=1), tick=False):
        shown = client.get(url).content.decode()
        for bad in ("", "yesterday", "2026-11-19T10:00"):
            refused = client.post(day_action(demo, "put_before_court"), {"deadline": bad})
            assert refused.status_code == 400
            page = refused.content.decode()
            assert 'class="tally-box"' in shown and 'class="tally-box"' in page
            assert a.name in page.split('class="tally-box"')[1].split("</section>")[0]
            form = page.split('class="inline court-form"')[1].split("</form>")[0]
            assert 'class="errorlist' in form
    assert CourtCase.objects.count() == 0


def test_tribune_extends_and_closes_voting_from_the_day_page_L_DAY_3_L_VOTE_6(demo, client):
    day = city1_day(demo)
    session = nominate_and_open(demo, day, [day.plain[0]])
    client.force_login(demo.tribune1)
    with time_machine.travel(OPENS + timedelta(minutes=5), tick=False):
        late = client.post(day_action(demo, "extend_voting"), {"closes_at": "2026-11-21T00:30"})
        assert late.status_code == 400
        assert ru("Voting must close no later than 00:00 (%(midnight)s).").split("(")[0] in late.content.decode()
        assert client.post(day_action(demo, "extend_voting"), {"closes_at": "2026-11-20T23:30"}).status_code == 302
        session.refresh_from_db()
        assert session.closes_at == CLOSES + timedelta(minutes=30)
        assert client.post(day_action(demo, "close_voting"), {"confirmed": "yes"}).status_code == 302
    session.refresh_from_db()
    assert (session.closed_at, session.closes_at) == (OPENS + timedelta(minutes=5), OPENS + timedelta(minutes=5))


def test_refusals_on_the_day_and_nominate_pages_say_why_with_their_status_not_500(demo, client):
    day = city1_day(demo)
    client.force_login(day.plain[4].user)
    with time_machine.travel(MORNING, tick=False):
        assert client.post(reverse("declare_suicide", args=[demo.game.slug]), {"confirmed": "yes"}).status_code == 302
        again = client.post(reverse("declare_suicide", args=[demo.game.slug]), {"confirmed": "yes"})
        assert again.status_code == 400
        assert ru("You have already declared suicide today.") in again.content.decode()
        lonely = client.post(reverse("request_confrontation", args=[demo.game.slug]), {"other": ""})
        assert lonely.status_code == 400
        assert ru("Choose another living resident for the confrontation.") in lonely.content.decode()
        judge = client.post(reverse("nominate_resident", args=[demo.game.slug]), {"nominee": demo.seat("judge").pk})
        assert judge.status_code == 400  # the sitting judge is not even offered (L-NOM-2)
    client.force_login(demo.tribune1)
    nominate_and_open(demo, city1_day(demo), [day.plain[0]])
    with time_machine.travel(OPENS + US, tick=False):
        opened = client.post(day_action(demo, "open_voting"), {})
    assert opened.status_code == 409
    assert ru("Voting has already opened.") in opened.content.decode()


def test_nominate_page_chooses_nobody_in_advance_and_an_empty_choice_is_a_form_error_L_NOM_1(demo, client):
    day = city1_day(demo)
    voter = day.plain[5]
    client.force_login(voter.user)
    url = reverse("nominate", args=[demo.game.slug])
    with time_machine.travel(MORNING, tick=False):
        page = client.get(url).content.decode()
        select = page[page.index('<select name="nominee"'):page.index("</select>", page.index('<select name="nominee"'))]
        assert select.count("<option") == len(day.plain) + 1  # the placeholder and every candidate
        assert 'value="" selected' in select and select.count("selected") == 1
        response = client.post(reverse("nominate_resident", args=[demo.game.slug]), {"nominee": ""})
    assert response.status_code == 400
    assert 'class="errorlist"' in response.content.decode()
    assert not Nomination.objects.filter(nominator=voter).exists()
