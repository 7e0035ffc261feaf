"""Archive pages (L-ARCH-3): the front page, the timeline, search, vote tables and the SVG chart, the SVG map,
the export; each computed through the policy, with their structure asserted."""
from __future__ import annotations

import json
from datetime import timedelta

from django.utils import translation

from kernel import events as kernel_events
from rulesets.lepra import archive as lepra_archive
from rulesets.lepra.events import LepraEventKind
from archive import charts, selectors, services
from cities.models import Alignment, City, LifeStatus, Resident
from inboxes import membership_services
from tests.archive.archive_helpers import _voting_day
from tests.archive.conftest import MAFIA_PHRASE
from tests.conftest import fresh
from tests.rulesets.lepra.day.day_helpers import CLOSES


def lepra_archive_spec():
    from kernel.rulesets import get_ruleset
    return get_ruleset("lepra")


def test_front_page_after_the_end_has_winner_scoreboard_and_cast_L_ARCH_3(world, client):
    game = world.game
    response = client.get(f"/games/{game.slug}/archive/")
    assert response.status_code == 200 and response.context["front"] is None
    assert 'class="cast"' not in response.content.decode()
    world.end()
    response = client.get(f"/games/{game.slug}/archive/")
    front = response.context["front"]
    residents = list(Resident.objects.filter(game=game))
    mafia_alive = sum(1 for r in residents if r.alignment == Alignment.MAFIA and r.status == LifeStatus.ALIVE)
    honest_alive = sum(1 for r in residents if r.alignment == Alignment.HONEST and r.status == LifeStatus.ALIVE)
    assert (front.total.mafia_alive, front.total.honest_alive, front.total.honest_dead) == (mafia_alive, honest_alive, 1)
    assert [s.city.number for s in front.scores] == [1, 2, 3]
    assert front.winner == "honest"  # as the victory service recorded it
    assert 'data-winner="honest"' in response.content.decode()
    assert len(front.cast) == len(residents) == 60
    mafioso = world.demo.seat("mafioso")
    assert next(c for c in front.cast if c.resident.pk == mafioso.pk).alignment == Alignment.MAFIA
    assert {"commissar"} <= {role for c in front.cast for role in c.roles}
    # The cast table speaks the game's language: no English role or alignment words (Lepra: Russian).
    page = response.content.decode()
    cast = page[page.index('<table class="cast">'):page.index("</table>", page.index('<table class="cast">'))]
    row = cast[cast.index(f">{mafioso.name}</a>"):]
    row = row[:row.index("</tr>")]
    assert "<td>мафия</td>" in row
    assert "комиссар" in cast
    assert not any(f"<td>{word}" in cast for word in ("honest", "mafia", "commissar", "godfather", "judge"))


def test_winner_is_read_from_the_victory_event_or_from_L_WIN_1(world):
    from cities.services import record_event

    world.end(winner=None)
    residents = list(Resident.objects.filter(game=world.game))
    assert selectors.winner_of(world.game, residents) == ""  # ended with both sides alive, no winner (L-WIN-3)
    dead_mafia = [Resident(alignment=r.alignment, status=LifeStatus.DEAD if r.alignment == Alignment.MAFIA else r.status)
                  for r in residents]
    assert selectors.winner_of(world.game, dead_mafia) == "honest"  # L-WIN-1: no mafia alive in any city
    few_honest = [Resident(alignment=r.alignment, status=LifeStatus.DEAD if r.alignment == Alignment.HONEST else r.status)
                  for r in residents]
    assert selectors.winner_of(world.game, few_honest) == "mafia"  # living mafia >= living honest
    record_event(world.game, "game.finished", actor=None, at=world.game.ended_at, payload={"winner": "mafia"})
    assert selectors.winner_of(world.game, residents) == "mafia"  # the victory service's word wins


