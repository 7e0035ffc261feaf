"""Time zones a person can pick and read: an IANA zone picker with UTC offsets (no misleading Etc/GMT±N),
notification settings in the player's own game's zone, mentions in the game's zone with its abbreviation."""
from __future__ import annotations

import pytest
from django import forms

from archive.services import settings_of
from cities.forms import NewGameForm
from inboxes import services
from inboxes.models import Inbox, InboxKind
from kernel.timezones import TimeZoneField, time_zone_names, utc_offset_label
from tests.conftest import fresh


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


def test_offsets_read_the_right_way_round():
    assert utc_offset_label("Europe/Moscow") == "UTC+03:00"
    assert utc_offset_label("America/Argentina/Buenos_Aires") == "UTC−03:00"
    assert utc_offset_label("UTC") == "UTC+00:00"


@pytest.mark.django_db
def test_notification_settings_default_to_the_zone_of_the_players_game(demo, django_user_model):
    assert settings_of(demo.honest).time_zone == demo.game.time_zone
    stranger = django_user_model.objects.create_user("stranger", "s@example.org", "x-secret-123")
    assert settings_of(stranger).time_zone == "Europe/Moscow"


@pytest.mark.django_db
def test_mentions_are_shown_in_the_games_zone_with_its_abbreviation(demo, client):
    inbox = Inbox.objects.get(game=demo.game, kind=InboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    message = services.do_post_message(inbox, f"@{demo.seat('honest').name}, ты где?",
                                       acting_user=fresh(demo.mafioso))
    client.force_login(demo.honest)
    page = client.get("/me/mentions/").content.decode()
    from zoneinfo import ZoneInfo

    local = message.received_at.astimezone(ZoneInfo(demo.game.time_zone))
    assert f"{local:%H:%M} {local.tzname()}" in page
