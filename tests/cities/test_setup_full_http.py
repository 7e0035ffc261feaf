"""A whole Lepra setup driven through HTTP requests only (issue 3): 60 sign-ups, three cities of 20, the staff,
the city lists (L-CITY-4), the mafia draw with its commitment (L-ASSIGN), the commissar offers (L-COMM), and the
inboxes and memberships that result, asserted exactly. The test reads the database only to check results and
to know which account holds which seat; every change is made by a request."""
from __future__ import annotations

import random

import pytest
from django.test import Client

from cities.models import (
    Alignment,
    City,
    Game,
    GameEvent,
    GameStatus,
    PostKind,
    PublicPost,
    Resident,
    Signup,
    StaffRole,
)
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from roles import draw
from rulesets.lepra.models import CommissarOffer, MafiaDraw
from rulesets.lepra import seats
from tests.setup_factory import in_game_language

SLUG = "lepra-autumn"


@pytest.fixture
def seeded(monkeypatch):
    """Make the site's generators reproducible for this test (production uses secrets.SystemRandom)."""
    rng = random.Random(20261130)
    monkeypatch.setattr("rulesets.lepra.setup.services.system_rng", lambda: rng)
    monkeypatch.setattr("cities.recruitment_services.system_rng", lambda: rng)
    return rng


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _ok(response, status=302):
    assert response.status_code == status, response.content.decode()[:2000]
    return response


