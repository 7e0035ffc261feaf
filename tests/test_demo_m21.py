"""The M21 demo of ``make run`` (``manage.py load_demo``; RULES.md Part 2): 20 players with the default setup, built
through the services and the clock into day 2: day 1 hammered a goon, night 1 resolved with a death, private
results and a headline, and a vote count in progress; ``load_demo`` loads it beside the Lepra demo and prints its
personas."""
from __future__ import annotations

import io
import random
from datetime import UTC, datetime

import pytest
import time_machine
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.urls import reverse

from cities.models import Game, GameStatus, LifeStatus, PostKind, PublicPost, Resident
from inboxes.models import Message
from rulesets.lepra.demo import demo_account_maker
from rulesets.m21 import console_selectors, services
from rulesets.m21.demo import M21_DEMO_SETUP, M21_DEMO_SLUG, load_m21_demo
from rulesets.m21.models import DayStatus, M21Day, M21Seat
from rulesets.m21.night_models import M21Night

pytestmark = pytest.mark.django_db

#: 14:35 in London on a summer day (BST): the demo's phase shift is 13:00 local, day 2 started at 12:00 UTC.
NOW = datetime(2026, 7, 8, 13, 35, tzinfo=UTC)


@pytest.fixture
def m21_demo():
    with time_machine.travel(NOW, tick=False):
        return load_m21_demo(make_user=demo_account_maker(), rng=random.Random(2026), now=NOW)


def test_the_m21_demo_is_day_two_with_the_default_setup_of_twenty_M_SETUP_1(m21_demo):
    game = m21_demo.game
    assert (game.status, game.day_number, game.time_zone) == (GameStatus.RUNNING, 2, "Europe/London")
    roles = sorted(M21Seat.objects.filter(resident__game=game).values_list("role", flat=True))
    assert roles == sorted(role for role, n in M21_DEMO_SETUP.items() for _ in range(n)) and len(roles) == 20
    day1, day2 = M21Day.objects.filter(game=game).order_by("number")
    assert (day1.status, day1.how, day1.imprisoned.m21_seat.role) == (DayStatus.DECIDED, "end_hammer", "goon")
    assert day2.status == DayStatus.OPEN
    assert day2.starts_at == datetime(2026, 7, 8, 12, 0, tzinfo=UTC) < NOW < day2.deadline
    assert day2.deadline == datetime(2026, 7, 10, 12, 0, tzinfo=UTC)


def test_the_demo_night_was_resolved_with_a_death_results_and_a_headline_M_NIGHT_1_M_NIGHT_4(m21_demo):
    game, roles = m21_demo.game, m21_demo.roles
    name_of = {role: next(n for n, r in roles.items() if r == role) for role in ("cop", "hooker", "reporter")}
    victim = next(n for n, r in roles.items() if r == "citizen")
    night = M21Night.objects.get(game=game, number=1)
    assert night.resolved_at is not None
    assert night.outcome["deaths"] == [{"player": victim, "cause": "mafia"}]
    assert night.outcome["headlines"] == [f"{name_of['hooker']} went out last night!"]
    dead = Resident.objects.filter(game=game).exclude(status=LifeStatus.ALIVE)
    assert sorted((r.name, r.status) for r in dead) == sorted(
        [(victim, LifeStatus.DEAD), (M21Day.objects.get(game=game, number=1).imprisoned.name, LifeStatus.IMPRISONED)])
    cop_pm = Resident.objects.get(game=game, name=name_of["cop"]).m21_seat.role_pm
    assert Message.objects.filter(inbox=cop_pm, body__contains=f"Your investigation of {name_of['hooker']}: GUILTY"
                                  ).exists()
    godfather = next(n for n, r in roles.items() if r == "godfather")
    stash = console_selectors.stash_of(game)
    assert (stash.unused, [(item, holder) for item, holder, _since in stash.held]) == (
        ["Binoculars", "Whiskey"], [("Gun", godfather)])  # the mafia took the gun on night 1 (M-MAFIA-2)
    morning = PublicPost.objects.get(game=game, kind=PostKind.DAILY)
    assert victim in morning.body and f"{name_of['hooker']} went out last night!" in morning.body


def test_the_demo_day_two_count_is_in_progress_and_posted_by_the_cohost_M_VOTE_8(m21_demo):
    game, roles = m21_demo.game, m21_demo.roles
    hooker = next(n for n, r in roles.items() if r == "hooker")
    citizens = [n for n, r in roles.items() if r == "citizen"]
    day2 = M21Day.objects.get(game=game, number=2)
    count = services.day_outcome(day2, now=NOW).report.count
    assert {target: len(voters) for target, voters in count.votes.items()} == {
        hooker: 3, citizens[5]: 2, "NO_LYNCH": 1}
    assert (len(count.living), count.majority) == (18, 10)
    posted = Message.objects.filter(inbox=day2.thread, author_user=m21_demo.cohost).get()
    assert posted.body.startswith("Day 2\n\n") and hooker in posted.body


def test_load_demo_loads_the_m21_demo_and_prints_its_personas(demo):
    out = io.StringIO()
    call_command("load_demo", "--if-empty", stdout=out)
    text = out.getvalue()
    game = Game.objects.get(slug=M21_DEMO_SLUG)
    assert f"M21 demo (English, day 2): open http://127.0.0.1:8000/games/{M21_DEMO_SLUG}/m21/" in text
    assert f"m21host (host), m21cohost (co-host); host console http://127.0.0.1:8000/staff/m21/{game.slug}/" in text
    assert "Players:    m21p01..m21p20; mafia " in text and "(Godfather)" in text
    assert M21Day.objects.get(game=game, number=2).status == DayStatus.OPEN
    again = io.StringIO()
    call_command("load_demo", "--if-empty", stdout=again)
    assert "Loading the M21 demo game" not in again.getvalue() and "M21 demo (English" in again.getvalue()
    assert game.day_number == 2


def test_the_demo_personas_open_their_pages_and_nobody_else_the_console_M_SETUP_4(m21_demo, client):
    game = m21_demo.game
    console = reverse("staff_admin:m21_console", args=[game.slug])
    with time_machine.travel(NOW, tick=False):
        client.force_login(m21_demo.host)
        page = client.get(console).content.decode()
        assert 'data-phase="day"' in page and 'data-target="No Lynch" data-count="1"' in page
        player = m21_demo.players["m21p01"]
        client.force_login(player)
        assert client.get(reverse("m21_game", args=[game.slug])).status_code == 200
        assert client.get(reverse("m21_night_page", args=[game.slug])).status_code == 200
        assert client.get(console).status_code in (302, 403)


def test_the_m21_demo_cannot_be_loaded_when_not_allowed(settings):
    settings.MAFIA_ALLOW_DEMO = False
    with pytest.raises(ImproperlyConfigured, match="MAFIA_ALLOW_DEMO is off"):
        load_m21_demo(make_user=demo_account_maker(), rng=random.Random(1), now=NOW)
    assert not Game.objects.filter(slug=M21_DEMO_SLUG).exists()