def test_timeline_groups_by_day_and_filters_by_city_and_kind_L_ARCH_3(world):
    world.end()
    days = selectors.timeline_for(world.demo.anonymous, world.game)
    kinds = {item.kind for d in days for item in d.items}
    assert {"post", "message", "death", "status"} <= kinds
    assert [d.day for d in days] == sorted(d.day for d in days)
    only_city2 = selectors.timeline_for(world.demo.anonymous, world.game, city=2, kind="city")
    items = [i for d in only_city2 for i in d.items]
    assert items and {i.kind for i in items} == {"message"}
    assert {i.inbox.city.number for i in items} == {2} and {i.inbox.kind for i in items} == {"city"}
    with translation.override("en"):
        death = [i for d in selectors.timeline_for(world.demo.anonymous, world.game) for i in d.items if i.kind == "death"]
    assert [i.text for i in death] == [f"{world.demo.seat('resident2').name} died (honest)"]


def test_a_lepra_event_on_the_timeline_is_lepras_declaration_worded_by_lepra_L_ARCH_3(world, monkeypatch):
    _day, a, _b, _voters = _voting_day(world)
    world.end()
    with translation.override("en"):
        items = [i for d in selectors.timeline_for(world.demo.anonymous, world.game) for i in d.items]
    city = a.city
    votes = [(i.kind, i.text, i.city) for i in items if i.kind == LepraEventKind.VOTING_OPENED.timeline]
    assert votes == [("vote", f"Voting opened in {city.name}", city),
                     ("vote", f"Voting closed in {city.name}; leader: {a.name}", city)]  # a name, never an id
    # The words are the game's ruleset's (``RulesetSpec.timeline_line``); the line's kind is the declaration's.
    lepra = type(lepra_archive_spec())
    monkeypatch.setattr(lepra, "timeline_line", lambda self, event, shown, **context: (f"{event.kind}/{shown}", None))
    monkeypatch.setattr(LepraEventKind.VOTING_CLOSED, "timeline", "tally")
    monkeypatch.setattr(kernel_events, "_JOINED", [None, None])  # the joined tables are read anew
    items = [i for d in selectors.timeline_for(world.demo.anonymous, world.game) for i in d.items]
    assert [(i.kind, i.text) for i in items if i.text.startswith("voting.")] == [
        ("vote", "voting.opened/vote"), ("tally", "voting.closed/tally")]
    assert {i.kind for i in items} >= {"death", "status"}  # the engine's own kinds stay the engine's


def test_search_finds_only_what_the_viewer_may_read_L_INBOX_20(world):
    assert [m.inbox_id for m in selectors.search_messages(fresh(world.demo.mafioso), world.game, MAFIA_PHRASE)] == [
        world.inboxes["mafia1"].pk]
    world.end()
    outsider = fresh(world.demo.outsider)
    assert selectors.search_messages(outsider, world.game, MAFIA_PHRASE) == []
    services.do_request_open(world.inbox("mafia1"), acting_user=outsider)
    assert len(selectors.search_messages(fresh(world.demo.outsider), world.game, MAFIA_PHRASE)) == 1


def test_vote_tables_and_chart_show_who_voted_for_whom_and_who_changed_their_mind_L_ARCH_3(world, client):
    _day, a, b, voters = _voting_day(world)
    world.end()
    tables = lepra_archive.vote_tables_for(world.demo.anonymous, world.game)
    assert [(t.city.number, t.day) for t in tables] == [(1, 2)]
    rows = {row.nominee: row for row in tables[0].box.rows}
    assert rows[a.name].count == 3 and rows[b.name].count == 1
    assert sorted(rows[a.name].voters) == sorted(v.name for v in voters[:3])
    assert rows[a.name].changed_mind == [voters[4].name]
    series = {s.nominee: [c for _t, c in s.points] for s in tables[0].series}
    assert series[a.name] == [0, 1, 2, 3, 4, 3, 3] and series[b.name] == [0, 1, 1]
    svg = tables[0].svg
    assert svg.startswith("<svg") and svg.count('class="series"') == 2
    assert f'data-nominee="{a.name}" data-final="3"' in svg and f'data-nominee="{b.name}" data-final="1"' in svg
    page = client.get(f"/games/{world.game.slug}/archive/votes/").content.decode()
    assert 'class="vote-chart"' in page and voters[4].name in page


