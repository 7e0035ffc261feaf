"""Leak checks during the game (issue 8, L-INBOX-20, L-STAFF-6): a phrase posted in a mafia inbox appears in none
of search, export, the printable page, the timeline, the charts, the map, mentions, unread badges, the e-mail
digest or reminders for a non-member; each check has a member control that sees it, so it fails if the secret
leaked. Notifications: unread badges, mentions, the digest and reminders in the user's time zone."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.core import mail

from archive import notifications, services
from archive.models import NotificationSettings
from cities.models import ScheduledEvent
from inboxes import posting
from tests.archive.conftest import MAFIA_PHRASE
from tests.conftest import fresh
from tests.rulesets.lepra.day.day_helpers import CLOSES, MORNING, city1_day

NON_MEMBERS = ["honest", "procurator", "tribune1", "outsider", "anonymous"]

PAGES = ["archive/search/?q=" + MAFIA_PHRASE, "archive/export.json", "archive/print/", "archive/timeline/",
         "archive/timeline/?kind=mafia", "archive/votes/", "archive/map/", "archive/"]


def _get(client, demo, persona: str, path: str) -> str:
    user = getattr(demo, persona)
    client.logout()
    if getattr(user, "is_authenticated", False):
        client.force_login(user)
    response = client.get(f"/games/{demo.game.slug}/{path}")
    assert response.status_code == 200, (persona, path)
    return response.content.decode()


@pytest.mark.parametrize("path", PAGES)
def test_mafia_phrase_reaches_no_archive_page_of_a_non_member_during_the_game_L_INBOX_20(world, client, path):
    for persona in NON_MEMBERS:
        page = _get(client, world.demo, persona, path)
        # the search box echoes the query itself; nothing else may hold the phrase
        page = page.replace(f'value="{MAFIA_PHRASE}"', "").replace(f"q={MAFIA_PHRASE}", "")
        assert MAFIA_PHRASE not in page, (persona, path)


@pytest.mark.parametrize("path", ["archive/search/?q=" + MAFIA_PHRASE, "archive/export.json", "archive/print/",
                                  "archive/timeline/", "archive/timeline/?kind=mafia"])
def test_the_member_control_sees_the_phrase_so_the_leak_checks_can_fail(world, client, path):
    page = _get(client, world.demo, "mafioso", path)
    assert page.count(MAFIA_PHRASE) >= (2 if path.startswith("archive/search") else 1)


def test_search_results_of_a_non_member_never_hold_the_mafia_message_L_INBOX_20(world, client):
    _get(client, world.demo, "honest", "archive/search/?q=" + MAFIA_PHRASE)
    response = client.get(f"/games/{world.game.slug}/archive/search/", {"q": MAFIA_PHRASE})
    assert response.context["results"] == []
    client.force_login(world.demo.mafioso)
    response = client.get(f"/games/{world.game.slug}/archive/search/", {"q": MAFIA_PHRASE})
    assert [m.inbox_id for m in response.context["results"]] == [world.inboxes["mafia1"].pk]


def test_map_shows_the_mafia_inbox_and_the_consigliere_only_to_who_may_know_them_L_STAFF_6(world, client):
    title = world.inboxes["mafia1"].title
    consigliere = world.demo.consigliere.public_name
    for persona in NON_MEMBERS:
        page = _get(client, world.demo, persona, "archive/map/")
        assert 'data-kind="mafia"' not in page and title not in page, persona
        assert 'class="resident mafia"' not in page, persona
        # the Procurator knows who the Consigliere is (L-STAFF-6); the others do not
        assert (consigliere in page) == (persona == "procurator"), persona
    page = _get(client, world.demo, "mafioso", "archive/map/")
    assert 'data-kind="mafia"' in page and consigliere in page and 'class="resident mafia"' in page


def test_mentions_list_only_from_readable_inboxes_L_INBOX_20(world):
    honest = fresh(world.demo.honest)
    name = world.demo.seat("honest").name
    posting.do_post_message(world.inbox("mafia1"), f"@{name} {MAFIA_PHRASE} is our target",
                                   acting_user=fresh(world.demo.mafioso))
    assert notifications.mentions_for(honest) == []
    posting.do_post_message(world.inbox("city1"), f"@{name} what do you think?", acting_user=fresh(world.demo.mafioso))
    found = notifications.mentions_for(fresh(world.demo.honest))
    assert [m.inbox_id for m in found] == [world.inboxes["city1"].pk]
    assert all(MAFIA_PHRASE not in m.body for m in found)


def test_unread_badges_count_only_readable_inboxes_L_INBOX_20(world, client):
    def badge(persona):
        return {g.pk: n for g, n in notifications.unread_badges_for(fresh(getattr(world.demo, persona)))}[world.game.pk]

    before_honest, before_mafioso = badge("honest"), badge("mafioso")
    posting.do_post_message(world.inbox("mafia1"), "another secret", acting_user=fresh(world.demo.mafioso))
    posting.do_post_message(world.inbox("mafia1"), "and another", acting_user=fresh(world.demo.consigliere))
    assert badge("honest") == before_honest
    assert badge("mafioso") == before_mafioso + 1  # the Consigliere's; one's own post is read
    posting.do_post_message(world.inbox("city1"), "hello city", acting_user=fresh(world.demo.mafioso))
    assert badge("honest") == before_honest + 1
    client.force_login(world.demo.honest)
    page = client.get("/me/mentions/")
    assert page.status_code == 200 and f'data-unread="{before_honest + 1}"' in page.content.decode()


def _choose(user, time_zone: str = "", **channels) -> None:
    """Save ``user``'s display zone and the given channels (the other kinds keep their defaults)."""
    services.do_update_notification_settings(acting_user=fresh(user), time_zone=time_zone, channels=channels)


