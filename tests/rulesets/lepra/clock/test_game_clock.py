"""The phase plan (issue 6 item 1; DESIGN.md "The clock"; RULES.md L-DAY-1..3, L-DAY-5, L-POST-2).

The clock of a small Moscow game starts on Monday 1 March 2027, day 1 at 10:00 MSK (07:00 UTC). Every call passes
``now`` explicitly; ``tests/cities/clock_helpers.py`` registers a test-only ``night_end`` handler.
"""
from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta

import pytest
from django.utils import translation

from cities.models import City, GameDay, GameEvent, GameStatus, ScheduledEvent
from inboxes.audit_policy import AuditScope
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra.clock.services import (
    do_declare_long_day,
    do_set_daily_post_edit_window,
    do_set_day_start,
    do_shorten_day,
    do_start_game_clock,
    voting_window_limits,
)
from rulesets.lepra.day.services import _local, do_schedule_voting
from staff.audit_sentences import audit_sentence
from tests.cities.clock_helpers import DAY1, US, advance, clocked_game, night_handler, pending, ran
from tests.conftest import fresh

pytestmark = pytest.mark.django_db

H = timedelta(hours=1)
D = timedelta(days=1)


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.fixture
def built():
    with night_handler():
        yield clocked_game()


def test_starting_the_clock_lays_out_day_1_only_L_DAY_1(built):
    game = built.game
    assert game.status == GameStatus.SETUP and game.day_number == 0
    assert pending(game) == [("day_start", {"day": 1}, DAY1)]
    day1 = GameDay.objects.get(game=game, number=1)
    assert (day1.starts_at, day1.ends_at, day1.night_ends_at) == (DAY1, utc(2027, 3, 1, 21), utc(2027, 3, 2, 6))
    assert day1.start_fixed and day1.started_at is None
    with pytest.raises(WrongState):
        do_start_game_clock(game, first_day_starts_at=DAY1 + D, acting_user=built.procurator, now=DAY1 - D)


def test_day_start_runs_the_day_and_lays_out_its_night_and_the_next_day_L_DAY_1(built):
    game = built.game
    assert advance(game, DAY1 - US) == 0
    assert advance(game, DAY1) == 1
    game.refresh_from_db()
    assert game.status == GameStatus.RUNNING and game.day_number == 1
    assert GameDay.objects.get(game=game, number=1).started_at == DAY1
    # Per game (due_at, id) order: night start at 00:00 MSK, then the night's resolution, then the draft, then day 2.
    assert pending(game) == [
        ("night_start", {"day": 1}, utc(2027, 3, 1, 21)),
        ("night_end", {"night": 1}, utc(2027, 3, 2, 6)),
        ("daily_post_draft", {"day": 2}, utc(2027, 3, 2, 6)),
        ("day_start", {"day": 2}, utc(2027, 3, 2, 7)),
    ]
    ids = list(ScheduledEvent.objects.filter(game=game, done_at__isnull=True).order_by("due_at", "id")
               .values_list("kind", flat=True))
    assert ids == ["night_start", "night_end", "daily_post_draft", "day_start"]


def test_a_whole_day_and_night_run_in_order_and_day_2_publishes_the_post_L_POST_2(built):
    game = built.game
    advance(game, utc(2027, 3, 2, 7))
    assert ran(game) == [
        ("day_start", {"day": 1}), ("night_start", {"day": 1}), ("night_end", {"night": 1}),
        ("daily_post_draft", {"day": 2}), ("day_start", {"day": 2}),
    ]
    game.refresh_from_db()
    assert game.day_number == 2
    day1, day2 = GameDay.objects.filter(game=game, number__in=[1, 2]).order_by("number")
    assert day1.ended_at == utc(2027, 3, 1, 21)
    assert day2.started_at == utc(2027, 3, 2, 7) and day2.post.published_at == utc(2027, 3, 2, 7)
    # City inboxes rolled over each morning (L-INBOX-1): the current one is day 2's.
    for city in City.objects.filter(game=game):
        current = Inbox.objects.get(game=game, city=city, kind=LepraInboxKind.CITY, rolled_over_at__isnull=True)
        assert current.day_number == 2
    assert [k for k in GameEvent.objects.filter(game=game, kind__startswith="clock.").order_by("id")
            .values_list("kind", flat=True)] == ["clock.started", "clock.day_started", "clock.night_started",
                                                 "clock.day_started"]


