"""The vote chart and the map rendered for a finished factory game (issue 8: "render them for the demo game and a
finished factory game and assert their structure"): two cities of ten, one voting day in city 1."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import time_machine

from rulesets.lepra import archive as lepra_archive
from archive import charts
from cities.models import City, GameStatus, LifeStatus, Resident
from cities.services import do_set_game_status
from inboxes import posting
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from rulesets.lepra.day.services import do_close_voting, do_nominate, do_open_voting, do_schedule_voting
from tests.setup_factory import build_game

MORNING = datetime(2026, 12, 3, 7, 0, tzinfo=UTC)  # 10:00 Moscow
OPENS = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)
CLOSES = datetime(2026, 12, 3, 19, 0, tzinfo=UTC)


def test_vote_chart_and_map_of_a_finished_factory_game_have_the_expected_structure(db):
    with time_machine.travel(MORNING - timedelta(days=2), tick=False):
        built = build_game("numbers", slug="arch-chart", cities=2, size=10)
    game = built.game
    do_set_game_status(game, GameStatus.RUNNING, day_number=2, acting_user=built.procurator, now=MORNING)
    city = City.objects.get(game=game, number=1)
    residents = list(Resident.objects.filter(seats.rank_q("is_judge", False), city=city, status=LifeStatus.ALIVE)
                     .select_related("user").order_by("name"))
    a, b = residents[0], residents[1]
    do_nominate(a, acting_user=residents[2].user, now=MORNING)
    do_nominate(b, acting_user=residents[3].user, now=MORNING)
    session = do_schedule_voting(city, OPENS, CLOSES, acting_user=built.staff["tribune1"], now=MORNING)
    do_open_voting(session, acting_user=None, now=OPENS)
    inbox_a = Inbox.objects.get(kind=LepraInboxKind.VOTING, resident=a)
    inbox_b = Inbox.objects.get(kind=LepraInboxKind.VOTING, resident=b)
    for n, voter in enumerate(residents[2:6]):
        posting.do_post_message(inbox_a, "казнить", acting_user=voter.user, now=OPENS + timedelta(minutes=n + 1))
    posting.do_post_message(inbox_b, "казнить", acting_user=residents[6].user, now=OPENS + timedelta(minutes=30))
    do_close_voting(session, acting_user=None, now=CLOSES)
    do_set_game_status(game, GameStatus.FINISHED, acting_user=built.procurator, now=CLOSES + timedelta(minutes=5))
    game.refresh_from_db()

    tables = lepra_archive.vote_tables_for(None, game)
    assert [(t.city.number, t.day) for t in tables] == [(1, 2)]
    svg = tables[0].svg
    assert svg.count('class="series"') == 2
    assert f'data-nominee="{a.name}" data-final="4"' in svg and f'data-nominee="{b.name}" data-final="1"' in svg
    assert {row.nominee: row.count for row in tables[0].box.rows} == {a.name: 4, b.name: 1}

    game_map = charts.game_map_svg(None, game)
    assert 'data-cities="2"' in game_map and game_map.count('<g class="city"') == 2
    assert game_map.count('data-residents="10"') == 2
    assert game_map.count('class="resident mafia"') == Resident.objects.filter(game=game, alignment="mafia").count() > 0
    assert game_map.count('data-kind="voting"') == 0  # voting inboxes are in the vote tables, not on the map
