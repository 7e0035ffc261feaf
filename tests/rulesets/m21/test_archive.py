"""The archive of an M21 game (L-ARCH-1..3, M-SETUP-1, M-VOTE, M-NIGHT-1/4): the archive page asks the ruleset for
its sections; before the end nobody but the hosts sees any of them; after the end a logged-out visitor reads the
roles, the vote history per day (table and chart), the vote receipts, every night's trace and the deal's
verification, while role PMs open only with their player's consent and the mafia thread on request."""
from __future__ import annotations

import re

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from archive import services as archive_services
from cities.models import GameStatus
from inboxes import policies
from inboxes.models import Inbox
from rulesets.m21.kinds import M21InboxKind
from kernel.rulesets import ruleset_of
from rulesets.m21 import archive as m21_archive
from rulesets.m21 import night_services as ns
from rulesets.m21 import host_services, services
from rulesets.m21.roles import ROLES
from tests.rulesets.m21.day_helpers import build_game, make_user
from tests.rulesets.m21.night_helpers import archive_page, hammer, play_to_night_one, play_to_the_end

pytestmark = pytest.mark.django_db

SECTION_MARKS = ['data-section="cast"', 'data-section="votes"', 'data-section="receipts"', 'data-section="nights"',
                 'data-section="disclosure"', 'data-section="deal"']


def test_the_spec_declares_the_sections_the_archive_module_builds_L_ARCH_3():
    assert ruleset_of(build_game(start_day=False).game).archive_sections == m21_archive.SECTIONS


def test_before_the_end_nothing_of_the_record_is_shown_but_to_the_hosts_L_ARCH_3():
    table = build_game()
    play_to_night_one(table)
    hooker = table.name_of_role("hooker")
    outsider = make_user("Outsider")
    for viewer in (None, outsider, table.users[hooker], table.users[table.name_of_role("cop")],
                   table.users[table.name_of_role("godfather")]):
        body = archive_page(table, viewer)
        assert not any(mark in body for mark in SECTION_MARKS)
        assert "Godfather</td>" not in body and "Hooker</td>" not in body
    with time_machine.travel(table.tick(), tick=False):
        votes = Client().get(reverse("archive_votes", args=[table.game.slug])).content.decode()
    assert 'data-section="votes"' not in votes and "No voting you can read." in votes
    host_page = archive_page(table, table.host)
    assert 'data-section="cast"' in host_page and 'data-section="votes"' in host_page
    assert 'data-section="disclosure"' not in host_page  # the disclosure list exists only after the end


def test_after_the_end_a_visitor_reads_roles_votes_receipts_nights_and_the_deal_L_ARCH_3_M_NIGHT_4():
    table = build_game()
    play_to_the_end(table)
    godfather, hooker, cop = (table.name_of_role(r) for r in ("godfather", "hooker", "cop"))
    body = archive_page(table)
    for mark in SECTION_MARKS:
        assert mark in body
    assert f'data-player="{godfather}"><td>{godfather}</td>' in body and f"{ROLES['godfather'].name}</td>" in body
    # Day 1: four END votes on the godfather; the table and the chart agree with the stored count.
    day1 = body.split('class="m21-vote-day" data-day="1"')[1].split("</section>")[0]
    assert f"{godfather} was imprisoned (the hammer)." in day1
    assert f'data-target="{godfather}" data-count="4"' in day1
    assert f'data-nominee="{godfather}" data-final="4"' in day1
    # The receipts of the posts that voted.
    assert "<code>##VOTE " in body and "##END</code>" in body
    # Night 1: the mafia's kill, the cop's result, the steps of M-NIGHT-1 and the visits.
    night1 = body.split('class="m21-night" data-night="1"')[1].split("</section>")[0]
    assert f'data-player="{table.victim}">{table.victim} (mafia)' in night1
    assert f"<td>{cop}</td><td>investigate</td><td>{hooker}</td><td>guilty</td>" in night1
    assert f"<li>{cop} → {hooker}</li>" in night1 and f"<li>{hooker} → {table.victim}</li>" in night1
    assert 'data-step="roleblocks"' in night1
    assert 'data-verified="yes"' in body
    with time_machine.travel(table.tick(), tick=False):
        votes = Client().get(reverse("archive_votes", args=[table.game.slug])).content.decode()
    assert f'data-nominee="{godfather}" data-final="4"' in votes and "No voting you can read." not in votes


def test_the_archive_says_the_town_won_in_the_rulesets_words_M_WIN_1_L_ARCH_3():
    table = build_game()
    play_to_the_end(table)
    body = archive_page(table)
    assert '<p class="winner" data-winner="town">The town won.</p>' in body
    assert "honest residents" not in body


def test_role_pms_open_with_their_players_consent_and_the_mafia_thread_on_request_L_ARCH_1_L_ARCH_2():
    table = build_game()
    play_to_the_end(table)
    cop = table.name_of_role("cop")
    pm = table.seat(cop).m21_seat.role_pm
    mafia = Inbox.objects.get(game=table.game, kind=M21InboxKind.MAFIA_THREAD)
    body = archive_page(table)
    assert f'data-kind="role_pm" data-disclosed="no">{pm.title}:' in body
    assert f'data-kind="mafia_thread" data-disclosed="no">{mafia.title}:' in body
    assert not policies.can_read_inbox(None, pm) and not policies.can_read_inbox(None, mafia)
    archive_services.do_give_consent(pm, acting_user=table.users[cop])
    assert policies.can_read_inbox(None, pm)
    body = archive_page(table)
    assert f'data-disclosed="yes"><a href="{reverse("inbox_thread", args=[pm.public_id])}">{pm.title}</a>' in body
    reader = make_user("Reader")
    archive_services.do_request_open(mafia, acting_user=reader)
    assert policies.can_read_inbox(reader, mafia) and not policies.can_read_inbox(None, mafia)


