"""Victory and the end of the game through the services (L-WIN-1..3): checked after night resolution and after
day deaths; the final post; the Procurator's early end; no executions in a city without mafia."""
from __future__ import annotations

from datetime import timedelta

import pytest

from cities.models import GameEvent, GameStatus, PostKind, PublicPost, Resident
from inboxes import policies
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra.models import GameResult, NightActionKind
from rulesets.lepra import game_end_services
from rulesets.lepra.day.services import do_decide_execution, do_schedule_voting
from rulesets.lepra.night import services as night_services
from tests.rulesets.lepra.night.conftest import NOW, kill
from tests.setup_factory import in_game_language

LATER = NOW + timedelta(hours=10)


def final_post(game) -> PublicPost:
    return PublicPost.objects.get(game=game, kind=PostKind.ANNOUNCEMENT)


def test_honest_win_when_the_last_mafioso_is_executed_L_WIN_1(ng):
    kill(ng.mafia[1][0])
    kill(ng.mafia[2][0])
    assert game_end_services.do_check_victory(ng.game, now=NOW) is None
    do_decide_execution(ng.cities[2], ng.mafia[3][0], acting_user=ng.procurator, now=NOW)
    game = ng.refresh()
    assert (game.status, game.ended_at) == (GameStatus.FINISHED, NOW)
    result = GameResult.objects.get(game=game)
    assert (result.winner, result.reason) == ("honest", "")
    assert result.scoreboard == {str(c.number): {"name": c.name, "honest": 4, "mafia": 0} for c in ng.cities}
    post = final_post(game)
    assert post.published_at == NOW and post.author is None
    assert in_game_language(game, "The game is over: the honest residents win.") in post.body
    assert GameEvent.objects.get(game=game, kind="game.finished").payload["winner"] == "honest"


def test_mafia_win_after_the_night_when_as_many_as_the_honest_L_WIN_1(ng):
    # 12 honest, 3 mafia; 8 honest die by day: 4 honest vs 3 mafia; the night kills two more: 2 vs 3.
    for number in (1, 2, 3):
        for r in ng.honest[number]:
            kill(r)
    kill(ng.judge[3])
    kill(ng.commissar[3])
    assert game_end_services.do_check_victory(ng.game, now=NOW) is None
    night_services.do_submit_night_decision(ng.cities[0], ng.judge[1], acting_user=ng.godfather[1].user, now=NOW)
    night_services.do_submit_night_decision(ng.cities[0], ng.commissar[2], kind=NightActionKind.TOUR,
                                      acting_user=ng.godfather[1].user, now=NOW)
    night_services.do_resolve_night(ng.game, night=2, now=LATER)
    game = ng.refresh()
    assert game.status == GameStatus.FINISHED
    assert GameResult.objects.get(game=game).winner == "mafia"
    assert in_game_language(game, "The game is over: the mafia win.") in final_post(game).body
    # After the game the archive opens (L-ARCH-1): a public inbox kind is readable by anyone.
    city_inbox = Inbox.objects.filter(game=game, kind=LepraInboxKind.CITY).first()
    assert policies.can_read_inbox(ng.staff["tribune2"], city_inbox)


def test_victory_is_not_decided_twice(ng):
    for r in (ng.mafia[1][0], ng.mafia[2][0], ng.mafia[3][0]):
        kill(r)
    assert game_end_services.do_check_victory(ng.game, now=NOW) == "honest"
    assert game_end_services.do_check_victory(ng.game, now=LATER) is None
    assert GameResult.objects.filter(game=ng.game).count() == 1