def test_map_of_the_demo_game_has_its_cities_staff_and_readable_inboxes(world, client):
    world.end()
    svg = charts.game_map_svg(world.demo.anonymous, world.game)
    assert svg.count('<g class="city"') == 3
    assert all(f'data-city="{n}" data-residents="20"' in svg for n in (1, 2, 3))
    assert svg.count('class="staff-role"') == 6  # Procurator, Arbiter, Consigliere (after the end), 3 Tribunes
    # readable inboxes on the map for a visitor after the end: 3 city, court, police, cemetery, notary
    assert 'data-inboxes="7"' in svg and 'data-kind="mafia"' not in svg
    response = client.get(f"/games/{world.game.slug}/archive/map/?format=svg")
    assert response["Content-Type"].startswith("image/svg+xml") and response.content.decode().count('<g class="city"') == 3


def test_map_and_chart_of_a_finished_factory_game(db):
    from cities.models import GameStatus
    from cities.services import do_set_game_status
    from tests.setup_factory import build_game

    built = build_game("numbers", slug="arch-map", cities=2, size=10)
    do_set_game_status(built.game, GameStatus.RUNNING, day_number=1, acting_user=built.procurator)
    do_set_game_status(built.refresh(), GameStatus.FINISHED, acting_user=built.procurator)
    game = built.refresh()
    svg = charts.game_map_svg(None, game)
    assert svg.count('<g class="city"') == 2 and 'data-cities="2"' in svg
    assert svg.count('data-residents="10"') == 2
    assert svg.count('class="resident mafia"') == Resident.objects.filter(game=game, alignment="mafia").count() > 0
    assert lepra_archive.vote_tables_for(None, game) == []
    assert City.objects.filter(game=game).count() == 2


def test_export_json_and_printable_page_of_a_finished_game(world, client):
    world.end()
    data = json.loads(client.get(f"/games/{world.game.slug}/archive/export.json").content)
    assert data["game"]["status"] == "finished" and data["game"]["winner"] == "honest"
    assert {i["kind"] for i in data["inboxes"]} == {"city", "court", "police", "cemetery", "notary"}
    assert len(data["residents"]) == 60 and all(r["alignment"] in ("honest", "mafia") for r in data["residents"])
    page = client.get(f"/games/{world.game.slug}/archive/print/")
    assert page.status_code == 200 and world.game.title in page.content.decode()
    # The winner in the game's words and language, not the side's key.
    with translation.override("ru"):
        won = str(lepra_archive_spec().winner_sentence("honest"))
    assert f'<p class="winner">{won}</p>' in page.content.decode() and ": honest</p>" not in page.content.decode()


def test_search_is_full_text_on_postgresql_and_a_substring_match_on_sqlite_L_ARCH_3(world):
    from django.db import connection

    mafioso = fresh(world.demo.mafioso)
    words_out_of_order = [m.inbox_id for m in selectors.search_messages(mafioso, world.game, "baker tonight")]
    if connection.vendor == "postgresql":
        assert words_out_of_order == [world.inboxes["mafia1"].pk]
    else:
        assert words_out_of_order == []
    assert [m.inbox_id for m in selectors.search_messages(mafioso, world.game, "take the BAKER")] == [world.inboxes["mafia1"].pk]
    assert selectors.search_messages(fresh(world.demo.honest), world.game, "baker tonight") == []


def test_winner_of_a_game_ended_early_is_none_even_if_L_WIN_1_would_name_one_L_WIN_3(world):
    """The GameResult of the early end (winner "") is the word of record, not a count of the living."""
    from rulesets.lepra.game_end_services import do_end_game_early
    do_end_game_early(world.game, reason="Too few players left.", acting_user=fresh(world.demo.procurator))
    residents = [Resident(alignment=Alignment.HONEST, status=LifeStatus.ALIVE)]  # L-WIN-1 alone would say "honest"
    assert selectors.winner_of(world.game, residents) == ""


def test_vote_chart_axis_shows_the_window_in_the_games_time_zone_L_ARCH_3_L_DAY_3(world):
    # Found by the browser suite: the axis of a Moscow game's chart read "09:00 UTC" for a voting opened at 12:00.
    from zoneinfo import ZoneInfo
    _voting_day(world)
    world.end()
    table = lepra_archive.vote_tables_for(world.demo.anonymous, world.game)[0]
    zone = ZoneInfo(world.game.time_zone)
    assert world.game.time_zone == "Europe/Moscow"
    for moment in (table.opens_at, table.closes_at):
        assert f">{moment.astimezone(zone):%H:%M} MSK</text>" in table.svg
    assert " UTC</text>" not in table.svg


