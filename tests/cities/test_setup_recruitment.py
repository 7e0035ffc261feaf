"""Recruitment (issue 3 item 1): the new-game form, the recruitment post (L-POST-1), one-click sign-up and
withdrawal, closing, the balanced random split and moving by hand (L-CITY-1), staff who cannot play (L-STAFF),
the city lists, names only (L-CITY-4), and the Procurator's setup page."""
from __future__ import annotations

import random
from datetime import time

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils.translation import override

from cities import recruitment_services, services
from cities.models import City, Game, GameEvent, GameStatus, PostKind, PublicPost, Resident, Signup, StaffRole
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import get_ruleset
from rulesets.lepra.staff_kinds import StaffKind
from tests.setup_factory import build_game, in_game_language


def _client(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def test_any_logged_in_user_creates_a_game_and_becomes_its_procurator_L_STAFF_1(db, django_user_model):
    user = django_user_model.objects.create_user("creator", "c@example.com", "x-secret-123")
    assert Client().get("/new-game/").status_code == 302  # to the login page
    client = _client(user)
    assert client.get("/new-game/").status_code == 200
    response = client.post("/new-game/", {"title": "Autumn", "slug": "autumn", "rules_text": "Rules here.",
                                          "time_zone": "Europe/Moscow", "city_count": "3", "city_size": "20",
                                          "day_start": "11:30"})
    assert response.status_code == 302 and response["Location"] == "/games/autumn/setup/"
    game = Game.objects.get(slug="autumn")
    assert (game.rules_text, game.city_count, game.city_size, game.day_start, game.status) == (
        "Rules here.", 3, 20, time(11, 30), GameStatus.RECRUITMENT)
    assert game.staff_roles.get().user == user and game.staff_roles.get().kind == StaffKind.PROCURATOR
    # The page has no game yet: its language follows the browser (English here).
    again = client.post("/new-game/", {"title": "X", "slug": "autumn", "time_zone": "Europe/Moscow",
                                       "city_size": "20", "day_start": "10:00"}, HTTP_ACCEPT_LANGUAGE="en")
    zone = client.post("/new-game/", {"title": "X", "slug": "x2", "time_zone": "Mars/Olympus",
                                      "city_size": "20", "day_start": "10:00"}, HTTP_ACCEPT_LANGUAGE="en")
    assert again.status_code == 400 and "A game with the address autumn already exists." in again.content.decode()
    assert zone.status_code == 400 and "Unknown time zone “Mars/Olympus”: pick one from the list" in zone.content.decode()
    assert Game.objects.filter(slug__in=["x2"]).count() == 0


def test_sign_up_and_withdraw_with_one_click_and_staff_cannot_sign_up_L_CITY_1(db, django_user_model):
    built = build_game("recruitment", slug="signups")
    player = django_user_model.objects.create_user("pl", "pl@example.com", "x-secret-123", display_name="Pl")
    client = _client(player)
    page = client.get("/games/signups/").content.decode()
    assert 'action="/games/signups/signup/"' in page and 'action="/games/signups/signup/withdraw/"' not in page
    assert client.get("/games/signups/signup/").status_code == 405  # a POST-only URL
    assert client.post("/games/signups/signup/").status_code == 302
    page = client.get("/games/signups/").content.decode()
    assert 'action="/games/signups/signup/withdraw/"' in page and 'action="/games/signups/signup/"' not in page
    twice = client.post("/games/signups/signup/")
    assert twice.status_code == 409
    assert in_game_language(built.game, "You are already signed up.") in twice.content.decode()
    assert client.post("/games/signups/signup/withdraw/").status_code == 302
    assert Signup.objects.get(game=built.game, user=player).withdrawn_at is not None
    # The Procurator (staff) is offered no button and is refused.
    proc = _client(built.procurator)
    assert 'action="/games/signups/signup/"' not in proc.get("/games/signups/").content.decode()
    with override("en"), pytest.raises(NotAllowed, match="Staff of a game cannot sign up to play in it."):
        recruitment_services.do_sign_up(built.game, acting_user=built.procurator)
    # Logged out: the button leads to the login page.
    response = Client().post("/games/signups/signup/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_closing_signups_moves_to_setup_and_refuses_late_signups_L_CITY_1(db, django_user_model):
    built = build_game("signed_up", slug="closing", cities=2, size=3)
    with override("en"), pytest.raises(NotAllowed, match="Only the Procurator of this game may do this."):
        recruitment_services.do_close_signups(built.game, acting_user=built.players[0])
    recruitment_services.do_close_signups(built.game, acting_user=built.procurator)
    game = built.refresh()
    assert game.status == GameStatus.SETUP and game.signups_closed_at is not None
    late = django_user_model.objects.create_user("late", "late@example.com", "x-secret-123")
    with override("en"), pytest.raises(WrongState, match="Signups for this game are closed."):
        recruitment_services.do_sign_up(game, acting_user=late)
    with override("en"), pytest.raises(WrongState,
                                       match="Signups are closed; ask the Procurator of the game to replace you."):
        recruitment_services.do_withdraw_signup(game, acting_user=built.players[0])
    assert Signup.objects.filter(game=game, withdrawn_at__isnull=True).count() == 6


@pytest.mark.parametrize("players, city_count, sizes", [(60, 3, [20, 20, 20]), (61, 3, [21, 20, 20]),
                                                        (62, 3, [21, 21, 20]), (7, 2, [4, 3]), (5, 1, [5])])
def test_balanced_sizes_differ_by_at_most_one_L_CITY_1(players, city_count, sizes):
    assert recruitment_services.balanced_sizes(players, city_count) == sizes


def test_forming_cities_splits_at_random_into_balanced_cities_L_CITY_1(db):
    built = build_game("closed", slug="forming", cities=3, size=7)
    cities = recruitment_services.do_form_cities(built.game, acting_user=built.procurator, names=["North", "South", "East"],
                                     rng=random.Random(4))
    sizes = [Resident.objects.filter(city=c).count() for c in cities]
    assert [c.name for c in cities] == ["North", "South", "East"] and sizes == [7, 7, 7]
    assert set(Resident.objects.filter(game=built.game).values_list("user", flat=True)) == {u.pk for u in built.players}
    with override("en"), pytest.raises(WrongState, match="The cities are already formed."):
        recruitment_services.do_form_cities(built.game, acting_user=built.procurator)
    # By target size: 21 players, size 20 -> one city.
    solo = build_game("closed", slug="by-size", cities=1, size=21)
    Game.objects.filter(pk=solo.game.pk).update(city_count=None, city_size=20)
    assert [Resident.objects.filter(city=c).count() for c in recruitment_services.do_form_cities(
        solo.refresh(), acting_user=solo.procurator, rng=random.Random(1))] == [21]


def test_too_few_players_for_the_cities_is_refused_and_nothing_changes_L_CITY_2(db):
    built = build_game("closed", slug="few", cities=3, size=1)
    with override("en"), pytest.raises(InvalidInput, match=r"3 players are too few for 3 cities \(at least 2 per city\)."):
        recruitment_services.do_form_cities(built.game, acting_user=built.procurator)
    assert not City.objects.filter(game=built.game).exists()


def test_moving_a_player_by_hand_before_the_lists_are_published_L_CITY_1(db):
    built = build_game("formed", slug="moving", cities=2, size=5)
    resident = Resident.objects.filter(game=built.game, city__number=1).first()
    signup = Signup.objects.get(game=built.game, user=resident.user, withdrawn_at__isnull=True)
    city2 = City.objects.get(game=built.game, number=2)
    client = _client(built.procurator)
    assert client.post("/games/moving/setup/move-signup/", {"signup": signup.public_id, "city": city2.public_id}).status_code == 302
    resident.refresh_from_db()
    assert resident.city == city2
    assert [Resident.objects.filter(city__game=built.game, city__number=n).count() for n in (1, 2)] == [4, 6]
    recruitment_services.do_publish_city_lists(built.game, acting_user=built.procurator)
    refused = client.post("/games/moving/setup/move-signup/", {"signup": signup.public_id, "city": City.objects.get(game=built.game, number=1).public_id})
    assert refused.status_code == 409
    assert in_game_language(built.game, "The city lists are published; the cities cannot change any more.") in \
        refused.content.decode()


def test_the_setup_page_names_sign_ups_and_cities_by_public_id_and_refuses_a_database_id_L_CITY_1(db):
    built = build_game("formed", slug="opaque-signups", cities=2, size=3)
    resident = Resident.objects.filter(game=built.game, city__number=1).first()
    signup = Signup.objects.get(game=built.game, user=resident.user, withdrawn_at__isnull=True)
    city2 = City.objects.get(game=built.game, number=2)
    client = _client(built.procurator)
    page = client.get("/games/opaque-signups/setup/").content.decode()
    assert f'value="{signup.public_id}"' in page and f'<option value="{signup.pk}"' not in page
    for bad in (signup.pk, "abc", "x" * 400):
        refused = client.post("/games/opaque-signups/setup/move-signup/", {"signup": bad, "city": city2.public_id})
        assert refused.status_code == 400
        assert in_game_language(built.game, "Choose a player and a city.") in refused.content.decode()
    # Cities too: named by public id, a database id is refused like a malformed one.
    assert f'value="{city2.public_id}"' in page and f'<option value="{city2.pk}"' not in page
    for bad in (city2.pk, str(city2.pk), "٣"):
        refused = client.post("/games/opaque-signups/setup/move-signup/", {"signup": signup.public_id, "city": bad})
        assert refused.status_code == 400
        assert in_game_language(built.game, "Choose a player and a city.") in refused.content.decode()
    assert Resident.objects.get(pk=resident.pk).city.number == 1


def test_players_and_staff_are_disjoint_L_STAFF_1(db):
    built = build_game("closed", slug="disjoint", cities=2, size=3)
    with override("en"), pytest.raises(NotAllowed, match=r"signed up to play; players cannot be staff of the same game."):
        services.do_appoint_staff(built.game, built.players[0], StaffKind.ARBITER, acting_user=built.procurator)
    recruitment_services.do_form_cities(built.game, acting_user=built.procurator, rng=random.Random(2))
    with override("en"), pytest.raises(NotAllowed, match="Residents of a game cannot be its staff."):
        services.do_appoint_staff(built.game, built.players[1], StaffKind.ARBITER, acting_user=built.procurator)


def test_city_lists_are_published_in_the_recruitment_post_names_only_L_CITY_4(db):
    built = build_game("staffed", slug="lists", cities=2, size=4)
    before = PublicPost.objects.get(game=built.game, kind=PostKind.RECRUITMENT).body
    recruitment_services.do_publish_city_lists(built.game, acting_user=built.procurator)
    post = PublicPost.objects.get(game=built.game, kind=PostKind.RECRUITMENT)
    expected = "\n\n".join(["## " + in_game_language(built.game, "City lists")] + [
        f"**City {n}** (4): " + ", ".join(sorted(Resident.objects.filter(city__game=built.game, city__number=n)
                                                  .values_list("name", flat=True))) for n in (1, 2)])
    assert post.body == f"{before}\n\n{expected}"
    assert built.refresh().lists_published_at is not None
    assert GameEvent.objects.filter(game=built.game, kind="cities.lists_published").count() == 1
    html = Client().get("/games/lists/").content.decode()
    assert "City 1" in html and "mafia" not in html.lower().replace("mafia host", "")
    with override("en"), pytest.raises(WrongState, match="The city lists are published; the cities cannot change any more."):
        recruitment_services.do_publish_city_lists(built.game, acting_user=built.procurator)


def test_setup_page_is_the_procurators_and_shows_only_the_steps_that_apply(db):
    built = build_game("signed_up", slug="page", cities=2, size=3)
    for user in (built.players[0], None):
        assert _client(user).get("/games/page/setup/").status_code in (302, 404)
    client = _client(built.procurator)
    html = client.get("/games/page/setup/").content.decode()
    assert "/setup/close-signups/" in html
    for later in ("/setup/form-cities/", "/setup/publish-lists/", "/setup/start-draw/", "/setup/site-numbers/",
                  "/setup/offer-commissar/", "/setup/recruitment-post/"):
        assert later not in html
    assert all(p.public_name in html for p in built.players)
    # A step out of order is refused with 409 and changes nothing.
    assert client.post("/games/page/setup/publish-lists/").status_code == 409
    assert client.post("/games/page/setup/start-draw/").status_code == 409
    assert client.post("/games/page/setup/no-such-step/").status_code == 404
    assert client.post("/games/page/setup/close-signups/").status_code == 302
    html = client.get("/games/page/setup/").content.decode()
    assert "/setup/form-cities/" in html and "/setup/close-signups/" not in html


def test_cities_formed_by_hand_add_cities_and_move_each_player_L_CITY_1(db):
    built = build_game("closed", slug="by-hand", cities=2, size=2)
    client = _client(built.procurator)
    html = client.get("/games/by-hand/setup/").content.decode()
    assert "/setup/add-city/" in html and "/setup/move-signup/" not in html
    for name in ("Left", "Right"):
        assert client.post("/games/by-hand/setup/add-city/", {"name": name}).status_code == 302
    left, right = City.objects.filter(game=built.game).order_by("number")
    signups = list(Signup.objects.filter(game=built.game, withdrawn_at__isnull=True).order_by("pk"))
    assert client.post("/games/by-hand/setup/publish-lists/").status_code == 400  # nobody seated yet
    for signup, city in zip(signups, [left, left, right, right], strict=True):
        assert client.post("/games/by-hand/setup/move-signup/", {"signup": signup.public_id, "city": city.public_id}).status_code == 302
    assert client.post("/games/by-hand/setup/form-cities/").status_code == 409  # the cities exist
    assert client.post("/games/by-hand/setup/publish-lists/").status_code == 302
    assert {c.name: sorted(c.residents.values_list("user", flat=True)) for c in (left, right)} == {
        "Left": sorted(s.user_id for s in signups[:2]), "Right": sorted(s.user_id for s in signups[2:])}
    assert client.post("/games/by-hand/setup/add-city/", {"name": "Late"}).status_code == 409
    assert City.objects.filter(game=built.game).count() == 2


def test_setup_steps_refuse_a_field_that_fails_its_checks_and_change_nothing_L_CITY_1_L_POST_1(db):
    """Bad input changes nothing: city names or a recruitment post holding a NUL byte are refused with the
    reason, never read as empty (which formed the cities under default names, or published the default post)."""
    built = build_game("closed", slug="nul-names", cities=2, size=3)
    client = _client(built.procurator)
    refused = client.post("/games/nul-names/setup/form-cities/", {"names": "North\x00\nSouth"})
    assert refused.status_code == 400 and "Нулевые символы недопустимы." in refused.content.decode()
    assert not City.objects.filter(game=built.game).exists()
    client.post("/games/nul-names/setup/form-cities/", {"names": "North\nSouth"})
    assert list(City.objects.filter(game=built.game).order_by("number").values_list("name", flat=True)) == [
        "North", "South"]
    game = services.do_create_game(title="Fresh", slug="nul-post", acting_user=built.procurator, city_count=1,
                                   rules_text="Rules.")
    refused = client.post("/games/nul-post/setup/recruitment-post/", {"title": "Набор\x00", "body": "Текст"})
    assert refused.status_code == 400 and "Нулевые символы недопустимы." in refused.content.decode()
    assert not PublicPost.objects.filter(game=game, kind=PostKind.RECRUITMENT).exists()


def test_a_seat_is_in_a_city_exactly_when_the_games_ruleset_has_cities_L_CITY_1(db, django_user_model):
    built = build_game("formed", slug="seat-city", cities=2, size=3)
    lepra, city = built.game, City.objects.get(game=built.game, number=1)
    make = django_user_model.objects.create_user
    extra, other, host = (make(name, f"{name}@example.com", "x") for name in ("extra", "other", "host"))
    # Lepra's games have cities: a seat in none, or in another game's city, is refused and nothing is made.
    assert get_ruleset(lepra.ruleset).has_cities
    with override("en"), pytest.raises(InvalidInput, match="A seat in this game is in one of its cities: choose the "
                                                            "city.") as refused:
        services.do_seat_resident(None, extra, game=lepra, acting_user=built.procurator)
    assert refused.value.rule == "L-CITY-1"
    elsewhere = services.do_add_city(
        services.do_create_game(title="Elsewhere", slug="elsewhere", acting_user=built.procurator, ruleset="lepra"),
        name="Far", acting_user=built.procurator)
    with override("en"), pytest.raises(InvalidInput, match="The city Far is not in this game."):
        services.do_seat_resident(elsewhere, extra, game=lepra, acting_user=built.procurator)
    # A game whose ruleset has none: a seat in a city is refused, a seat in none is made; no city can be added.
    with override("en"), pytest.raises(InvalidInput,
                                       match="This game's rules have no cities: leave the number of cities empty."):
        services.do_create_game(title="No cities", slug="no-cities", acting_user=host, ruleset="m21", city_count=1)
    assert not Game.objects.filter(slug="no-cities").exists()
    cityless = services.do_create_game(title="No cities", slug="no-cities", acting_user=host, ruleset="m21")
    assert not get_ruleset(cityless.ruleset).has_cities and cityless.city_count is None
    with override("en"), pytest.raises(InvalidInput, match="This game has no cities: its seats are in none."):
        services.do_seat_resident(city, other, game=cityless, acting_user=host)
    assert not Resident.objects.filter(user__in=[extra, other]).exists()
    seat = services.do_seat_resident(None, other, game=cityless, acting_user=host)
    assert (seat.game, seat.city, Resident.objects.get(pk=seat.pk).city_id) == (cityless, None, None)
    assert GameEvent.objects.get(game=cityless, kind="resident.seated").payload == {"resident": seat.pk, "city": None}
    with override("en"), pytest.raises(InvalidInput, match="This game has no cities."):
        services.do_add_city(cityless, name="Somewhere", acting_user=host)
    assert not City.objects.filter(game=cityless).exists()


def test_a_citys_role_needs_a_city_and_the_refusal_names_the_games_own_role_L_STAFF_2(db):
    """A Tribune without a city and an Arbiter with one are refused, in words naming the role (Lepra's Tribune);
    nothing is appointed."""
    built = build_game("formed", slug="city-role", cities=2, size=3)
    make = get_user_model().objects.create_user
    tribune, arbiter = make("t-one", "t1@example.com", "x-secret-123"), make("a-one", "a1@example.com", "x-secret-123")
    city = City.objects.get(game=built.game, number=1)
    before = set(StaffRole.objects.filter(game=built.game).values_list("pk", flat=True))
    for user, kind, where in ((tribune, StaffKind.TRIBUNE, None), (arbiter, StaffKind.ARBITER, city)):
        with override("en"), pytest.raises(InvalidInput) as refused:
            services.do_appoint_staff(built.game, user, kind, city=where, acting_user=built.procurator)
        assert str(refused.value) == "Tribune: appointed for one city of the game; other roles for none."
        assert refused.value.rule == "L-STAFF-2"
    with override("ru"), pytest.raises(InvalidInput) as refused:
        services.do_appoint_staff(built.game, tribune, StaffKind.TRIBUNE, acting_user=built.procurator)
    assert str(refused.value) == "Трибун: назначается в один из городов игры; остальные роли — без города."
    assert set(StaffRole.objects.filter(game=built.game).values_list("pk", flat=True)) == before
