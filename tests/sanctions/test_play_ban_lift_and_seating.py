"""Play bans beyond their recording (L-SANCTION-2): lifted early by whoever may record them (service and console,
audited, the player told, the scheduled end cancelled), and enforced when the cities are formed: a player banned
after signing up is not seated, and the Procurator is told who was left out and why."""
from __future__ import annotations

import random
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.test import Client
from django.utils.translation import override

from cities import recruitment_services
from cities.models import GameEvent, Resident, ScheduledEvent, Signup
from cities.recruitment_services import do_sign_up
from cities.scheduler import dispatch_due_events
from kernel.errors import InvalidInput, NotAllowed, WrongState
from sanctions import services
from sanctions.models import PlayBan
from tests.admin_keys import action_url
from tests.conftest import fresh
from tests.factories import PlayBanFactory
from tests.sanctions.test_play_bans import _ban, _new_game
from tests.setup_factory import build_game
from tests.staff.conftest import NOW
from tests.support.staff_console import flashed, staff_client

REASON = "Доказательства оказались поддельными."


def _refusal(exc_type, fn, *args, **kwargs) -> str:
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    return str(info.value)


# ---- lifting early -------------------------------------------------------------------------------------------

def test_the_procurator_lifts_a_play_ban_early_and_the_player_signs_up_again_L_SANCTION_2(
        demo, django_capture_on_commit_callbacks):
    ban = _ban(demo)
    game = _new_game(demo)
    lifted_at = NOW + timedelta(days=2)
    with override("en"):
        for user in (demo.tribune1, demo.arbiter, demo.consigliere, ban.user, None):
            assert _refusal(NotAllowed, services.do_lift_play_ban, ban, reason=REASON, acting_user=user,
                            now=lifted_at) == "Only the Procurator of the game of the offence lifts a play ban."
        assert _refusal(InvalidInput, services.do_lift_play_ban, ban, reason="  ", acting_user=fresh(demo.procurator),
                        now=lifted_at) == "The reason is empty."
    assert PlayBan.objects.get(pk=ban.pk).lifted_at is None
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        services.do_lift_play_ban(ban, reason=REASON, acting_user=fresh(demo.procurator), now=lifted_at)
    ban.refresh_from_db()
    assert (ban.lifted_at, ban.lifted_by_id, ban.lift_reason, ban.ended_at) == (
        lifted_at, demo.procurator.pk, REASON, lifted_at)
    assert services.running_play_ban_of(ban.user, lifted_at - timedelta(microseconds=1)) == ban
    assert services.running_play_ban_of(ban.user, lifted_at) is None
    assert ban not in services.running_play_bans(lifted_at)  # off the public list
    row = GameEvent.objects.get(kind="play_ban.lifted")
    assert (row.actor_id, row.at, row.payload) == (demo.procurator.pk, lifted_at,
                                                   {"ban": ban.pk, "user": ban.user_id, "reason": REASON})
    assert [(m.to, m.subject) for m in mail.outbox] == [([ban.user.email], "Mafia Host: ваш запрет играть снят")]
    assert mail.outbox[0].body == f"Ваш запрет играть снят: вы снова можете записываться в новые игры. {REASON}"
    end = ScheduledEvent.objects.get(kind="play_ban_end", payload__ban=ban.pk)
    assert end.cancelled_at == lifted_at
    dispatch_due_events(now=NOW + timedelta(days=31))  # the cancelled end tells nobody anything
    assert GameEvent.objects.filter(kind="play_ban.ended").count() == 0
    assert do_sign_up(game, acting_user=fresh(ban.user), now=lifted_at).user_id == ban.user_id
    with override("en"):
        assert _refusal(WrongState, services.do_lift_play_ban, ban, reason=REASON, acting_user=fresh(demo.procurator),
                        now=lifted_at) == "This play ban was lifted already."


def test_a_play_ban_that_is_over_cannot_be_lifted_L_SANCTION_2(demo):
    ban = _ban(demo)
    with override("en"):
        assert _refusal(WrongState, services.do_lift_play_ban, ban, reason=REASON, acting_user=fresh(demo.procurator),
                        now=ban.ends_at) == "This play ban is over already."
    assert not GameEvent.objects.filter(kind="play_ban.lifted").exists()