def test_vote_chart_axis_follows_the_viewers_own_display_zone_L_ARCH_3(world):
    _voting_day(world)
    world.end()
    viewer = fresh(world.demo.outsider)
    viewer.time_zone = "Europe/London"
    viewer.save(update_fields=["time_zone"])
    table = lepra_archive.vote_tables_for(fresh(world.demo.outsider), world.game)[0]
    assert '>15:00 GMT</text>' in table.svg and '>20:00 GMT</text>' in table.svg  # 18:00 and 23:00 in Moscow
    assert "MSK" not in table.svg


def test_vote_chart_is_an_svg_of_a_viewbox_drawn_from_its_template_L_ARCH_3(world):
    _voting_day(world)
    world.end()
    svg = lepra_archive.vote_tables_for(world.demo.anonymous, world.game)[0].svg
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" class="vote-chart"')
    assert 'viewBox="0 0 640 240"' in svg and 'width="' not in svg.split(">")[0]
    assert svg.count('class="legend"') == 2 and svg.count('class="series"') == 2


def test_vote_chart_legend_uses_the_names_of_the_day_as_the_table_does_L_ARCH_3_L_REPLACE_1(world):
    from django.contrib.auth import get_user_model
    _day, a, b, _voters = _voting_day(world)
    name_of_the_day = a.name
    newcomer = get_user_model().objects.create_user("newcomer", "newcomer@example.org", "x", display_name="Newcomer")
    membership_services.do_replace_player(a, newcomer, acting_user=fresh(world.demo.procurator), now=CLOSES + timedelta(hours=1))
    a.refresh_from_db()
    assert a.name == "Newcomer"
    world.end()
    table = lepra_archive.vote_tables_for(world.demo.anonymous, world.game)[0]
    assert {row.nominee for row in table.box.rows} == {name_of_the_day, b.name}
    assert {s.nominee for s in table.series} == {name_of_the_day, b.name}
    assert f'class="legend" x="488" y="24" fill="#b22222">{name_of_the_day}: 3</text>' in table.svg or \
        f">{name_of_the_day}: 3</text>" in table.svg
    assert "Newcomer" not in table.svg


def test_timeline_page_shows_times_in_the_games_time_zone_L_ARCH_3(world, client):
    # Found by the browser suite: a Moscow game's timeline read "7:00" for an announcement posted at 10:00 there.
    from zoneinfo import ZoneInfo

    from django.template.defaultfilters import date as date_filter
    from django.utils import timezone
    world.end()
    first = selectors.timeline_for(None, world.game)[0].items[0]
    page = client.get(f"/games/{world.game.slug}/archive/timeline/").content.decode()
    with translation.override("ru"):
        local = date_filter(timezone.localtime(first.at, ZoneInfo(world.game.time_zone)), "DATETIME_FORMAT")
        utc = date_filter(timezone.localtime(first.at, ZoneInfo("UTC")), "DATETIME_FORMAT")
    assert world.game.time_zone != "UTC" and local != utc
    assert f'<time datetime="{first.at.isoformat()}">{local} MSK</time>' in page


def test_the_map_is_drawn_from_its_template_scaled_by_its_viewbox_and_escapes_names(world):
    """The map is a template (``archive/svg/game_map.svg``), like the vote chart: no fixed pixel size (the
    ``viewBox`` scales it on a phone), and names are escaped by the template engine."""
    from cities.models import City

    world.end()
    City.objects.filter(game=world.game, number=1).update(name="<b>Малиновка & Co</b>")
    svg = charts.game_map_svg(world.demo.anonymous, world.game)
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" class="game-map"') and ' viewBox="0 0 ' in svg
    assert " width=" not in svg.split(">", 1)[0]  # the outer element: no fixed width
    assert "&lt;b&gt;Малиновка &amp; Co&lt;/b&gt;" in svg and "<b>Малиновка" not in svg


def test_the_finished_lepra_archive_links_the_mafia_draw_verification_L_ASSIGN_3(world, client):
    world.end()
    body = client.get(f"/games/{world.game.slug}/archive/").content.decode()
    assert f'href="/games/{world.game.slug}/draw/"' in body
    assert client.get(f"/games/{world.game.slug}/draw/").status_code == 200