def test_email_digest_goes_to_readers_of_each_inbox_only_and_quotes_nothing_L_INBOX_20(world):
    for persona in ("honest", "mafioso", "outsider", "procurator"):
        _choose(getattr(world.demo, persona), reply="digest_hourly", mention="digest_hourly")
    posting.do_post_message(world.inbox("mafia1"), f"Consigliere agrees: {MAFIA_PHRASE}",
                                   acting_user=fresh(world.demo.consigliere))
    posting.do_post_message(world.inbox("personal:winner"), "Your Tribune here.", acting_user=fresh(world.demo.tribune1))
    mail.outbox.clear()
    now = max(m.received_at for m in world.inbox("mafia1").messages.all()) + timedelta(minutes=1)
    sent = services.do_send_notifications(now=now)
    by_user = {m.to[0]: m.body for m in mail.outbox}
    assert sent == len(mail.outbox) == 2
    mafia_title = world.inboxes["mafia1"].title
    assert mafia_title in by_user[world.demo.mafioso.email]
    assert world.demo.outsider.email not in by_user
    for persona in ("honest", "procurator"):
        assert mafia_title not in by_user.get(getattr(world.demo, persona).email, "")
    assert all(MAFIA_PHRASE not in body for body in by_user.values())
    assert world.inboxes["personal:winner"].title in by_user[world.demo.honest.email]
    # Each line links to its inbox on this site; the mail ends with the settings page.
    personal_url = f"http://{settings.MAFIA_SITE_DOMAIN}/inboxes/{world.inboxes['personal:winner'].public_id}/"
    assert personal_url in by_user[world.demo.honest.email]
    assert f"http://{settings.MAFIA_SITE_DOMAIN}/me/notifications/settings/" in by_user[world.demo.honest.email]
    assert f"/inboxes/{world.inboxes['mafia1'].public_id}/" not in by_user[world.demo.honest.email]
    assert services.do_send_notifications(now=now) == 0  # nothing new since
    posting.do_post_message(world.inbox("personal:winner"), "Again.", acting_user=fresh(world.demo.tribune1),
                                   now=now + timedelta(minutes=1))
    assert services.do_send_notifications(now=now + timedelta(minutes=30)) == 0  # the hour has not passed
    assert services.do_send_notifications(now=now + timedelta(minutes=61)) == 1
    assert [m.to for m in mail.outbox[2:]] == [[world.demo.honest.email]]


