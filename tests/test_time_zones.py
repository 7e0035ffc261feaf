"""Time zones a person can pick and read: an IANA zone picker with UTC offsets (no misleading Etc/GMT±N),
notification settings in the player's own game's zone, mentions in the game's zone with its abbreviation."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django import forms
from django.urls import reverse

from archive.services import do_update_notification_settings
from cities.forms import NewGameForm
from inboxes import posting
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput
from kernel.timezones import TimeZoneField, display_zone_name, time_zone_choices, time_zone_names, utc_offset_label
from tests.conftest import DEMO_NOW, fresh

POSTED_AT = DEMO_NOW.replace(minute=5)  # 10:05 in Moscow, 7:05 in London: Russian times have no leading zero


def test_picker_offers_iana_zones_with_offsets_and_no_reversed_etc_zones():
    names = time_zone_names()
    assert {"Europe/Moscow", "Europe/London", "America/New_York", "Asia/Kolkata", "UTC"} <= set(names)
    assert not [n for n in names if n.startswith("Etc/")]
    assert list(names) == sorted(names)
    html = NewGameForm().as_div()
    assert 'list="id_time_zone-zones"' in html
    assert '<option value="Europe/Moscow">Europe/Moscow (UTC+03:00)</option>' in html
    assert '<option value="Asia/Kolkata">Asia/Kolkata (UTC+05:30)</option>' in html


@pytest.mark.parametrize("value", ["Etc/GMT+3", "Mars/Olympus", "europe/moscow", "Europe/Moscow\x00", "", " "])
def test_picker_refuses_anything_but_a_listed_zone(value):
    field = TimeZoneField()
    with pytest.raises(forms.ValidationError):
        field.clean(value)
    assert field.clean(" Europe/London ") == "Europe/London"


def test_picker_offsets_follow_the_clock_to_the_minute_across_a_change_of_offset():
    """The picker's list is computed once per minute: the minute before London moves its clocks on (01:00 UTC,
    28 March 2027) it reads UTC+00:00, from 01:00:00 UTC+01:00, and each label is the zone's offset then."""
    change = datetime(2027, 3, 28, 1, 0, tzinfo=UTC)
    for at, london in [(change - timedelta(seconds=1), "UTC+00:00"), (change, "UTC+01:00"),
                       (change + timedelta(seconds=59), "UTC+01:00"), (change - timedelta(minutes=1), "UTC+00:00")]:
        choices = dict(time_zone_choices(at))
        assert choices["Europe/London"] == f"Europe/London ({london})", at
        assert choices["Asia/Kolkata"] == "Asia/Kolkata (UTC+05:30)"
        assert list(choices) == list(time_zone_names())
        assert all(label.endswith(f"({utc_offset_label(name, at)})") for name, label in choices.items())


def test_offsets_read_the_right_way_round():
    assert utc_offset_label("Europe/Moscow") == "UTC+03:00"
    assert utc_offset_label("America/Argentina/Buenos_Aires") == "UTC−03:00"
    assert utc_offset_label("UTC") == "UTC+00:00"


@pytest.mark.django_db
def test_times_default_to_the_games_zone_and_a_player_may_choose_their_own(demo, django_user_model):
    assert fresh(demo.honest).time_zone == "" and display_zone_name(fresh(demo.honest), demo.game) == "Europe/Moscow"
    stranger = django_user_model.objects.create_user("stranger", "s@example.org", "x-secret-123")
    assert display_zone_name(stranger) == "UTC" and display_zone_name(stranger, demo.game) == "Europe/Moscow"
    do_update_notification_settings(acting_user=fresh(demo.honest), time_zone="America/New_York")
    assert display_zone_name(fresh(demo.honest), demo.game) == "America/New_York"
    with pytest.raises(InvalidInput):
        do_update_notification_settings(acting_user=fresh(demo.honest), time_zone="Etc/GMT+3")  # reads backwards
    assert fresh(demo.honest).time_zone == "America/New_York"


@pytest.mark.django_db
def test_a_thread_shows_each_reader_the_times_in_their_own_zone_with_its_abbreviation(demo, client):
    inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    with time_machine.travel(POSTED_AT, tick=False):
        posting.do_post_message(inbox, "Доброе утро.", acting_user=fresh(demo.mafioso))
    url = f"/inboxes/{inbox.public_id}/"
    client.force_login(demo.honest)
    assert "20 ноября 2026 г. 10:05 MSK</time>" in client.get(url).content.decode()  # nobody chose: the game's zone
    do_update_notification_settings(acting_user=fresh(demo.honest), time_zone="Europe/London")
    page = client.get(url).content.decode()
    assert "20 ноября 2026 г. 7:05 GMT</time>" in page and "10:05 MSK</time>" not in page
    game_page = client.get(f"/games/{demo.game.slug}/").content.decode()
    assert "Europe/London" in game_page and "UTC+00:00" in game_page


@pytest.mark.django_db
def test_the_m21_deadline_is_shown_in_the_viewers_zone_M21(db, client):
    from tests.rulesets.m21.day_helpers import build_game

    table = build_game(slug="m21-zones")
    viewer = table.users["Alice"]
    do_update_notification_settings(acting_user=viewer, time_zone="Asia/Tokyo")
    client.force_login(viewer)
    page = client.get(reverse("m21_game", args=[table.game.slug])).content.decode()
    assert "JST" in page and "your time zone, Asia/Tokyo" in page


@pytest.mark.django_db
def test_mentions_are_shown_in_the_games_zone_with_its_abbreviation(demo, client):
    inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    with time_machine.travel(POSTED_AT, tick=False):
        posting.do_post_message(inbox, f"@{demo.seat('honest').name}, ты где?", acting_user=fresh(demo.mafioso))
    client.force_login(demo.honest)
    page = client.get("/me/mentions/").content.decode()
    assert '<time datetime="2026-11-20T10:05:00+03:00">20 ноября 2026 г. 10:05 MSK</time>' in page