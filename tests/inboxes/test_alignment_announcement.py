"""When a dead resident's alignment becomes public (RULES.md L-DEATH-2, L-STAFF-6 last row): at the publication of
the daily post that announces the death, the same for every cause of death (killed, penalty, suicide, executed by
the court or on the Procurator's decision); not at the death, not before the post."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse
from django.utils import translation

from cities.models import City, GameDay, LifeStatus, Resident
from inboxes.knowledge import visible_alignment
from inboxes.membership_services import do_kill_resident
from inboxes.models import DeathCause
from rulesets.lepra import seats
from rulesets.lepra.clock.services import do_draft_daily_post, do_publish_daily_post
from rulesets.lepra.court.services import do_close_court_case, do_put_before_court
from rulesets.lepra.day.services import do_confirm_suicide, do_decide_execution, do_declare_suicide
from tests.rulesets.lepra.day.day_helpers import (
    CLOSES,
    MORNING,
    US,
    city1_day,
    nominate_and_open,
    tied_session,
)

NEXT_DAY = MORNING + timedelta(days=1)


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def _killed(demo, day):
    victim = day.plain[3]
    do_kill_resident(victim, DeathCause.KILLED, acting_user=None, now=MORNING)
    return victim


def _penalty(demo, day):
    victim = day.plain[3]
    do_kill_resident(victim, DeathCause.PENALTY, acting_user=demo.procurator, now=MORNING)
    return victim


def _suicide(demo, day):
    victim = day.plain[3]

    def declare(session):
        declaration = do_declare_suicide(demo.game, acting_user=victim.user, now=MORNING)
        do_confirm_suicide(declaration, acting_user=demo.tribune1, now=MORNING)

    nominate_and_open(demo, day, [day.plain[0]], before_open=declare)
    return victim


def _court(demo, day):
    _day, a, b, session = tied_session(demo, day)
    case = do_put_before_court(session, CLOSES + timedelta(minutes=50), acting_user=demo.arbiter, now=CLOSES + US)
    do_close_court_case(case, acting_user=demo.arbiter, now=CLOSES + 2 * US)  # undecided: the leader, a
    return a


def _procurator(demo, day):
    victim = day.plain[3]
    do_decide_execution(day.city, victim, acting_user=demo.procurator, now=MORNING)
    return victim


@pytest.mark.parametrize("cause", [_killed, _penalty, _suicide, _court, _procurator],
                         ids=["killed", "penalty", "suicide", "executed_by_court", "executed_by_procurator"])
def test_alignment_of_the_dead_is_public_from_the_daily_post_for_every_cause_L_DEATH_2(demo, client, cause):
    day = city1_day(demo)
    victim = cause(demo, day)
    victim.refresh_from_db()
    assert victim.status == LifeStatus.DEAD
    stranger = Resident.objects.filter(seats.rank_q("is_commissar", False), city=City.objects.get(game=demo.game, number=2), status=LifeStatus.ALIVE).exclude(alignment="mafia").first()
    page = reverse("resident_detail", args=[demo.game.slug, victim.public_id])
    for viewer in (AnonymousUser(), demo.outsider, stranger.user):
        assert visible_alignment(viewer, victim) is None
    assert 'data-fact="alignment:' not in client.get(page).content.decode()
    GameDay.objects.get_or_create(game=demo.game, number=3, defaults={  # the plan of day 3, as the clock makes it
        "starts_at": NEXT_DAY, "ends_at": NEXT_DAY + timedelta(hours=14), "night_ends_at": NEXT_DAY + timedelta(days=1)})
    do_draft_daily_post(demo.game, 3, acting_user=None, now=NEXT_DAY - timedelta(hours=1))
    victim.refresh_from_db()
    assert visible_alignment(AnonymousUser(), victim) is None  # drafted, not yet published
    do_publish_daily_post(demo.game, 3, acting_user=None, now=NEXT_DAY)
    victim.refresh_from_db()
    for viewer in (AnonymousUser(), demo.outsider, stranger.user):
        assert visible_alignment(viewer, victim) == victim.alignment
    assert f'data-fact="alignment:{victim.alignment}"' in client.get(page).content.decode()