def test_a_repeated_day_start_changes_nothing_DESIGN_clock(built):
    game = built.game
    advance(game, DAY1)
    ScheduledEvent.objects.create(game=game, kind="day_start", due_at=DAY1, payload={"day": 1}, created_at=DAY1)
    assert advance(game, DAY1 + H) == 1
    game.refresh_from_db()
    assert game.day_number == 1
    assert GameEvent.objects.filter(game=game, kind="clock.day_started").count() == 1
    with translation.override(game.language):
        refusal = translation.gettext("Day %(day)d has already started.") % {"day": 1}
    assert GameEvent.objects.filter(game=game, kind="scheduler.day_start").order_by("-id").first().payload[
        "detail"] == f"day 1 not started: {refusal}"


# ----------------------------------------------------------------------------------------------------------------
# Changes to the plan: validated, and the pending events move (done ones never)
# ----------------------------------------------------------------------------------------------------------------

def test_declaring_the_current_day_long_moves_its_pending_events_L_DAY_2(built):
    game = built.game
    advance(game, DAY1)
    before = {e.kind: e.pk for e in ScheduledEvent.objects.filter(game=game, done_at__isnull=True)}
    do_declare_long_day(game, 1, 2, acting_user=built.procurator, now=DAY1 + H)
    assert pending(game) == [
        ("night_start", {"day": 1}, utc(2027, 3, 2, 21)),
        ("night_end", {"night": 1}, utc(2027, 3, 3, 6)),
        ("daily_post_draft", {"day": 2}, utc(2027, 3, 3, 6)),
        ("day_start", {"day": 2}, utc(2027, 3, 3, 7)),
    ]
    # The same rows moved (no duplicates, nothing cancelled); the done day_start is untouched.
    assert {e.kind: e.pk for e in ScheduledEvent.objects.filter(game=game, done_at__isnull=True)} == before
    assert not ScheduledEvent.objects.filter(game=game, cancelled_at__isnull=False).exists()
    assert ScheduledEvent.objects.get(game=game, kind="day_start", payload__day=1).due_at == DAY1
    audit = GameEvent.objects.get(game=game, kind="clock.long_day")
    assert audit.actor == built.procurator
    assert (audit.payload["day"], audit.payload["from"], audit.payload["to"], audit.payload["moved"]) == (1, 1, 2, 4)


def test_long_day_voting_may_close_at_the_00_00_ending_its_last_calendar_day_L_DAY_3(built):
    game = built.game
    advance(game, utc(2027, 3, 2, 7))  # day 2
    do_declare_long_day(game, 2, 2, acting_user=built.procurator, now=utc(2027, 3, 2, 8))
    announce_by, ends_by = voting_window_limits(game, 2, utc(2027, 3, 2, 8))
    assert ends_by == utc(2027, 3, 3, 21)  # 00:00 MSK after the second calendar day
    assert announce_by == utc(2027, 3, 3, 2)  # half of 07:00 Mar 2 .. 21:00 Mar 3 (38 hours)
    city = City.objects.get(game=game, number=1)
    session = do_schedule_voting(city, utc(2027, 3, 3, 15), utc(2027, 3, 3, 21), acting_user=built.staff["tribune1"],
                                 now=utc(2027, 3, 2, 9))
    assert session.closes_at == utc(2027, 3, 3, 21)
    city2 = City.objects.get(game=game, number=2)
    with translation.override("en"), pytest.raises(InvalidInput) as late:
        do_schedule_voting(city2, utc(2027, 3, 3, 15), utc(2027, 3, 3, 21) + US,
                           acting_user=built.staff["tribune2"], now=utc(2027, 3, 2, 9))
    assert late.value.rule == "L-DAY-3"
    # Shrinking the day back would leave city 1's voting after its end: refused, nothing changes.
    with translation.override("en"), pytest.raises(InvalidInput) as refused:
        do_declare_long_day(game, 2, 1, acting_user=built.procurator, now=utc(2027, 3, 2, 10))
    assert refused.value.rule == "L-DAY-3"
    assert str(refused.value).startswith("The voting in City 1 closes at 2027-03-04 00:00 MSK, after the end of day 2 "
                                   "(2027-03-03 00:00 MSK)")
    assert GameDay.objects.get(game=game, number=2).calendar_days == 2