def test_procurator_ends_the_game_early_with_a_reason_L_WIN_3(ng):
    with pytest.raises(NotAllowed):
        game_end_services.do_end_game_early(ng.game, reason="Тест", acting_user=ng.consigliere, now=NOW)
    with pytest.raises(InvalidInput):
        game_end_services.do_end_game_early(ng.game, reason="  ", acting_user=ng.procurator, now=NOW)
    result = game_end_services.do_end_game_early(ng.game, reason="Половина игроков пропала.", acting_user=ng.procurator,
                                        now=NOW)
    game = ng.refresh()
    assert (game.status, result.winner, result.reason) == (GameStatus.FINISHED, "", "Половина игроков пропала.")
    assert "Половина игроков пропала." in final_post(game).body
    with pytest.raises(WrongState):
        game_end_services.do_end_game_early(game, reason="again", acting_user=ng.procurator, now=NOW)


def test_end_game_page_is_the_procurators_only_L_WIN_3(ng, client):
    client.force_login(ng.consigliere)
    assert client.get(f"/games/{ng.game.slug}/end/").status_code == 404
    client.force_login(ng.procurator)
    response = client.post(f"/games/{ng.game.slug}/end/", {"reason": "Сервер переезжает.", "confirmed": "yes"})
    assert response.status_code == 302
    assert GameResult.objects.get(game=ng.game).reason == "Сервер переезжает."


def test_city_without_living_mafia_holds_no_more_executions_L_WIN_2(ng):
    kill(ng.mafia[1][0])
    Resident.objects.filter(pk=ng.mafia[1][0].pk).update(alignment_announced=True)  # the daily post (L-DEATH-2)
    opens = NOW + timedelta(hours=1)
    with pytest.raises(WrongState) as refused:
        do_schedule_voting(ng.cities[0], opens, opens + timedelta(hours=1), acting_user=ng.staff["tribune1"],
                           now=NOW)
    assert refused.value.rule == "L-WIN-2"
    session = do_schedule_voting(ng.cities[1], opens, opens + timedelta(hours=1), acting_user=ng.staff["tribune2"],
                                 now=NOW)
    assert session.city == ng.cities[1]


def test_night_end_after_the_game_ended_changes_nothing(ng):
    game_end_services.do_end_game_early(ng.game, reason="Конец.", acting_user=ng.procurator, now=NOW)
    with pytest.raises(WrongState):
        night_services.do_resolve_night(ng.game, night=2, now=LATER)


def test_a_city_that_never_had_mafia_is_not_concerned_by_L_WIN_2_and_no_victory_without_a_draw(db):
    from django.contrib.auth import get_user_model

    from rulesets.lepra.staff_kinds import StaffKind
    from cities.services import do_add_city, do_appoint_staff, do_create_game, do_seat_resident, do_set_game_status
    User = get_user_model()
    proc = User.objects.create_user("nodraw-proc", "nd@example.com", "x-secret-123")
    game = do_create_game(title="No draw", slug="no-draw", acting_user=proc, now=NOW)
    city = do_add_city(game, name="Тихий", acting_user=proc, now=NOW)
    tribune = User.objects.create_user("nodraw-t", "ndt@example.com", "x-secret-123")
    do_appoint_staff(game, tribune, StaffKind.TRIBUNE, acting_user=proc, city=city, now=NOW)
    for i in range(3):
        do_seat_resident(city, User.objects.create_user(f"nd{i}", f"nd{i}@example.com", "x"), acting_user=proc, now=NOW)
    game = do_set_game_status(game, GameStatus.RUNNING, day_number=2, acting_user=proc, now=NOW)
    assert game_end_services.do_check_victory(game, now=NOW) is None
    opens = NOW + timedelta(hours=1)
    assert do_schedule_voting(city, opens, opens + timedelta(hours=1), acting_user=tribune, now=NOW).city == city


def test_a_refusal_does_not_tell_the_tribune_that_an_unannounced_dead_was_the_last_mafioso_L_WIN_2_L_STAFF_6(ng):
    kill(ng.mafia[1][0])  # nobody may know yet that he was mafia: the city votes as usual until it is announced
    opens = NOW + timedelta(hours=1)
    session = do_schedule_voting(ng.cities[0], opens, opens + timedelta(hours=1), acting_user=ng.staff["tribune1"],
                                 now=NOW)
    assert session.city == ng.cities[0]
