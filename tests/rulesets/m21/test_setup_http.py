"""The M21 setup through the pages (M-SETUP-1/2/4): "New game" offers M21, the host creates the game, adds a
co-host, players sign up, the host closes sign-ups, saves a setup table (a refused one says why), deals the roles;
then the game page shows the count and the host extends the day."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from cities.models import Game, GameStatus, ScheduledEvent
from rulesets.m21.models import DayStatus, M21Day, M21Game, M21Seat
from tests.rulesets.m21.day_helpers import make_user

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_host_sets_up_and_deals_an_m21_game_through_the_pages_M_SETUP_1_M_SETUP_2():
    host = make_user("Hostess")
    web = client_for(host)
    assert reverse("m21_new_game") in web.get(reverse("new_game")).content.decode()
    response = web.post(reverse("m21_new_game"), {
        "title": "Web Wars", "slug": "web-wars", "time_zone": "Europe/London", "day_hours": 48, "night_hours": 24,
        "phase_shift": "22:00", "vote_preset": "m21", "self_votes_allowed": "on", "no_lynch_allowed": "on"})
    assert response.status_code == 302 and response["Location"] == reverse("m21_setup", args=["web-wars"])
    game = Game.objects.get(slug="web-wars")
    assert (game.ruleset, game.time_zone, game.city_count) == ("m21", "Europe/London", None)  # no cities
    make_user("Helper")
    web.post(reverse("m21_setup_cohost", args=[game.slug]), {"name": "Helper"})
    assert game.staff_roles.filter(kind="cohost", user__display_name="Helper").exists()
    players = [make_user(f"Web{n}") for n in range(7)]
    for player in players:
        assert client_for(player).post(reverse("sign_up", args=[game.slug])).status_code \
            == 302
    web.post(reverse("m21_setup_close_signups", args=[game.slug]))
    table = {f"role_{k}": 0 for k in ("citizen", "judge", "reporter", "cop", "vanilla_cop", "item_cop", "desperado",
                                      "coroner", "watcher", "inventor", "goon", "godfather", "ninja", "jailbreaker",
                                      "hooker", "strongman", "thief")}
    bad = {**table, "role_citizen": 3, "role_goon": 1, "cop_insanity_percent": 0}
    page = web.post(reverse("m21_setup_table", args=[game.slug]), bad, follow=True).content.decode()
    assert "The setup has 4 seats but 7 players signed up" in page
    good = {**table, "role_citizen": 3, "role_judge": 1, "role_cop": 1, "role_godfather": 1, "role_hooker": 1,
            "cop_insanity_percent": 25}
    web.post(reverse("m21_setup_table", args=[game.slug]), good)
    assert M21Game.objects.get(game=game).setup == {
        "counts": {"citizen": 3, "judge": 1, "cop": 1, "godfather": 1, "hooker": 1}, "cop_insanity": "1/4"}
    start = (timezone.now() + timedelta(days=1)).astimezone(timezone.get_fixed_timezone(0))
    web.post(reverse("m21_setup_deal", args=[game.slug]), {"first_day_starts_at": start.strftime("%Y-%m-%dT%H:%M")})
    game.refresh_from_db()
    assert game.status == GameStatus.RUNNING
    assert M21Seat.objects.filter(resident__game=game).count() == 7
    setup_page = web.get(reverse("m21_setup", args=[game.slug])).content.decode()
    assert M21Game.objects.get(game=game).deal_commitment in setup_page
    assert client_for(players[0]).get(reverse("m21_setup", args=[game.slug])).status_code == 404


def test_the_host_extends_the_day_from_the_game_page_M_SETUP_2():
    import time_machine

    from tests.rulesets.m21.day_helpers import START, build_game
    table = build_game(slug="m21-web-extend")
    with time_machine.travel(START + timedelta(hours=1), tick=False):
        web = client_for(table.cohost)
        page = web.get(reverse("m21_game", args=[table.game.slug])).content.decode()
        assert "Extend the phase" in page and "Close proceedings now" not in page
        web.post(reverse("m21_extend", args=[table.game.slug]), {"hours": 12})
        assert M21Day.objects.get(game=table.game, number=1).deadline == START + timedelta(hours=60)
        judge = client_for(table.user_of_role("judge"))
        assert "Close proceedings now" in judge.get(reverse("m21_game", args=[table.game.slug])).content.decode()
        asked = judge.post(reverse("m21_judge_close", args=[table.game.slug]))
        assert asked.status_code == 200 and "Close proceedings now?" in asked.content.decode()
        assert M21Day.objects.get(game=table.game, number=1).status == DayStatus.OPEN
        refused = judge.post(reverse("m21_judge_close", args=[table.game.slug]), {"confirmed": "yes"},
                             follow=True).content.decode()
        assert "have a vote in place; 0 do." in refused
        name = next(n for n, r in table.roles.items() if r == "citizen")
        player = client_for(table.users[name])
        page = player.post(reverse("m21_extend", args=[table.game.slug]), {"hours": 12}, follow=True).content.decode()
        assert "Only the hosts of this game may do this." in page
        assert M21Day.objects.get(game=table.game, number=1).deadline == START + timedelta(hours=60)


def test_m21_forms_refuse_in_english_and_the_zone_comes_from_the_picker_M_SETUP_2():
    """M21 pages are English (DESIGN.md "Pages"): the new-game form and the setup forms say why they refuse in
    English, never in the site's default Russian, and the time zone is one of the picker's IANA zones (an
    ``Etc/GMT+3``, which reads the opposite of its offset, is refused)."""
    host = make_user("Linguist")
    web = client_for(host)
    form = {"title": "Tongues", "slug": "tongues", "day_hours": 48, "night_hours": 24, "phase_shift": "22:00",
            "vote_preset": "m21", "self_votes_allowed": "on", "no_lynch_allowed": "on"}
    new_page = web.get(reverse("m21_new_game")).content.decode()
    assert 'list="id_time_zone-zones"' in new_page and "Europe/London (UTC" in new_page
    for zone in ("Europe/Londn", "Etc/GMT+3"):
        refused = web.post(reverse("m21_new_game"), {**form, "time_zone": zone})
        assert refused.status_code == 400
        assert f"Unknown time zone “{zone}”" in refused.content.decode()
    refused = web.post(reverse("m21_new_game"), {**form, "time_zone": "Europe/London", "day_hours": 999})
    assert "Ensure this value is less than or equal to 168." in refused.content.decode()
    assert not Game.objects.filter(slug="tongues").exists()
    assert web.post(reverse("m21_new_game"), {**form, "time_zone": "Europe/London"}).status_code == 302
    page = web.post(reverse("m21_setup_timing", args=["tongues"]),
                    {"day_hours": 48, "night_hours": 24, "phase_shift": "25:00"}, follow=True).content.decode()
    assert "Enter a valid time." in page and "Введите" not in page
    page = web.post(reverse("m21_setup_draw", args=["tongues"]), {"cop_insanity_percent": "abc"},
                    follow=True).content.decode()
    assert "Enter a whole number." in page and "Введите" not in page


def test_the_deal_reads_day_1_start_in_the_games_time_zone_M_SETUP_2():
    """"Day 1 starts at (game's time zone)": the wall-clock time typed is read in the game's zone (Asia/Tokyo,
    UTC+9), not in the server's UTC; a wrong date is refused in English and deals nothing."""
    from zoneinfo import ZoneInfo

    host = make_user("Tokyoite")
    web = client_for(host)
    web.post(reverse("m21_new_game"), {
        "title": "Far East", "slug": "far-east", "time_zone": "Asia/Tokyo", "day_hours": 48, "night_hours": 24,
        "phase_shift": "22:00", "vote_preset": "m21", "self_votes_allowed": "on", "no_lynch_allowed": "on"})
    game = Game.objects.get(slug="far-east")
    for n in range(7):
        client_for(make_user(f"East{n}")).post(reverse("sign_up", args=[game.slug]))
    web.post(reverse("m21_setup_close_signups", args=[game.slug]))
    web.post(reverse("m21_setup_draw", args=[game.slug]), {"cop_insanity_percent": 0})
    page = web.post(reverse("m21_setup_deal", args=[game.slug]), {"first_day_starts_at": "tomorrow"},
                    follow=True).content.decode()
    assert "Enter a date and time as YYYY-MM-DD HH:MM." in page
    game.refresh_from_db()
    assert game.status != GameStatus.RUNNING
    wall = (timezone.now() + timedelta(days=2)).astimezone(ZoneInfo("Asia/Tokyo")).replace(second=0, microsecond=0)
    web.post(reverse("m21_setup_deal", args=[game.slug]), {"first_day_starts_at": wall.strftime("%Y-%m-%dT%H:%M")})
    game.refresh_from_db()
    assert game.status == GameStatus.RUNNING
    start = ScheduledEvent.objects.get(game=game, kind="m21_day_start")
    assert start.due_at == wall.astimezone(ZoneInfo("UTC"))


def test_the_general_game_page_of_an_m21_game_speaks_m21_players_and_hosts_M_SETUP_2():
    from tests.rulesets.m21.day_helpers import build_game

    table = build_game()
    page = client_for(table.users["Alice"]).get(f"/games/{table.game.slug}/").content.decode()
    aside = page[page.index("<aside>"):page.index("</aside>")]
    assert "<h2>Players</h2>" in aside and "<h2>Cities</h2>" not in aside
    assert "<h3>" not in aside  # no cities: no city heading
    assert f">Host: {table.host.public_name}</li>" in aside and "Procurator" not in aside
    assert all(f">{name}</a>" in aside for name in table.users)
