"""Shared setup for the Lepra day tests (issue 4): the demo game on the morning of day 2, city 1."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import translation

from cities.models import City, GameStatus, LifeStatus, Resident
from cities.services import do_add_city, do_appoint_staff, do_create_game, do_seat_resident, do_set_game_status
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from rulesets.lepra import seats
from rulesets.lepra.day.services import (
    do_close_voting,
    do_nominate,
    do_open_voting,
    do_schedule_voting,
)
from rulesets.lepra.staff_kinds import StaffKind
from tests.conftest import DEMO_NOW

MORNING = DEMO_NOW  # 10:00 in Moscow, day 2
OPENS = datetime(2026, 11, 20, 15, 0, tzinfo=UTC)  # 18:00 in Moscow
CLOSES = datetime(2026, 11, 20, 20, 0, tzinfo=UTC)  # 23:00 in Moscow
US = timedelta(microseconds=1)


@dataclass
class Day:
    city: City
    plain: list[Resident]  # living residents of city 1 who are not the judge, by name

    def inbox_of(self, nominee: Resident) -> Inbox:
        return Inbox.objects.get(kind=LepraInboxKind.VOTING, resident=nominee, city=self.city)


def day_action(demo, name: str, number: int = 1) -> str:
    """The URL of the city day page's action ``name`` (each button posts to its own) for city ``number``."""
    return reverse(name, args=[demo.game.slug, number])


def city1_day(demo) -> Day:
    city = City.objects.get(game=demo.game, number=1)
    plain = list(Resident.objects.filter(seats.rank_q("is_judge", False), city=city, status=LifeStatus.ALIVE).select_related("user")
                 .order_by("name"))
    return Day(city=city, plain=plain)


def nominate_and_open(demo, day: Day, nominees: list[Resident], *, proxies=(), before_open=None):
    """Each nominee nominated by a different resident at 10:00, voting scheduled 18:00-23:00 Moscow and opened
    by the site at 18:00. ``before_open`` runs after the nominations, before the opening."""
    nominators = [r for r in day.plain if r not in nominees]
    for nominee, nominator in zip(nominees, nominators, strict=False):
        do_nominate(nominee, acting_user=nominator.user, now=MORNING)
    session = do_schedule_voting(day.city, OPENS, CLOSES, acting_user=demo.tribune1, now=MORNING)
    if before_open is not None:
        before_open(session)
    do_open_voting(session, acting_user=None, now=OPENS)
    session.refresh_from_db()
    return session


def tied_session(demo, day: Day | None = None):
    """City 1's voting of two nominees (the first two plain residents), one «казнить» each, closed at ``CLOSES``:
    a tie for the Supreme Court (L-VOTE-5, L-COURT). Returns ``(day, a, b, session)``."""
    day = day or city1_day(demo)
    a, b = day.plain[0], day.plain[1]
    session = nominate_and_open(demo, day, [a, b])
    do_post_message(day.inbox_of(a), "казнить", acting_user=day.plain[5].user, now=OPENS + US)
    do_post_message(day.inbox_of(b), "казнить", acting_user=day.plain[6].user, now=OPENS + 2 * US)
    do_close_voting(session, acting_user=None, now=CLOSES)
    session.refresh_from_db()
    return day, a, b, session


def ru(msgid: str, **params) -> str:
    """``msgid`` as a Lepra page or a stored post shows it: translated into the game's language (Russian)."""
    from django.utils import translation

    with translation.override("ru"):
        text = translation.gettext(msgid)
    return text % params if params else text


def _big_city_voting(residents: int):
    User = get_user_model()
    procurator = User.objects.create_user("conc-proc", "conc-proc@example.com", "x-secret-123")
    game = do_create_game(title="Concurrency", slug="concurrency", acting_user=procurator, now=MORNING)
    city = do_add_city(game, name="Толпа", acting_user=procurator, now=MORNING)
    tribune = User.objects.create_user("conc-trib", "conc-trib@example.com", "x-secret-123")
    do_appoint_staff(game, tribune, StaffKind.TRIBUNE, acting_user=procurator, city=city, now=MORNING)
    seats = []
    for i in range(residents + 1):
        user = User.objects.create_user(f"conc{i:02d}", f"conc{i:02d}@example.com", "x-secret-123",
                                        display_name=f"Conc{i:02d}")
        seats.append(do_seat_resident(city, user, acting_user=procurator, now=MORNING))
    do_set_game_status(game, GameStatus.RUNNING, day_number=2, acting_user=procurator, now=MORNING)
    nominee, voters = seats[0], seats[1:]
    do_nominate(nominee, acting_user=voters[0].user, now=MORNING)
    session = do_schedule_voting(city, OPENS, CLOSES, acting_user=tribune, now=MORNING)
    do_open_voting(session, acting_user=None, now=OPENS)
    return Inbox.objects.get(kind=LepraInboxKind.VOTING, resident=nominee), voters


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def _refusal(exc_type, fn, *args, **kwargs) -> str:
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    return str(info.value)


def _before_the_court(demo, client):
    """Day 2 of city 1: one nominee, one «казнить», voting closed; the Arbiter logged in. Returns (url, nominee)."""
    from inboxes.posting import do_post_message
    from rulesets.lepra.day.services import do_close_voting
    day = city1_day(demo)
    a = day.plain[0]
    session = nominate_and_open(demo, day, [a])
    do_post_message(day.inbox_of(a), "казнить", acting_user=day.plain[5].user, now=OPENS + US)
    do_close_voting(session, acting_user=None, now=CLOSES)
    client.force_login(demo.arbiter)
    return reverse("city_day", args=[demo.game.slug, 1]), a