def test_voting_times_are_announced_in_the_first_half_of_the_day_L_DAY_3(built):
    game = built.game
    advance(game, utc(2027, 3, 2, 7))  # day 2: 10:00 .. 24:00 MSK, first half until 17:00 MSK (14:00 UTC)
    city = City.objects.get(game=game, number=1)
    with translation.override("en"), pytest.raises(WrongState) as refused:
        do_schedule_voting(city, utc(2027, 3, 2, 17), utc(2027, 3, 2, 20), acting_user=built.staff["tribune1"],
                           now=utc(2027, 3, 2, 14))
    assert refused.value.rule == "L-DAY-3"
    with translation.override("en"):
        expected = (f"Voting times are announced in the first half of the day, before "
                    f"{_local(game, utc(2027, 3, 2, 14))}.")
    assert str(refused.value) == expected
    session = do_schedule_voting(city, utc(2027, 3, 2, 17), utc(2027, 3, 2, 21), acting_user=built.staff["tribune1"],
                                 now=utc(2027, 3, 2, 14) - US)
    assert session.closes_at == utc(2027, 3, 2, 21)


def test_long_day_is_2_or_3_calendar_days_and_not_after_the_first_half_L_DAY_2(built):
    game = built.game
    advance(game, DAY1)
    for bad in (0, 4):
        with translation.override("en"), pytest.raises(InvalidInput) as refused:
            do_declare_long_day(game, 2, bad, acting_user=built.procurator, now=DAY1 + H)
        assert str(refused.value) == "A long day lasts 2 or 3 calendar days." and refused.value.rule == "L-DAY-2"
    with translation.override("en"), pytest.raises(WrongState) as refused:
        do_declare_long_day(game, 1, 2, acting_user=built.procurator, now=utc(2027, 3, 1, 14))
    assert str(refused.value) == "Day 1 is past its first half: its length can no longer change."
    with pytest.raises(NotAllowed):
        do_declare_long_day(game, 2, 2, acting_user=built.staff["tribune1"], now=DAY1 + H)
    # A future day: planned ahead, the current day's events do not move.
    before = pending(game)
    days = do_declare_long_day(game, 3, 3, acting_user=built.procurator, now=DAY1 + H)
    assert pending(game) == before
    day3 = next(d for d in days if d.number == 3)
    assert (day3.starts_at, day3.ends_at) == (utc(2027, 3, 3, 7), utc(2027, 3, 5, 21))
    day4 = GameDay.objects.filter(game=game, number=4).first()
    assert day4 is None or day4.starts_at == utc(2027, 3, 6, 7)


def test_shortened_day_ends_after_its_hours_and_the_next_day_may_start_early_L_DAY_2(built):
    game = built.game
    advance(game, utc(2027, 3, 2, 7))  # day 2 running
    with translation.override("en"), pytest.raises(InvalidInput) as refused:
        do_shorten_day(game, 3, 15, acting_user=built.procurator, now=utc(2027, 3, 2, 8))
    assert str(refused.value) == "A shortened day lasts 1 to 12 hours."
    with translation.override("en"), pytest.raises(WrongState) as refused:
        do_shorten_day(game, 2, 4, acting_user=built.procurator, now=utc(2027, 3, 2, 8))
    assert str(refused.value) == "Day 2 has already started."
    with translation.override("en"), pytest.raises(InvalidInput) as refused:
        do_shorten_day(game, 1, 4, acting_user=built.procurator, now=utc(2027, 3, 2, 8))
    assert refused.value.rule == "L-DAY-5"
    with translation.override("en"), pytest.raises(InvalidInput) as refused:
        do_shorten_day(game, 3, 4, next_day_starts_at=utc(2027, 3, 3, 11, 29), acting_user=built.procurator,
                       now=utc(2027, 3, 2, 8))
    assert refused.value.rule == "L-DAY-1"

    do_shorten_day(game, 3, 4, next_day_starts_at=utc(2027, 3, 3, 12), acting_user=built.procurator,
                   now=utc(2027, 3, 2, 8))
    day3, day4 = GameDay.objects.filter(game=game, number__in=[3, 4]).order_by("number")
    assert (day3.starts_at, day3.ends_at, day3.shortened_hours) == (utc(2027, 3, 3, 7), utc(2027, 3, 3, 11), 4)
    assert day3.night_ends_at == utc(2027, 3, 3, 11, 30)  # half of a one-hour night
    assert day4.starts_at == utc(2027, 3, 3, 12) and day4.start_fixed
    advance(game, utc(2027, 3, 3, 12))
    game.refresh_from_db()
    assert game.day_number == 4
    assert ("night_start", {"day": 3}) in ran(game)


