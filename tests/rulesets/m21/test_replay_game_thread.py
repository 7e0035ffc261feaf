"""The three shared real games replayed *through the game thread* of a hosted M21 game (the classic forum preset:
a majority ends the day at once): every vote action becomes a post with ``##VOTE`` lines by the account that
wrote it, replacements and night kills go through the host's services, and each day ends by itself at the same
post as ``voting.forum_replay.replay_forum_game`` with the host's elimination (tests/data/real_games/README.md)."""
from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from cities.models import LifeStatus, Resident, ScheduledEvent, Signup
from cities.recruitment_services import do_close_signups, do_sign_up
from inboxes.models import Message
from inboxes.posting import do_post_message
from rulesets.m21 import services
from rulesets.m21.models import DayStatus, M21Day, M21Seat
from tests.rulesets.m21.day_helpers import START
from voting.forum_replay import replay_forum_game
from voting.forum_vote import ForumRemovalCause

pytestmark = pytest.mark.django_db

REAL_GAMES = Path(__file__).resolve().parents[2] / "data" / "real_games"
GAMES = ["game_1_9p.json", "game_2_11p.json", "game_3_13p.json"]


def _user(account: str):
    """The account's user, named by the account (``P05.2``): a vote for ``P05`` names the seat by its prefix."""
    return get_user_model().objects.create_user(account.lower(), f"{account.lower()}@example.com", "x-secret-123",
                                                display_name=account)


def _line(action: dict) -> str | None:
    return {"VOTE": f"##VOTE {action.get('target')}", "UNVOTE": "##UNVOTE", "NO_LYNCH": "##VOTE No Lynch"}.get(
        action["action"])


def replay_through_the_game_thread(data: dict) -> list[tuple[int, int | None, str | None, str]]:
    """Host the file's game here and replay it; returns per day (day, the post whose message ended it, the
    imprisoned seat, "lynch"/"no_lynch")."""
    host = get_user_model().objects.create_user(f"host-{data['game_key']}", f"h-{data['game_key']}@example.com",
                                                "x-secret-123", display_name="MOD1")
    now = START - timedelta(days=1)
    game = services.do_create_m21_game(title=data["game_key"], slug=data["game_key"].replace("_", "-"),
                                       acting_user=host, vote_preset="classic", now=now)
    accounts = {}
    for player in data["players"]:
        for account in player["accounts"]:
            accounts[account["id"]] = _user(account["id"])
        do_sign_up(game, acting_user=accounts[player["accounts"][0]["id"]], now=now)
    do_close_signups(game, acting_user=host, now=now)
    game.refresh_from_db()
    mafia = sum(p["alignment"] == "mafia" for p in data["players"])
    services.do_choose_m21_setup(game, {"citizen": len(data["players"]) - mafia, "goon": mafia}, acting_user=host,
                                 now=now)
    services.do_deal_m21_roles(game, first_day_starts_at=START, acting_user=host, now=now)
    # The deal was random; give each seat the file's alignment (rows, as a factory would), so that the victory
    # check (M-WIN-1) decides the game where the host did.
    for player in data["players"]:
        user = accounts[player["accounts"][0]["id"]]
        mafioso = player["alignment"] == "mafia"
        Resident.objects.filter(game=game, user=user).update(alignment="mafia" if mafioso else "honest")
        M21Seat.objects.filter(resident__game=game, resident__user=user).update(role="goon" if mafioso else "citizen")
    assert Signup.objects.filter(game=game).count() == len(data["players"])
    thread = services.thread_of(game)
    seat = {p["id"]: Resident.objects.get(game=game, user=accounts[p["accounts"][0]["id"]]) for p in data["players"]}
    replacements = sorted((a["from_post"], p["id"], a["id"]) for p in data["players"] for a in p["accounts"]
                          if a["from_post"] > 0)
    kills = {night["night"]: night["killed"] for night in data["nights"]}
    clock = START
    results = []
    for day in data["days"]:
        clock += timedelta(minutes=1)
        for post, seat_id, account in [r for r in replacements if r[0] <= day["start_post"]]:
            services.do_replace_m21_player(seat[seat_id], accounts[account], acting_user=host, now=clock)
            replacements.remove((post, seat_id, account))
        services.do_start_m21_day(game, day["day"], planned_at=clock, acting_user=host, now=clock)
        post_of_message = {}
        groups: list[tuple[int, str, list[str]]] = []
        for action in day["actions"]:
            line = _line(action)
            if line is None:
                continue
            if groups and groups[-1][:2] == (action["post"], action["voter_account"]):
                groups[-1][2].append(line)
            else:
                groups.append((action["post"], action["voter_account"], [line]))
        for post, account, lines in groups:
            for due in [r for r in replacements if r[0] <= post]:
                clock += timedelta(seconds=1)
                services.do_replace_m21_player(seat[due[1]], accounts[due[2]], acting_user=host, now=clock)
                replacements.remove(due)
            clock += timedelta(seconds=1)
            message = do_post_message(thread, "\n".join(lines), acting_user=accounts[account], now=clock)
            post_of_message[message.received_at] = post
        record = M21Day.objects.get(game=game, number=day["day"])
        assert record.status == DayStatus.DECIDED
        ended_post = post_of_message.get(record.ended_at)
        imprisoned = next((sid for sid, r in seat.items() if r.pk == record.imprisoned_id), None)
        results.append((day["day"], ended_post, imprisoned, "no_lynch" if record.result["no_lynch"] else "lynch"))
        for killed in kills.get(day["day"], []):
            clock += timedelta(seconds=1)
            services.do_remove_m21_player(seat[killed], acting_user=host, cause=ForumRemovalCause.KILLED, now=clock)
        # The night ends: the next day starts by hand above (the clock is not what is replayed here).
        ScheduledEvent.objects.filter(game=game, done_at__isnull=True).update(cancelled_at=clock)
        alive = sorted(sid for sid, r in seat.items() if Resident.objects.get(pk=r.pk).status == LifeStatus.ALIVE)
        nxt = next((d for d in data["days"] if d["day"] == day["day"] + 1), None)
        if nxt is not None:
            assert alive == sorted(nxt["alive_at_start"])
    assert Message.objects.filter(inbox=thread, author_resident__isnull=False).exists()
    game.refresh_from_db()
    assert (game.status, services.m21_winner(game)) == ("finished", data["winner"])
    assert thread.messages.filter(body__startswith=f"**The game is over: the {data['winner']} wins.**").exists()
    return results


@pytest.mark.parametrize("name", GAMES)
def test_the_real_games_replayed_through_the_game_thread_end_where_the_replay_tool_says(name):
    data = json.loads((REAL_GAMES / name).read_text(encoding="utf-8"))
    expected = [(day.day, day.ended_at, day.eliminated, day.result) for day in replay_forum_game(data).days]
    hosts = [(d["day"], d["official"]["eliminated"], d["official"]["result"]) for d in data["days"]]
    got = replay_through_the_game_thread(data)
    assert got == expected
    assert [(d, e, r) for d, _post, e, r in got] == hosts