def test_the_vote_chart_counts_a_vote_by_a_seat_replaced_later_with_the_names_of_the_day_M_VOTE_8_L_REPLACE_1():
    table = build_game()
    godfather = table.name_of_role("godfather")
    living = [n for n in table.users if n != godfather]
    voter = living[0]
    play_to_night_one(table)
    # The first of the four END voters on day 1 is replaced during night 1, before the archive is drawn.
    newcomer = make_user("Newcomer")
    services.do_replace_m21_player(table.seat(voter), newcomer, acting_user=table.host, now=table.tick())
    del table.users[voter]
    table.users["Newcomer"] = newcomer
    night = ns.open_night(table.game)
    table.run_clock(night.planned_end)
    hammer(table, table.name_of_role("hooker"))
    table.game.refresh_from_db()
    assert table.game.status == GameStatus.FINISHED
    day1 = archive_page(table).split('class="m21-vote-day" data-day="1"')[1].split("</section>")[0]
    assert f'data-target="{godfather}" data-count="4"' in day1
    assert f'data-nominee="{godfather}" data-final="4"' in day1
    series = m21_archive.standing_votes(table.day(1))
    assert [(s.nominee, s.points[-1][1]) for s in series] == [(godfather, 4)]


def test_the_archive_tells_each_night_step_in_sentences_not_a_trace_M_NIGHT_1():
    table = build_game()
    play_to_the_end(table)
    hooker, cop = table.name_of_role("hooker"), table.name_of_role("cop")
    night1 = archive_page(table).split('class="m21-night" data-night="1"')[1].split("</section>")[0]
    assert "<strong>2. Roleblocks</strong>" in night1 and "<strong>8. Shots and the mafia kill</strong>" in night1
    assert f"<li>{cop} submitted the investigation on {hooker}; it counts (resolved at step 4).</li>" in night1
    assert f"<li>{hooker} carries out the mafia&#x27;s kill on {table.victim}.</li>" in night1
    assert f"<li>{table.victim} dies of the mafia kill, carried out by {hooker}.</li>" in night1
    assert "seq:" not in night1 and "(step:" not in night1 and "counted (" not in night1


def test_every_link_of_the_finished_archive_leads_to_a_page_not_a_404_and_no_lepra_draw_L_ARCH_3():
    table = build_game()
    play_to_the_end(table)
    body = archive_page(table)
    slug = table.game.slug
    assert f"/games/{slug}/draw/" not in body  # the mafia draw is Lepra's: an M21 game has no such page
    links = sorted({href for href in re.findall(r'href="([^"#?]+)"', body) if href.startswith(f"/games/{slug}/")})
    client = Client()
    with time_machine.travel(table.tick(), tick=False):
        statuses = {href: client.get(href).status_code for href in links}
    assert statuses and {href: status for href, status in statuses.items() if status != 200} == {}


def test_a_day_the_game_ended_in_shows_its_count_at_the_end_not_an_open_day_M_WIN_1_L_ARCH_3():
    table = build_game()
    mafia = table.names_of_roles("godfather", "hooker")
    voter, target = [n for n in table.users if n not in mafia][:2]
    table.post(voter, f"##VOTE {target}")
    for name in mafia:  # the host removes both mafiosi during day 1: the town has won, the day never ended
        host_services.do_remove_m21_player(table.seat(name), acting_user=table.host, reveal_role=True,
                                           now=table.tick())
    table.game.refresh_from_db()
    assert table.game.status == GameStatus.FINISHED
    with time_machine.travel(table.tick(), tick=False):
        votes = Client().get(reverse("archive_votes", args=[table.game.slug])).content.decode()
    day1 = votes.split('class="m21-vote-day" data-day="1"')[1].split("</section>")[0]
    assert "The day was still open" not in day1 and "The game ended during the day." in day1
    assert f'<tr data-target="{target}" data-count="1"><td>{target}</td><td>1</td><td>{voter}</td></tr>' in day1


def test_the_map_and_the_timeline_of_an_m21_game_speak_of_its_host_and_its_own_threads_only_M_SETUP_5():
    table = build_game()
    play_to_the_end(table)
    client = Client()
    with time_machine.travel(table.tick(), tick=False):
        game_map = client.get(reverse("archive_map", args=[table.game.slug])).content.decode()
        timeline = client.get(reverse("archive_timeline", args=[table.game.slug])).content.decode()
    assert "Host: " in game_map and "Procurator" not in game_map
    kinds = re.findall(r'<option value="([a-z_]+)"', timeline.split('name="kind"')[1].split("</select>")[0])
    spec = ruleset_of(table.game)
    assert kinds == [k for k, _label in spec.inbox_kind_choices if k in spec.inbox_kinds]  # the ruleset's order
    assert "game_thread" in kinds and "police" not in kinds and "cemetery" not in kinds
    assert 'name="city"' not in timeline  # one game, no cities to filter by


def test_the_printable_page_and_the_timeline_of_an_m21_game_word_sides_and_winner_as_m21_does_L_ARCH_3():
    table = build_game()
    play_to_the_end(table)
    client = Client()
    with time_machine.travel(table.tick(), tick=False):
        printable = client.get(reverse("archive_export_print", args=[table.game.slug])).content.decode()
        timeline = client.get(reverse("archive_timeline", args=[table.game.slug])).content.decode()
    godfather, victim = table.name_of_role("godfather"), table.victim
    assert '<p class="winner">The town won.</p>' in printable
    assert f"<li>{godfather} — Mafia</li>" in printable and f"<li>{victim} — Town</li>" in printable
    assert "honest" not in printable and "honest" not in timeline
    assert f"{victim} died (Town)" in timeline