def test_full_setup_through_http_L_CITY_L_ASSIGN_L_COMM(db, django_user_model, seeded):
    make = django_user_model.objects.create_user
    host = make("s_host", "host@example.com", "x-secret-123", display_name="Host_Procurator")
    staff = {k: make(f"s_{k}", f"{k}@example.com", "x-secret-123", display_name=f"Staff_{k}")
             for k in ("trib1", "trib2", "trib3", "arbiter", "consig")}
    players = [make(f"p{i:02d}", f"p{i:02d}@example.com", "x-secret-123", display_name=f"Player{i:02d}")
               for i in range(1, 61)]
    proc = _client(host)

    # The Procurator creates the game and publishes the recruitment post (L-POST-1); the page names the host as
    # the default ruleset (Lepra) does, in the nominative.
    assert ("Вы ведёте игру как её Прокурор: публикуете пост набора, формируете города и назначаете ведущих."
            in proc.get("/new-game/").content.decode())
    _ok(proc.post("/new-game/", {"title": "Lepra autumn", "slug": SLUG, "rules_text": "Classic Lepra rules.",
                                 "time_zone": "Europe/Moscow", "city_size": "20", "day_start": "10:00"}))
    game = Game.objects.get(slug=SLUG)
    assert StaffRole.objects.get(game=game, kind="procurator").user == host
    _ok(proc.post(f"/games/{SLUG}/setup/recruitment-post/", {"title": "Recruitment", "body": ""}))
    post = PublicPost.objects.get(game=game, kind=PostKind.RECRUITMENT)
    assert post.body == "Classic Lepra rules." and post.published_at is not None

    # 60 players sign up with one click; one withdraws and signs up again; staff cannot sign up.
    for user in players:
        _ok(_client(user).post(f"/games/{SLUG}/signup/"))
    _ok(_client(players[0]).post(f"/games/{SLUG}/signup/withdraw/"))
    _ok(_client(players[0]).post(f"/games/{SLUG}/signup/"))
    assert proc.post(f"/games/{SLUG}/signup/").status_code == 403
    assert Signup.objects.filter(game=game, withdrawn_at__isnull=True).count() == 60
    assert Signup.objects.filter(game=game).count() == 61

    # Close, form three cities of 20 at random, appoint the staff, publish the lists (L-CITY-4).
    _ok(proc.post(f"/games/{SLUG}/setup/close-signups/"))
    assert _client(players[1]).post(f"/games/{SLUG}/signup/withdraw/").status_code == 409
    _ok(proc.post(f"/games/{SLUG}/setup/form-cities/", {"names": "Alpha\nBeta\nGamma"}))
    cities = list(City.objects.filter(game=game).order_by("number"))
    assert [c.name for c in cities] == ["Alpha", "Beta", "Gamma"]
    assert [c.residents.count() for c in cities] == [20, 20, 20]
    assert set(Resident.objects.filter(game=game).values_list("user", flat=True)) == {u.pk for u in players}
    # The appointment form's city is for the game's city role, by its Lepra name.
    assert "Город (для роли «Трибун»)" in proc.get(f"/games/{SLUG}/setup/").content.decode()
    for n, city in enumerate(cities, 1):
        _ok(proc.post(f"/games/{SLUG}/setup/appoint/", {"kind": "tribune", "username": f"s_trib{n}", "city": city.public_id}))
    _ok(proc.post(f"/games/{SLUG}/setup/appoint/", {"kind": "arbiter", "username": "s_arbiter"}))
    # A player cannot be staff (L-STAFF): refused, nothing changes.
    assert proc.post(f"/games/{SLUG}/setup/appoint/", {"kind": "consigliere", "username": "p05"}).status_code == 403
    _ok(proc.post(f"/games/{SLUG}/setup/appoint/", {"kind": "consigliere", "username": "s_consig"}))
    _ok(proc.post(f"/games/{SLUG}/setup/publish-lists/"))
    post.refresh_from_db()
    for city in cities:
        names = ", ".join(sorted(r.name for r in city.residents.all()))
        assert f"**{city.name}** (20): {names}" in post.body

    # The draw: commitment published in the recruitment post before any number exists (L-ASSIGN-3).
    _ok(proc.post(f"/games/{SLUG}/setup/start-draw/"))
    mafia_draw = MafiaDraw.objects.get(game=game)
    post.refresh_from_db()
    assert mafia_draw.numbers is None and mafia_draw.commitment in post.body
    assert mafia_draw.commitment in Client().get(f"/games/{SLUG}/").content.decode()  # public, logged out too
    _ok(proc.post(f"/games/{SLUG}/setup/site-numbers/"))
    mafia_draw.refresh_from_db()
    assert mafia_draw.numbers_at > mafia_draw.committed_at and mafia_draw.numbers_by_site is True
    committed = GameEvent.objects.get(game=game, kind="draw.committed")
    numbered = GameEvent.objects.get(game=game, kind="draw.numbers")
    assert (committed.at, committed.pk) < (numbered.at, numbered.pk)
    assert draw.verify_commitment(mafia_draw.lists, mafia_draw.salt, mafia_draw.commitment)

    # Exactly 4 mafia per city: the residents at the named positions of the notary lists (L-CITY-2, L-ASSIGN-2).
    for city in cities:
        listed = mafia_draw.lists[str(city.number)]
        assert sorted(listed) == sorted(r.name for r in city.residents.all())
        numbers = mafia_draw.numbers[str(city.number)]
        assert len(numbers) == 4 and len(set(numbers)) == 4 and all(1 <= k <= 20 for k in numbers)
        expected_mafia = {listed[k - 1] for k in numbers}
        assert set(Resident.objects.filter(city=city, alignment=Alignment.MAFIA).values_list("name", flat=True)) == expected_mafia
        mafia_inbox = Inbox.objects.get(game=game, kind=LepraInboxKind.MAFIA, city=city)
        assert mafia_inbox.organizer == StaffRole.objects.get(game=game, kind="consigliere")
        assert {m.resident.name: m.state for m in Membership.objects.filter(inbox=mafia_inbox).select_related("resident")} == {
            n: MembershipState.MEMBER for n in expected_mafia}
    # The notary: no members, one site message with the numbered lists and the salt, exactly.
    notary = Inbox.objects.get(game=game, kind=LepraInboxKind.NOTARY)
    assert notary == mafia_draw.notary and not Membership.objects.filter(inbox=notary).exists()
    expected_notary = "\n\n".join(
        [f"**{c.name}**\n\n" + "\n".join(f"{i}. {n}" for i, n in enumerate(mafia_draw.lists[str(c.number)], 1)) for c in cities]
        + [in_game_language(game, "Salt: `%(salt)s`", salt=mafia_draw.salt)])
    assert list(Message.objects.filter(inbox=notary).values_list("body", flat=True)) == [expected_notary]
    # The numbers are posted in the bar.
    bar = Inbox.objects.get(game=game, kind=LepraInboxKind.BAR)
    bar_text = "\n".join(Message.objects.filter(inbox=bar).values_list("body", flat=True))
    for city in cities:
        assert f"{city.name}: {', '.join(map(str, mafia_draw.numbers[str(city.number)]))}" in bar_text

    # The commissar draw (L-COMM): offers until someone accepts; a mafioso cannot accept; the first honest
    # candidate of Alpha declines with a reason the Procurator never sees.
    by_user = {u.pk: u for u in players}
    secret_reason = "Too busy with the harvest"
    honest_declined = False
    for city in cities:
        while True:
            response = proc.post(f"/games/{SLUG}/setup/offer-commissar/", {"city": city.public_id})
            if response.status_code == 409:
                break
            _ok(response)
            offer = CommissarOffer.objects.filter(city=city).order_by("-number").select_related("candidate").first()
            candidate = _client(by_user[offer.candidate.user_id])
            page = candidate.get(f"/games/{SLUG}/offers/{offer.public_id}/").content.decode()
            if offer.candidate.alignment == Alignment.MAFIA:
                assert 'value="accept"' not in page
                assert candidate.post(f"/games/{SLUG}/offers/{offer.public_id}/", {"answer": "accept"}).status_code == 403
                _ok(candidate.post(f"/games/{SLUG}/offers/{offer.public_id}/", {"answer": "decline"}))
            elif city.number == 1 and not honest_declined:
                assert 'value="accept"' in page
                _ok(candidate.post(f"/games/{SLUG}/offers/{offer.public_id}/", {"answer": "decline", "reason": secret_reason}))
                honest_declined = True
            else:
                _ok(candidate.post(f"/games/{SLUG}/offers/{offer.public_id}/", {"answer": "accept"}))
                break

    offers = list(CommissarOffer.objects.filter(game=game).select_related("candidate", "city"))
    commissars = {o.candidate.name for o in offers if o.accepted}
    assert set(Resident.objects.filter(seats.rank_q("is_commissar"), game=game).values_list("name", flat=True)) == commissars
    for o in offers:
        assert (o.accepted is True) == (o.candidate.alignment == Alignment.HONEST and not
                                         (o.city.number == 1 and o.decline_reason == secret_reason))
        assert set(Membership.objects.filter(inbox=o.inbox).values_list("resident__name", flat=True)) == {o.candidate.name}
    for city in cities:
        city_offers = [o for o in offers if o.city_id == city.pk]
        assert 1 <= len(city_offers) <= 3
        assert sum(1 for o in city_offers if o.accepted) <= 1
    police = Inbox.objects.get(game=game, kind=LepraInboxKind.POLICE)
    assert police.organizer == StaffRole.objects.get(game=game, kind="procurator")
    assert set(Membership.objects.filter(inbox=police, state=MembershipState.MEMBER).values_list("resident__name", flat=True)) == commissars

    # The inbox set of the setup, exactly: notary, bar, 3 mafia, the offers, the police station (if anyone accepted).
    kinds = sorted(Inbox.objects.filter(game=game).values_list("kind", flat=True))
    assert kinds == sorted(["notary", "bar", "mafia", "mafia", "mafia"] + ["secret"] * len(offers)
                           + (["police"] if commissars else []))

    # The Procurator sees "declined" and never the reason (L-COMM-2), on every page he can open.
    html = "".join(proc.get(url).content.decode() for url in
                   [f"/games/{SLUG}/setup/", f"/games/{SLUG}/", f"/games/{SLUG}/inboxes/"]
                   + [f"/inboxes/{o.inbox.public_id}/" for o in offers])
    assert secret_reason not in html
    assert 'data-answer="declined"' in html
    # Nor does the Procurator see alignments: no notary list, the notary itself is a 404 for him.
    assert proc.get(f"/inboxes/{notary.public_id}/").status_code == 404
    assert mafia_draw.salt not in html
    for city in cities:
        assert ", ".join(mafia_draw.lists[str(city.number)][:3]) not in html
        assert f"1. {mafia_draw.lists[str(city.number)][0]}\n2. " not in html
    # The Tribune of each city learns its commissar (L-COMM-4); other Tribunes do not.
    for n, city in enumerate(cities, 1):
        page = _client(staff[f"trib{n}"]).get(f"/games/{SLUG}/").content.decode()
        for o in offers:
            if o.accepted:
                assert (f"{o.city.name}: {o.candidate.name}" in page) == (o.city_id == city.pk)
    assert game.__class__.objects.get(pk=game.pk).status == GameStatus.SETUP