def test_the_procurator_lifts_a_play_ban_from_the_console_L_SANCTION_2(demo):
    ban = _ban(demo)
    url = "/staff/sanctions/playban/"
    client = staff_client(demo.procurator)
    lifted_at = NOW + timedelta(days=1)
    with time_machine.travel(lifted_at, tick=False):
        page = client.post(url, {"action": "lift_play_ban", "_selected_action": [ban.public_id]})
        assert page.status_code == 200 and 'name="reason"' in page.content.decode()
        assert f'value="{ban.public_id}"' in page.content.decode()  # the ban by its public id (L-INBOX-20)
        listed = client.get(url).content.decode()
        assert f'/staff/sanctions/playban/{ban.public_id}/change/' in listed
        assert f'/staff/sanctions/playban/{ban.pk}/change/' not in listed
        assert PlayBan.objects.get(pk=ban.pk).lifted_at is None
        done = client.post(action_url(url, "lift_play_ban"), {"_selected_action": [ban.public_id], "reason": REASON},
                           follow=True)
    assert flashed(done) == [f"Запрет играть для {ban.user.public_name} снят."]
    assert PlayBan.objects.get(pk=ban.pk).lifted_at == lifted_at
    # Nobody else: the Arbiter's console does not list the ban.
    other = staff_client(demo.arbiter).post(action_url(url, "lift_play_ban"),
                                            {"_selected_action": [ban.public_id], "reason": REASON})
    assert other.status_code in (302, 403, 404)
    assert GameEvent.objects.filter(kind="play_ban.lifted").count() == 1


# ---- forming the cities --------------------------------------------------------------------------------------

def _closed_with_ban(*, ends_in=timedelta(days=30)):
    """A closed recruitment of 2 x 5 players; the third player is banned (in an earlier game) after signing up."""
    built = build_game("closed", slug="banned-later", cities=2, size=5)
    earlier = build_game("recruitment", slug="earlier-game", cities=1, size=0)
    banned = built.players[2]
    PlayBanFactory(game=earlier.game, user=banned, recorded_by=earlier.procurator, starts_at=NOW,
                   ends_at=NOW + ends_in if ends_in else None)
    return built, banned


def test_a_player_banned_after_signing_up_is_not_seated_and_the_procurator_is_told_why_L_SANCTION_2(db):
    built, banned = _closed_with_ban()
    with time_machine.travel(NOW + timedelta(hours=1), tick=False):
        cities = recruitment_services.do_form_cities(built.game, acting_user=built.procurator, rng=random.Random(3))
    assert not Resident.objects.filter(game=built.game, user=banned).exists()
    assert Resident.objects.filter(game=built.game).count() == 9
    reason = (f"{banned.public_name} не рассажен: запрещено играть до 20 декабря 2026 г. 10:30 (Europe/Moscow) "
              "(нарушение омерты).")
    assert cities.left_out == [(banned, reason)]
    row = GameEvent.objects.get(game=built.game, kind="signup.not_seated")
    assert (row.actor_id, row.payload) == (built.procurator.pk, {"user": banned.pk, "reason": reason})
    assert Signup.objects.filter(game=built.game, user=banned, withdrawn_at__isnull=True).exists()  # theirs to keep


def test_the_setup_page_tells_the_procurator_who_was_left_out_L_SANCTION_2(db):
    built, banned = _closed_with_ban(ends_in=None)
    client = Client()
    client.force_login(built.procurator)
    with time_machine.travel(NOW + timedelta(hours=1), tick=False):
        response = client.post(f"/games/{built.game.slug}/setup/form-cities/", {"names": ""}, follow=True)
    assert response.status_code == 200
    shown = [str(m) for m in response.context["messages"]]
    assert shown == [f"{banned.public_name} не рассажен: запрещено играть пожизненно (нарушение омерты)."]
    assert not Resident.objects.filter(game=built.game, user=banned).exists()


def test_a_banned_player_is_not_moved_into_a_city_by_hand_L_SANCTION_2(db):
    built, banned = _closed_with_ban()
    with time_machine.travel(NOW + timedelta(hours=1), tick=False):
        cities = recruitment_services.do_form_cities(built.game, acting_user=built.procurator, rng=random.Random(3))
        signup = Signup.objects.get(game=built.game, user=banned, withdrawn_at__isnull=True)
        with pytest.raises(InvalidInput) as refused:
            recruitment_services.do_move_signup(signup, cities[0], acting_user=built.procurator)
    assert str(refused.value) == cities.left_out[0][1]
    assert not Resident.objects.filter(game=built.game, user=banned).exists()


def test_a_ban_lifted_before_the_cities_are_formed_seats_the_player_L_SANCTION_2(db):
    built, banned = _closed_with_ban()
    ban = PlayBan.objects.get(user=banned)
    services.do_lift_play_ban(ban, reason=REASON, acting_user=ban.recorded_by, now=NOW + timedelta(minutes=5))
    with time_machine.travel(NOW + timedelta(hours=1), tick=False):
        cities = recruitment_services.do_form_cities(built.game, acting_user=built.procurator, rng=random.Random(3))
    assert cities.left_out == []
    assert Resident.objects.filter(game=built.game, user=banned).exists()