def test_setting_the_day_start_moves_the_next_day_and_its_night_end_L_DAY_1(built):
    game = built.game
    advance(game, DAY1)
    do_set_day_start(game, time(12, 0), acting_user=built.procurator, now=DAY1 + H)
    assert pending(game) == [
        ("night_start", {"day": 1}, utc(2027, 3, 1, 21)),
        ("night_end", {"night": 1}, utc(2027, 3, 2, 8)),
        ("daily_post_draft", {"day": 2}, utc(2027, 3, 2, 8)),
        ("day_start", {"day": 2}, utc(2027, 3, 2, 9)),
    ]
    game.refresh_from_db()
    assert game.day_start == time(12, 0)
    # A start in the past is refused (L-DAY-1); nothing changes.
    with translation.override("en"), pytest.raises(InvalidInput) as refused:
        do_set_day_start(game, time(1, 0), acting_user=built.procurator, now=utc(2027, 3, 1, 23))
    assert refused.value.rule == "L-DAY-1"
    game.refresh_from_db()
    assert game.day_start == time(12, 0)


def test_night_waits_for_a_court_deadline_after_midnight_L_DAY_3(built, monkeypatch):
    from cities import scheduler

    game = built.game
    advance(game, DAY1)
    late = utc(2027, 3, 1, 21, 30)
    monkeypatch.setitem(scheduler.HANDLERS, "court_deadline", lambda event, now: "court decided")
    deadline = ScheduledEvent.objects.create(game=game, kind="court_deadline", due_at=late, payload={"case": 0},
                                             created_at=DAY1 + H)
    advance(game, utc(2027, 3, 1, 22))
    order = [(k, p) for k, p in ran(game)]
    assert order == [("day_start", {"day": 1}), ("night_start", {"day": 1}), ("court_deadline", {"case": 0}),
                     ("night_start", {"day": 1})]
    deadline.refresh_from_db()
    assert deadline.done_at == late
    assert GameDay.objects.get(game=game, number=1).ended_at == late


def test_procurator_starts_the_clock_on_the_staff_page_in_game_time_L_DAY_1():
    from django.test import Client

    from tests.setup_factory import build_game

    built = build_game("numbers", slug="unclocked", cities=2, size=3)
    game = built.game
    client = Client()
    client.force_login(built.procurator)
    page = client.get(f"/staff/games/{game.slug}/clock/")
    assert page.status_code == 200 and f'action="/staff/games/{game.slug}/clock/start/"' in page.content.decode()
    response = client.post(f"/staff/games/{game.slug}/clock/start/", {"first_day_starts_at": "2027-03-01T10:00"})
    assert response.status_code == 302
    assert GameDay.objects.get(game=game, number=1).starts_at == DAY1  # 10:00 in Moscow
    assert pending(game) == [("day_start", {"day": 1}, DAY1)]
    assert f'action="/staff/games/{game.slug}/clock/start/"' not in client.get(
        f"/staff/games/{game.slug}/clock/").content.decode()


def test_plan_change_cancels_obsolete_pending_events_and_never_touches_done_ones_DESIGN_clock(built):
    game = built.game
    advance(game, DAY1)
    done = ScheduledEvent.objects.get(game=game, kind="day_start", payload__day=1)
    stale = ScheduledEvent.objects.create(game=game, kind="day_start", due_at=utc(2027, 3, 9, 7), payload={"day": 9},
                                          created_at=DAY1)
    twin = ScheduledEvent.objects.create(game=game, kind="night_end", due_at=utc(2027, 3, 2, 5), payload={"night": 1},
                                         created_at=DAY1)
    do_set_day_start(game, time(11, 0), acting_user=built.procurator, now=DAY1 + H)
    stale.refresh_from_db()
    twin.refresh_from_db()
    assert stale.cancelled_at == DAY1 + H and twin.cancelled_at == DAY1 + H
    after = ScheduledEvent.objects.get(pk=done.pk)
    assert (after.due_at, after.done_at, after.cancelled_at) == (DAY1, DAY1, None)
    assert pending(game) == [
        ("night_start", {"day": 1}, utc(2027, 3, 1, 21)),
        ("night_end", {"night": 1}, utc(2027, 3, 2, 7)),
        ("daily_post_draft", {"day": 2}, utc(2027, 3, 2, 7)),
        ("day_start", {"day": 2}, utc(2027, 3, 2, 8)),
    ]
    assert GameEvent.objects.get(game=game, kind="clock.day_start_set").payload["cancelled"] == 2


