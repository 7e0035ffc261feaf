"""Play bans (RULES.md L-SANCTION-1, L-SANCTION-2): recorded by the Procurator of the game of the offence with the
offence and evidence he may read, enforced at sign-up for new games until their end (by the time, whatever the
scheduler does), told to the player, listed publicly without the evidence, their end recorded by the clock."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.test import Client

from cities.models import GameEvent, ScheduledEvent, Signup
from cities.recruitment_services import do_sign_up
from cities.scheduler import dispatch_due_events
from cities.services import do_create_game
from inboxes.models import Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed
from sanctions import services
from sanctions.models import PlayBan, PlayBanEvidence
from tests.conftest import fresh
from tests.staff.conftest import NOW
from tests.support.staff_console import staff_client

DESCRIPTION = "Назвал в городском инбоксе двух мафиози своего города."


def _evidence(demo) -> Message:
    """A message a city-1 resident wrote in the city inbox (the Procurator reads city inboxes)."""
    return (Message.objects.filter(inbox__game=demo.game, inbox__kind=LepraInboxKind.CITY, inbox__city__number=1,
                                   author_resident__isnull=False).select_related("author_user", "inbox")
            .order_by("received_at", "pk").first())


def _ban(demo, *, ends_at=NOW + timedelta(days=30), offence="omerta", evidence=None):
    message = _evidence(demo)
    return services.do_record_play_ban(demo.game, message.author_user, offence, DESCRIPTION, ends_at=ends_at,
                                       evidence=[evidence or message], acting_user=fresh(demo.procurator), now=NOW)


def _new_game(demo, slug="next-game"):
    return do_create_game(title="Следующая игра", slug=slug, acting_user=fresh(demo.tribune2), now=NOW)


def test_the_procurator_records_a_play_ban_with_evidence_and_the_player_is_told_L_SANCTION_2(
        demo, django_capture_on_commit_callbacks):
    message = _evidence(demo)
    with django_capture_on_commit_callbacks(execute=True):
        ban = _ban(demo)
    assert (ban.user_id, ban.offence, ban.description, ban.starts_at, ban.ends_at, ban.ended_at) == (
        message.author_user_id, "omerta", DESCRIPTION, NOW, NOW + timedelta(days=30), None)
    assert list(PlayBanEvidence.objects.filter(ban=ban).values_list("message_id", flat=True)) == [message.pk]
    event = ScheduledEvent.objects.get(kind="play_ban_end", payload__ban=ban.pk)
    assert (event.game_id, event.due_at, event.done_at) == (demo.game.pk, NOW + timedelta(days=30), None)
    row = GameEvent.objects.get(game=demo.game, kind="play_ban.recorded")
    assert (row.actor_id, row.payload["user"], row.payload["offence"], row.payload["evidence"]) == (
        demo.procurator.pk, message.author_user_id, "omerta", 1)
    assert [m.to for m in mail.outbox] == [[message.author_user.email]]
    assert mail.outbox[0].subject == "Mafia Host: вам запрещено играть"
    assert mail.outbox[0].body == ("Вам запрещено играть до 20 декабря 2026 г. 10:30 (Europe/Moscow): нарушение "
                                   f"омерты. {DESCRIPTION}")


def test_a_play_ban_is_refused_without_its_conditions_L_SANCTION_2(demo):
    message = _evidence(demo)
    player = message.author_user
    mafia_message = Message.objects.filter(inbox__game=demo.game, inbox__kind=LepraInboxKind.MAFIA).first()

    def record(acting, **kwargs):
        args = {"user": player, "offence": "forgery", "description": DESCRIPTION, "ends_at": None,
                "evidence": [message], **kwargs}
        return services.do_record_play_ban(demo.game, args["user"], args["offence"], args["description"],
                                           ends_at=args["ends_at"], evidence=args["evidence"],
                                           acting_user=fresh(acting), now=NOW)

    for persona in ("tribune1", "arbiter", "consigliere", "honest"):
        with pytest.raises(NotAllowed):
            record(getattr(demo, persona))
    for kwargs in ({"evidence": []}, {"evidence": [mafia_message]}, {"ends_at": NOW - timedelta(minutes=1)},
                   {"ends_at": NOW}, {"user": demo.outsider}, {"user": demo.procurator}, {"offence": "insult"},
                   {"description": "  "}):
        with pytest.raises(InvalidInput):
            record(demo.procurator, **kwargs)
    assert PlayBan.objects.count() == 0
    assert not GameEvent.objects.filter(kind="play_ban.recorded").exists()


def test_a_banned_player_cannot_sign_up_for_a_new_game_until_the_planned_end_L_SANCTION_1_L_SANCTION_2(demo):
    ban = _ban(demo)
    game = _new_game(demo)
    player = ban.user
    with pytest.raises(NotAllowed) as refused:
        do_sign_up(game, acting_user=fresh(player), now=NOW + timedelta(days=1))
    assert str(refused.value) == ("Вам запрещено играть до 20 декабря 2026 г. 10:30 (Europe/Moscow): нарушение "
                                  f"омерты. {DESCRIPTION}")
    with pytest.raises(NotAllowed):
        do_sign_up(game, acting_user=fresh(player), now=ban.ends_at - timedelta(microseconds=1))
    # At the planned end the ban stops counting, though the scheduler has not recorded the end yet.
    assert ScheduledEvent.objects.get(payload__ban=ban.pk).done_at is None
    signup = do_sign_up(game, acting_user=fresh(player), now=ban.ends_at)
    assert Signup.objects.filter(pk=signup.pk, user=player, withdrawn_at__isnull=True).exists()
    # Other players are not concerned.
    assert do_sign_up(game, acting_user=fresh(demo.outsider), now=NOW).user_id == demo.outsider.pk


def test_a_ban_for_life_never_ends_and_the_sign_up_page_says_why_L_SANCTION_2(demo):
    ban = _ban(demo, ends_at=None, offence="forgery")
    game = _new_game(demo)
    with pytest.raises(NotAllowed) as refused:
        do_sign_up(game, acting_user=fresh(ban.user), now=NOW + timedelta(days=3650))
    assert str(refused.value) == f"Вам навсегда запрещено играть: подделка копипастов или скриншотов. {DESCRIPTION}"
    assert not ScheduledEvent.objects.filter(kind="play_ban_end").exists()
    client = Client()
    client.force_login(ban.user)
    with time_machine.travel(NOW + timedelta(minutes=1), tick=False):
        response = client.post(f"/games/{game.slug}/signup/")
    assert response.status_code == 403
    assert "Вам навсегда запрещено играть: подделка копипастов или скриншотов." in response.content.decode()
    assert not Signup.objects.filter(game=game, user=ban.user).exists()


def test_the_clock_records_the_end_and_tells_the_player_L_SANCTION_2(demo, django_capture_on_commit_callbacks):
    ban = _ban(demo, ends_at=NOW + timedelta(minutes=1))
    event = ScheduledEvent.objects.get(kind="play_ban_end", payload__ban=ban.pk)
    late = NOW + timedelta(minutes=7)  # the beat runs late: the ban stopped counting at its planned end anyway
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        dispatch_due_events(now=late)
    event.refresh_from_db()
    ban.refresh_from_db()
    assert event.done_at == late and ban.ended_at == late
    row = GameEvent.objects.get(game=demo.game, kind="play_ban.ended")
    assert (row.actor_id, row.payload["ban"], row.payload["until"]) == (None, ban.pk, ban.ends_at.isoformat())
    assert [(m.to, m.subject) for m in mail.outbox] == [([ban.user.email], "Mafia Host: запрет играть окончен")]
    with pytest.raises(NotAllowed):  # only the site records the end
        services.do_record_play_ban_end(ban, acting_user=fresh(demo.procurator), now=late)


def test_the_public_list_names_the_player_the_offence_and_the_end_never_the_evidence_L_SANCTION_2(demo):
    ban = _ban(demo)
    short = _ban(demo, ends_at=NOW + timedelta(hours=1), offence="forgery")
    evidence = _evidence(demo)
    with time_machine.travel(NOW + timedelta(minutes=1), tick=False):
        page = Client().get("/play-bans/")
    assert page.status_code == 200
    body = page.content.decode()
    assert ban.user.public_name in body and "нарушение омерты" in body
    # The page is the site's, for the games of every ruleset: it names the host by no ruleset's title.
    assert "предоставляемых ведущему игры, караются" in body and "Прокурор" not in body
    assert DESCRIPTION not in body and evidence.body_html not in body and f"/inboxes/{evidence.inbox.public_id}/" not in body
    running = services.running_play_bans(NOW + timedelta(hours=2))
    assert list(running.values_list("pk", flat=True)) == [ban.pk]  # the short one has ended by its time
    assert short.pk in set(services.running_play_bans(NOW + timedelta(minutes=30)).values_list("pk", flat=True))


def test_the_procurator_records_a_ban_in_the_console_from_message_links_L_SANCTION_2(demo):
    message = _evidence(demo)
    position = Message.objects.filter(inbox=message.inbox, received_at__lt=message.received_at).count() + 1
    mafia_inbox = Message.objects.filter(inbox__game=demo.game, inbox__kind=LepraInboxKind.MAFIA).first().inbox.public_id
    client = staff_client(demo.procurator)
    url = f"/staff/games/{demo.game.slug}/play-ban/"
    data = {"player": message.author_user_id, "offence": "omerta", "description": DESCRIPTION,
            "until": "2027-01-31T12:00", "evidence": f"https://mafia.example/inboxes/{mafia_inbox}/#n1"}
    with time_machine.travel(NOW, tick=False):
        refused = client.post(url, data)
    assert refused.status_code == 200 and "Это не ссылка на сообщение, которое вы можете читать" in \
        refused.content.decode()
    assert PlayBan.objects.count() == 0
    data["evidence"] = f"https://mafia.example/inboxes/{message.inbox.public_id}/?page=1#n{position}"
    with time_machine.travel(NOW, tick=False):
        response = client.post(url, data)
    assert response.status_code == 302
    ban = PlayBan.objects.get()
    assert (ban.user_id, ban.offence) == (message.author_user_id, "omerta")
    assert ban.ends_at.isoformat() == "2027-01-31T09:00:00+00:00"  # 12:00 in Moscow
    assert list(ban.evidence.values_list("message_id", flat=True)) == [message.pk]
    page = client.get(f"/staff/sanctions/playban/{ban.public_id}/change/").content.decode()
    assert f"/inboxes/{message.inbox.public_id}/?page=1#n{position}" in page
    # Nobody else has the page.
    for persona in ("tribune1", "arbiter", "consigliere"):
        assert staff_client(getattr(demo, persona)).get(url).status_code == 404


def test_the_game_page_tells_the_banned_player_instead_of_offering_the_sign_up_L_SANCTION_2(demo):
    ban = _ban(demo)
    game = _new_game(demo, slug="recruiting")
    client = Client()
    client.force_login(ban.user)
    with time_machine.travel(NOW + timedelta(minutes=1), tick=False):
        page = client.get(f"/games/{game.slug}/").content.decode()
    assert "Вам запрещено играть до 20 декабря 2026 г. 10:30 (Europe/Moscow): нарушение омерты." in page
    assert f'action="/games/{game.slug}/signup/"' not in page
    other = Client()
    other.force_login(demo.outsider)
    with time_machine.travel(NOW + timedelta(minutes=1), tick=False):
        page = other.get(f"/games/{game.slug}/").content.decode()
    assert f'action="/games/{game.slug}/signup/"' in page and "запрещено играть" not in page
