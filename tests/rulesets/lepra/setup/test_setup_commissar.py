"""The commissar draw (L-COMM-1..4) through its pages: a mafioso cannot accept through any URL, the Procurator
sees "declined" and never why, at most three offers one after another, a city without a commissar is shown to
the Procurator only, and on acceptance the police station and the Tribune learn it."""
from __future__ import annotations

import pytest
from django.test import Client
from django.utils.translation import override

from cities.models import Alignment, City, Resident
from inboxes.models import Inbox, Membership
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import NotAllowed, WrongState
from rulesets.lepra.models import CommissarOffer
from rulesets.lepra import seats
from rulesets.lepra.setup import services as role_services
from tests.conftest import fresh, knows_rank
from tests.rulesets.lepra.setup.setup_helpers import FixedChoice
from tests.setup_factory import build_game, in_game_language


def _client(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def _offer_to(built, resident) -> CommissarOffer:
    return role_services.do_offer_commissar(resident.city, acting_user=built.procurator, rng=FixedChoice(resident))


def test_a_mafioso_offered_the_post_cannot_accept_through_any_url_L_COMM_2(db):
    built = build_game("numbers", slug="comm-mafia", cities=2, size=10)
    mafioso = Resident.objects.filter(game=built.game, alignment=Alignment.MAFIA).select_related("city").first()
    offer = _offer_to(built, mafioso)
    client = _client(mafioso.user)
    url = f"/games/{built.game.slug}/offers/{offer.public_id}/"
    page = client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'value="decline"' in html and 'value="accept"' not in html
    # Every way of saying "accept": the answer page by POST (with and without a reason), by GET parameters,
    # the offer's inbox, the setup steps, and the offer id of another form.
    refused = client.post(url, {"answer": "accept"})
    assert refused.status_code == 403
    assert in_game_language(built.game, "You cannot accept this offer: decline it.") in refused.content.decode()
    assert client.post(url, {"answer": "accept", "reason": "x"}).status_code == 400
    assert client.get(url + "?answer=accept").status_code == 200
    assert client.post(f"/games/{built.game.slug}/offers/{offer.public_id}x/", {"answer": "accept"}).status_code == 404
    assert client.post(f"/inboxes/{offer.inbox.public_id}/", {"text": "accept"}).status_code == 302  # just a message
    for step in ("offer-commissar", "site-numbers", "start-draw"):
        assert client.post(f"/games/{built.game.slug}/setup/{step}/", {"city": mafioso.city.public_id}).status_code == 404
    with override("en"), pytest.raises(NotAllowed, match="You cannot accept this offer: decline it."):
        role_services.do_answer_commissar_offer(offer, accept=True, acting_user=fresh(mafioso.user))
    offer.refresh_from_db()
    mafioso.refresh_from_db()
    assert offer.is_pending and offer.accepted is None and seats.is_commissar(mafioso) is False
    assert not Inbox.objects.filter(game=built.game, kind=LepraInboxKind.POLICE).exists()
    assert client.post(url, {"answer": "decline"}).status_code == 302
    offer.refresh_from_db()
    assert offer.accepted is False


def test_the_procurator_sees_declined_and_never_the_reason_L_COMM_2(db):
    built = build_game("numbers", slug="comm-reason", cities=2, size=10)
    honest = Resident.objects.filter(game=built.game, alignment=Alignment.HONEST, city__number=1).first()
    offer = _offer_to(built, honest)
    reason = "Moving house that fortnight"
    candidate = _client(honest.user)
    assert 'value="accept"' in candidate.get(f"/games/{built.game.slug}/offers/{offer.public_id}/").content.decode()
    assert candidate.post(f"/games/{built.game.slug}/offers/{offer.public_id}/",
                          {"answer": "decline", "reason": reason}).status_code == 302
    offer.refresh_from_db()
    assert offer.decline_reason == reason and offer.accepted is False
    proc = _client(built.procurator)
    urls = [f"/games/{built.game.slug}/setup/", f"/games/{built.game.slug}/", f"/games/{built.game.slug}/inboxes/",
            f"/inboxes/{offer.inbox.public_id}/"]
    pages = {u: proc.get(u) for u in urls}
    assert {u: r.status_code for u, r in pages.items()} == dict.fromkeys(urls, 200)
    html = "".join(r.content.decode() for r in pages.values())
    assert reason not in html
    declined = in_game_language(built.game, "%(name)s declined.", name=honest.name)
    assert declined in pages[f"/inboxes/{offer.inbox.public_id}/"].content.decode()
    assert f'data-answer="declined">1. {honest.name}:' in pages[f"/games/{built.game.slug}/setup/"].content.decode()
    # Nor through the offer page (404 for anyone but the candidate).
    for user in (built.procurator, built.staff["tribune1"], built.staff["consigliere"], None):
        assert _client(user).get(f"/games/{built.game.slug}/offers/{offer.public_id}/").status_code in (302, 404)


def test_offers_come_one_after_another_at_most_three_then_no_commissar_for_the_procurator_only_L_COMM_3(db):
    built = build_game("numbers", slug="comm-three", cities=2, size=10)
    city = City.objects.get(game=built.game, number=1)
    answered = []
    for n in range(1, 4):
        offer = role_services.do_offer_commissar(city, acting_user=built.procurator)
        assert offer.number == n and offer.candidate_id not in answered
        with override("en"), pytest.raises(WrongState, match="City 1: wait for the answer to the current offer."):
            role_services.do_offer_commissar(city, acting_user=built.procurator)
        role_services.do_answer_commissar_offer(offer, accept=False, acting_user=fresh(offer.candidate.user))
        answered.append(offer.candidate_id)
    with override("en"), pytest.raises(WrongState, match=r"City 1: no more offers \(at most three\)."):
        role_services.do_offer_commissar(city, acting_user=built.procurator)
    assert CommissarOffer.objects.filter(city=city).count() == 3
    assert role_services.city_commissar_state(city) == "none"
    setup_page = _client(built.procurator).get(f"/games/{built.game.slug}/setup/").content.decode()
    assert setup_page.count('class="no-commissar"') == 1
    # Nobody else has a page saying so: the setup page is the Procurator's, a 404 for the rest (L-STAFF-6).
    for user in (built.staff["tribune1"], built.staff["arbiter"], built.staff["consigliere"], built.players[0], None):
        assert _client(user).get(f"/games/{built.game.slug}/setup/").status_code in (302, 404)
        assert "no commissar" not in _client(user).get(f"/games/{built.game.slug}/").content.decode()


def test_acceptance_makes_the_commissar_joins_the_police_and_tells_the_tribune_L_COMM_4(db):
    built = build_game("numbers", slug="comm-accept", cities=2, size=10)
    honest1 = Resident.objects.filter(game=built.game, alignment=Alignment.HONEST, city__number=1).first()
    honest2 = Resident.objects.filter(game=built.game, alignment=Alignment.HONEST, city__number=2).first()
    for resident in (honest1, honest2):
        offer = _offer_to(built, resident)
        assert _client(resident.user).post(f"/games/{built.game.slug}/offers/{offer.public_id}/", {"answer": "accept"}).status_code == 302
        assert _client(resident.user).post(f"/games/{built.game.slug}/offers/{offer.public_id}/", {"answer": "decline"}).status_code == 409
    police = Inbox.objects.get(game=built.game, kind=LepraInboxKind.POLICE)
    assert set(Membership.objects.filter(inbox=police).values_list("resident__name", flat=True)) == {honest1.name, honest2.name}
    assert set(Resident.objects.filter(seats.rank_q("is_commissar"), game=built.game).values_list("name", flat=True)) == {honest1.name, honest2.name}
    with override("en"), pytest.raises(WrongState, match="City 1 already has its commissar."):
        role_services.do_offer_commissar(honest1.city, acting_user=built.procurator)
    t1 = _client(built.staff["tribune1"]).get(f"/games/{built.game.slug}/").content.decode()
    assert f"City 1: {honest1.name}" in t1 and f"City 2: {honest2.name}" not in t1
    honest1.refresh_from_db()
    assert knows_rank(fresh(built.staff["tribune1"]), honest1, "commissar") is True
    assert knows_rank(fresh(built.staff["tribune2"]), honest1, "commissar") is False
    assert knows_rank(fresh(built.staff["consigliere"]), honest1, "commissar") is False
    other = Resident.objects.filter(game=built.game, city__number=1).exclude(pk=honest1.pk).first()
    assert f"City 1: {honest1.name}" not in _client(other.user).get(f"/games/{built.game.slug}/").content.decode()


def test_only_the_candidate_answers_and_the_draw_follows_the_numbers_L_COMM_1(db):
    built = build_game("drawn", slug="comm-order", cities=2, size=10)
    city = City.objects.get(game=built.game, number=1)
    with override("en"), pytest.raises(WrongState, match="The commissar draw follows the mafia draw."):
        role_services.do_offer_commissar(city, acting_user=built.procurator)
    built2 = build_game("numbers", slug="comm-who", cities=2, size=10)
    city2 = City.objects.get(game=built2.game, number=1)
    offer = role_services.do_offer_commissar(city2, acting_user=built2.procurator)
    intruder = Resident.objects.filter(city=city2).exclude(pk=offer.candidate_id).first()
    with override("en"), pytest.raises(NotAllowed, match="No such offer."):
        role_services.do_answer_commissar_offer(offer, accept=False, acting_user=fresh(intruder.user))
    assert _client(intruder.user).post(f"/games/{built2.game.slug}/offers/{offer.public_id}/", {"answer": "decline"}).status_code == 404
    assert _client(built2.procurator).post(f"/games/{built2.game.slug}/offers/{offer.public_id}/", {"answer": "decline"}).status_code == 404
    offer.refresh_from_db()
    assert offer.is_pending


def test_the_offer_link_in_the_offer_inbox_takes_the_procurator_to_his_setup_step_not_a_404_L_COMM_1(db):
    built = build_game("numbers", slug="comm-link", cities=2, size=10)
    honest = Resident.objects.filter(game=built.game, alignment=Alignment.HONEST, city__number=1).first()
    offer = _offer_to(built, honest)
    url = f"/games/{built.game.slug}/offers/{offer.public_id}/"
    proc = _client(built.procurator)
    # The offer inbox, which the Procurator reads, links the answer page: following it is no dead end for him...
    assert f'href="{url}"' in proc.get(f"/inboxes/{offer.inbox.public_id}/").content.decode()
    page = proc.get(url)
    assert (page.status_code, page["Location"]) == (302, f"/games/{built.game.slug}/setup/#step-commissars")
    # ...but he answers nothing, and nobody else is sent anywhere.
    assert proc.post(url, {"answer": "decline"}).status_code == 404
    for user in (built.staff["tribune1"], built.staff["consigliere"]):
        assert _client(user).get(url).status_code == 404
    offer.refresh_from_db()
    assert offer.is_pending