def test_day_1_start_opens_the_standing_inboxes_so_residents_can_post_L_DAY_1_L_INBOX_1_L_INBOX_5(built):
    # Found by the browser suite: a game set up on the pages and started by its clock had no city or personal
    # inboxes (nothing but the demo and the factory opened them), so nobody could propose a judge on day 1.
    from cities.models import Resident
    game = built.game
    from inboxes.models import Message
    standing = Inbox.objects.filter(game=game, kind__in=(LepraInboxKind.CITY, LepraInboxKind.PERSONAL))
    Message.objects.filter(inbox__in=standing).delete()
    standing.delete()
    assert advance(game, DAY1) == 1
    cities = set(City.objects.filter(game=game).values_list("pk", flat=True))
    residents = set(Resident.objects.filter(game=game).values_list("pk", flat=True))
    assert set(Inbox.objects.filter(game=game, kind=LepraInboxKind.CITY, killed_at__isnull=True)
               .values_list("city_id", flat=True)) == cities
    assert sorted(Inbox.objects.filter(game=game, kind=LepraInboxKind.PERSONAL).values_list("resident_id", flat=True)) \
        == sorted(residents)


def test_the_procurators_plan_changes_read_as_sentences_to_every_staff_member_L_DAY_1_L_DAY_2_L_STAFF_6(built):
    game = built.game
    advance(game, DAY1)
    old_start = game.day_start.isoformat()
    do_set_day_start(game, time(12, 0), acting_user=built.procurator, now=DAY1 + H)
    do_declare_long_day(game, 3, 2, acting_user=built.procurator, now=DAY1 + H)
    do_shorten_day(game, 2, 4, acting_user=built.procurator, now=DAY1 + H)
    tribune = AuditScope(fresh(built.staff["tribune1"]), game)  # a public change: not only the Procurator's
    name = built.procurator.public_name
    texts = {kind: re.sub(r"<[^>]+>", "", str(audit_sentence(tribune, GameEvent.objects.get(game=game, kind=kind))))
             for kind in ("clock.day_start_set", "clock.long_day", "clock.day_shortened")}
    assert texts["clock.day_start_set"].startswith(f"{name} изменил начало дня с {old_start} на 12:00:00;")
    assert texts["clock.long_day"].startswith(f"{name} изменил длину дня 3: календарных дней — 2;")
    assert texts["clock.day_shortened"] == (f"{name} изменил сокращение дня 2: часов — 4; назначенное начало "
                                            "следующего дня: —.")


def test_a_changed_edit_window_reads_as_its_minutes_in_the_audit_log_L_POST_2(built):
    game = built.game
    advance(game, DAY1)
    before = game.daily_post_edit_minutes
    do_set_daily_post_edit_window(game, 45, acting_user=built.procurator, now=DAY1 + H)
    event = GameEvent.objects.get(game=game, kind="daily_post.edit_window_set")
    assert event.payload == {"old_minutes": before, "minutes": 45}
    tribune = AuditScope(fresh(built.staff["tribune1"]), game)
    text = re.sub(r"<[^>]+>", "", str(audit_sentence(tribune, event)))
    assert text == f"{built.procurator.public_name} изменил время на правку поста дня с {before} на 45 мин."
    assert tribune.shown_details(event) == [("minutes", "45"), ("old_minutes", str(before))]


def test_the_stored_edit_window_rows_take_the_minutes_keys_and_back_L_POST_2(built):
    import importlib

    from django.apps import apps as django_apps

    migration = importlib.import_module("rulesets.lepra.migrations.0006_edit_window_payload_minutes")
    game = built.game
    advance(game, DAY1)
    do_set_daily_post_edit_window(game, 20, acting_user=built.procurator, now=DAY1 + H)
    event = GameEvent.objects.get(game=game, kind="daily_post.edit_window_set")
    current = dict(event.payload)
    GameEvent.objects.filter(pk=event.pk).update(payload={"from": current["old_minutes"], "to": 20})
    others = list(GameEvent.objects.exclude(pk=event.pk).order_by("pk").values_list("pk", "kind", "payload"))
    migration.forwards(django_apps, None)
    assert GameEvent.objects.get(pk=event.pk).payload == current
    migration.backwards(django_apps, None)
    assert GameEvent.objects.get(pk=event.pk).payload == {"from": current["old_minutes"], "to": 20}
    assert list(GameEvent.objects.exclude(pk=event.pk).order_by("pk").values_list("pk", "kind", "payload")) == others