def test_reminders_before_voting_close_reach_the_city_in_each_users_time_zone_once_L_INBOX_20(world):
    from rulesets.lepra.day.services import do_schedule_voting

    day = city1_day(world.demo)
    do_schedule_voting(day.city, CLOSES - timedelta(hours=3), CLOSES, acting_user=world.demo.tribune1, now=MORNING)
    event = ScheduledEvent.objects.get(game=world.game, kind="voting_close", done_at__isnull=True, cancelled_at__isnull=True)
    _choose(world.demo.honest, time_zone="America/New_York")
    _choose(world.demo.commissar, deadline="off")
    _choose(world.demo.mafioso, deadline="site")
    mail.outbox.clear()
    assert services.do_send_notifications(now=event.due_at - timedelta(hours=2)) == 0  # too early
    sent = services.do_send_notifications(now=event.due_at - timedelta(minutes=30))
    recipients = {m.to[0]: m.body for m in mail.outbox}
    living_city1 = {r.user.email for r in day.plain} | {world.demo.seat("judge").user.email}
    expected = (living_city1 | {world.demo.tribune1.email}) - {world.demo.commissar.email, world.demo.mafioso.email}
    assert set(recipients) == expected and sent == len(expected)
    assert "15:00 EST" in recipients[world.demo.honest.email]  # 20:00 UTC in New York, the account's zone
    judge = world.demo.seat("judge").user.email
    assert "23:00 MSK" in recipients[judge]  # no zone chosen: the game's, Moscow
    assert f"http://{settings.MAFIA_SITE_DOMAIN}/games/{world.game.slug}/" in recipients[judge]
    assert world.demo.outsider.email not in recipients and world.demo.resident2.email not in recipients
    assert services.do_send_notifications(now=event.due_at - timedelta(minutes=20)) == 0
    shown = notifications.notification_list_for(fresh(world.demo.mafioso))  # "site": listed, not e-mailed
    assert [n.notification.kind for n in shown] == ["deadline"] and "23:00 MSK" in shown[0].text
    assert notifications.notification_list_for(fresh(world.demo.commissar)) == []  # "off": not even listed


def test_notification_settings_page_refuses_an_unknown_zone(world, client):
    client.force_login(world.demo.honest)
    kinds = {"mention": "site", "reply": "digest_daily", "deadline": "email_now", "night_result": "site",
             "offer": "off"}
    response = client.post("/me/notifications/settings/", {"time_zone": "Mars/Olympus", **kinds})
    assert response.status_code == 400
    assert response.status_code == 400 and fresh(world.demo.honest).time_zone == ""
    response = client.post("/me/notifications/settings/", {"time_zone": "Asia/Tokyo", **kinds, "offer": "loud"})
    assert response.status_code == 400 and not NotificationSettings.objects.filter(user=world.demo.honest).exists()
    response = client.post("/me/notifications/settings/", {"time_zone": "Asia/Tokyo", **kinds})
    assert response.status_code == 302
    row = NotificationSettings.objects.get(user=world.demo.honest)
    assert (fresh(world.demo.honest).time_zone, row.reply, row.offer, row.deadline) == (
        "Asia/Tokyo", "digest_daily", "off", "email_now")
    page = client.get("/me/notifications/settings/").content.decode()
    assert 'value="Asia/Tokyo"' in page and '<label for="id_reply">' in page


def test_vote_tables_chart_and_timeline_of_a_city_stay_with_its_readers_during_the_game_L_INBOX_9(world):
    from archive import selectors
    from rulesets.lepra import archive as lepra_archive
    from tests.archive.archive_helpers import _voting_day

    _day, a, _b, _voters = _voting_day(world)
    city1_name = world.demo.seat("honest").city.name
    for persona in ("resident2", "outsider", "anonymous", "tribune2"):
        viewer = fresh(getattr(world.demo, persona))
        assert lepra_archive.vote_tables_for(viewer, world.game) == [], persona
        # events of city 1 (voting opened / closed) are announced in its city inbox; messages of readable inboxes
        # (the office, for a Tribune) may name the city and are not events
        events = [i for d in selectors.timeline_for(viewer, world.game) for i in d.items if i.kind != "message"]
        assert not any(city1_name in i.text for i in events), persona
        assert all(i.city is None or i.city.number != 1 for i in events), persona
    tables = lepra_archive.vote_tables_for(fresh(world.demo.honest), world.game)
    assert [(t.city.number, t.day) for t in tables] == [(1, 2)]
    texts = [i.text for d in selectors.timeline_for(fresh(world.demo.honest), world.game) for i in d.items]
    assert any(city1_name in t and a.name in t for t in texts)


def test_send_notifications_command_sends_the_due_digests(world):
    from io import StringIO

    from django.core.management import call_command

    _choose(world.demo.mafioso, reply="email_now")
    posting.do_post_message(world.inbox("mafia1"), "news", acting_user=fresh(world.demo.consigliere))
    mail.outbox.clear()
    out = StringIO()
    call_command("send_notifications", stdout=out)
    assert out.getvalue().strip() == "notifications e-mailed: 1"
    assert [m.to for m in mail.outbox] == [[world.demo.mafioso.email]]
