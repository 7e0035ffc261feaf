"""The game clock (DESIGN.md "The clock"; RULES.md L-POST, L-STAFF-1): ``cities.scheduler`` and the services and
command around it.

Every test passes ``now=`` explicitly or travels with ``time_machine.travel(..., tick=False)``. The times are in
2021, long before anything the session's demo game (tests/conftest.py) schedules, so no foreign event is ever due
here and the dispatch counts are ours alone (the ``quiet_clock`` fixture checks it).
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command
from django.utils import translation

from cities import scheduler
from cities.models import GameEvent, GameStatus, PostKind, PublicPost, ScheduledEvent
from cities.scheduler import dispatch_due_events, try_run_one_due_event
from cities.services import (
    do_create_game,
    do_create_public_post,
    do_publish_post,
    do_schedule_public_post,
    do_set_game_status,
)
from kernel.errors import InvalidInput, NotAllowed, WrongState
from tests.cities.clock_helpers import make_user

pytestmark = pytest.mark.django_db

T0 = datetime(2021, 6, 1, 9, 0, tzinfo=UTC)  # when the Procurator schedules
DUE = T0 + timedelta(hours=3)  # when the post is due
US = timedelta(microseconds=1)


# ----------------------------------------------------------------------------------------------------------------
# Builders
# ----------------------------------------------------------------------------------------------------------------


def make_game(slug: str):
    """A fresh Lepra game in recruitment and its Procurator (the acting user of do_create_game, L-STAFF-1)."""
    procurator = make_user(f"{slug}-procurator")
    game = do_create_game(title=f"Game {slug}", slug=slug, acting_user=procurator, now=T0 - timedelta(days=1))
    return game, procurator


def schedule(game, procurator, *, title="Reminder", publish_at=DUE, now=T0) -> tuple[PublicPost, ScheduledEvent]:
    post = do_schedule_public_post(game, title=title, body=f"Body of {title}.", publish_at=publish_at,
                                   acting_user=procurator, now=now)
    return post, ScheduledEvent.objects.get(game=game, kind="publish_post", payload__post=post.pk)


def add_event(game, kind: str, *, due_at: datetime, payload: dict | None = None) -> ScheduledEvent:
    """A ScheduledEvent made directly (no service makes arbitrary kinds; the clock must survive them)."""
    return ScheduledEvent.objects.create(game=game, kind=kind, due_at=due_at, payload=payload or {}, created_at=T0)


def kinds(game) -> list[str]:
    return list(GameEvent.objects.filter(game=game).order_by("id").values_list("kind", flat=True))


@pytest.fixture(autouse=True)
def quiet_clock(db):
    """Nothing outside these tests is due in 2021 (else the dispatch counts below would include it)."""
    horizon = DUE + timedelta(days=1)
    foreign = ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True, due_at__lte=horizon)
    assert not foreign.exists(), f"pending events due before {horizon} already exist: {list(foreign)}"


@pytest.fixture
def game():
    return make_game("clock")


# ----------------------------------------------------------------------------------------------------------------
# Publication at due time, once (L-POST-2, DESIGN.md "The clock")
# ----------------------------------------------------------------------------------------------------------------

def test_scheduled_post_is_published_once_at_due_time_L_POST_2(game):
    game, procurator = game
    post, event = schedule(game, procurator)
    assert post.published_at is None and post.publish_at == DUE
    assert event.due_at == DUE and event.done_at is None and event.created_by == procurator

    # One microsecond early: nothing runs.
    assert dispatch_due_events(now=DUE - US) == 0
    post.refresh_from_db()
    event.refresh_from_db()
    assert post.published_at is None
    assert event.done_at is None and event.attempts == 0
    assert "scheduler.publish_post" not in kinds(game)

    # At due time exactly: published, once, stamped with the tick's time.
    assert dispatch_due_events(now=DUE) == 1
    post.refresh_from_db()
    event.refresh_from_db()
    assert post.published_at == DUE
    assert event.done_at == DUE and event.attempts == 1 and event.last_error == "" and event.retry_at is None
    audit = GameEvent.objects.get(game=game, kind="scheduler.publish_post")
    assert audit.actor is None and audit.at == DUE
    assert audit.payload == {"event": event.pk, "detail": f"published post {post.pk}: Reminder"}
    assert GameEvent.objects.filter(game=game, kind="scheduler.post_published").count() == 1

    # A duplicate tick, and one an hour later, run nothing and change nothing.
    assert dispatch_due_events(now=DUE) == 0
    assert dispatch_due_events(now=DUE + timedelta(hours=1)) == 0
    assert try_run_one_due_event(now=DUE + timedelta(hours=1)) is None
    post.refresh_from_db()
    assert post.published_at == DUE
    assert GameEvent.objects.filter(game=game, kind="scheduler.publish_post").count() == 1
    assert GameEvent.objects.filter(game=game, kind="scheduler.post_published").count() == 1


def test_tick_without_explicit_now_uses_the_travelled_clock_DESIGN_clock(game):
    game, procurator = game
    post, event = schedule(game, procurator)
    with time_machine.travel(DUE - US, tick=False):
        assert dispatch_due_events() == 0
    with time_machine.travel(DUE, tick=False):
        assert dispatch_due_events() == 1
        assert dispatch_due_events() == 0
    post.refresh_from_db()
    event.refresh_from_db()
    assert post.published_at == DUE and event.done_at == DUE


def test_hours_of_downtime_publish_late_but_once_DESIGN_clock(game):
    game, procurator = game
    post, event = schedule(game, procurator)
    late = DUE + timedelta(hours=7)
    assert dispatch_due_events(now=late) == 1
    assert dispatch_due_events(now=late) == 0
    post.refresh_from_db()
    assert post.published_at == late
    assert GameEvent.objects.filter(game=game, kind="scheduler.publish_post").count() == 1


def test_post_published_by_hand_meanwhile_is_not_published_again_L_POST_2(game):
    game, procurator = game
    post, event = schedule(game, procurator)
    by_hand = DUE - timedelta(hours=1)
    do_publish_post(post, acting_user=procurator, now=by_hand)

    assert dispatch_due_events(now=DUE) == 1
    post.refresh_from_db()
    event.refresh_from_db()
    assert post.published_at == by_hand
    assert event.done_at == DUE
    audit = GameEvent.objects.get(game=game, kind="scheduler.publish_post")
    assert audit.payload["detail"] == f"post {post.pk} was already published"
    assert "scheduler.post_published" not in kinds(game)


# ----------------------------------------------------------------------------------------------------------------
# Per-game order and failures (DESIGN.md "The clock": retried and reported, never half-applied)
# ----------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("kind", "payload", "error"),
    [
        ("no_such_kind", {}, "LookupError: no handler for scheduled event kind 'no_such_kind'"),
        ("publish_post", {"post": 0}, "DoesNotExist: PublicPost matching query does not exist."),
    ],
    ids=["unknown-kind", "missing-post"],
)
def test_failed_event_blocks_later_events_of_its_game_only_DESIGN_clock(game, kind, payload, error):
    game_a, procurator_a = game
    game_b, procurator_b = make_game("other")
    broken = add_event(game_a, kind, due_at=DUE - timedelta(minutes=5), payload=payload)
    post_a, event_a = schedule(game_a, procurator_a, title="After the broken one")
    post_b, event_b = schedule(game_b, procurator_b, title="Other game")
    now = DUE + timedelta(seconds=1)

    assert dispatch_due_events(now=now) == 1  # game B's post only

    broken.refresh_from_db()
    assert broken.done_at is None
    assert broken.attempts == 1
    assert broken.last_error == error
    assert broken.retry_at == now + timedelta(seconds=30)
    failed = GameEvent.objects.get(game=game_a, kind="scheduler.event_failed")
    assert failed.actor is None and failed.at == now
    assert failed.payload == {"event": broken.pk, "kind": kind, "attempts": 1, "error": error}
    # Nothing of the broken handler applied, and the later event of its game waits.
    assert not [k for k in kinds(game_a) if k.startswith("scheduler.") and k != "scheduler.event_failed"]
    post_a.refresh_from_db()
    event_a.refresh_from_db()
    assert post_a.published_at is None and event_a.done_at is None and event_a.attempts == 0
    # The other game is not held up.
    post_b.refresh_from_db()
    event_b.refresh_from_db()
    assert post_b.published_at == now and event_b.done_at == now

    # Before retry_at nothing is retried; even after its own due time, game A's post keeps waiting.
    assert dispatch_due_events(now=broken.retry_at - US) == 0
    broken.refresh_from_db()
    assert broken.attempts == 1
    assert try_run_one_due_event(now=broken.retry_at - US) is None


def test_failed_event_is_retried_after_retry_at_with_back_off_then_unblocks_its_game_DESIGN_clock(game, monkeypatch):
    game, procurator = game
    broken = add_event(game, "flaky", due_at=DUE - timedelta(minutes=5))
    post, event = schedule(game, procurator)
    first = DUE

    assert dispatch_due_events(now=first) == 0
    broken.refresh_from_db()
    assert (broken.attempts, broken.retry_at) == (1, first + timedelta(seconds=30))

    # Retried at retry_at (still no handler): fails again, back-off doubles.
    second = broken.retry_at
    result = try_run_one_due_event(now=second)
    assert result is not None and not result.ok and result.event_id == broken.pk
    broken.refresh_from_db()
    assert (broken.attempts, broken.retry_at) == (2, second + timedelta(seconds=60))
    assert GameEvent.objects.filter(game=game, kind="scheduler.event_failed").count() == 2
    post.refresh_from_db()
    assert post.published_at is None

    # The handler is fixed (deployed): the next retry runs it, then the waiting post, in order.
    monkeypatch.setitem(scheduler.HANDLERS, "flaky", lambda ev, now: "fixed")
    third = broken.retry_at
    assert dispatch_due_events(now=third) == 2
    broken.refresh_from_db()
    post.refresh_from_db()
    event.refresh_from_db()
    assert broken.done_at == third and broken.attempts == 3 and broken.last_error == "" and broken.retry_at is None
    assert post.published_at == third and event.done_at == third
    ran = list(GameEvent.objects.filter(game=game, kind__in=["scheduler.flaky", "scheduler.publish_post"])
               .order_by("id").values_list("payload__event", flat=True))
    assert ran == [broken.pk, event.pk]


def test_events_of_one_game_run_in_due_order_then_id_order_DESIGN_clock(game):
    game, procurator = game
    late_post, late = schedule(game, procurator, title="Second", publish_at=DUE + timedelta(minutes=1))
    early_post, early = schedule(game, procurator, title="First", publish_at=DUE)
    tie_post, tie = schedule(game, procurator, title="Third", publish_at=DUE + timedelta(minutes=1))

    assert dispatch_due_events(now=DUE + timedelta(minutes=2)) == 3
    ran = list(GameEvent.objects.filter(game=game, kind="scheduler.publish_post")
               .order_by("id").values_list("payload__event", flat=True))
    assert ran == [early.pk, late.pk, tie.pk]


def test_failing_handler_is_never_half_applied_DESIGN_clock(game, monkeypatch):
    game, procurator = game

    def create_then_fail(event, now):
        do_create_public_post(event.game, kind=PostKind.ANNOUNCEMENT, title="Half-made", body="Should vanish.",
                              acting_user=None, now=now)
        assert PublicPost.objects.filter(game=event.game, title="Half-made").exists()  # it did get that far
        raise RuntimeError("boom after the write")

    monkeypatch.setitem(scheduler.HANDLERS, "create_then_fail", create_then_fail)
    event = add_event(game, "create_then_fail", due_at=DUE)
    before = kinds(game)

    result = try_run_one_due_event(now=DUE)

    assert result is not None and not result.ok and result.event_id == event.pk
    assert result.detail == "RuntimeError: boom after the write"
    assert not PublicPost.objects.filter(game=game, title="Half-made").exists()
    assert kinds(game) == [*before, "scheduler.event_failed"]  # no post.created, no scheduler.create_then_fail
    event.refresh_from_db()
    assert event.done_at is None and event.attempts == 1 and event.last_error == "RuntimeError: boom after the write"
    assert event.retry_at == DUE + timedelta(seconds=30)


def test_an_event_cancelled_by_a_replanning_after_its_claim_is_never_run_DESIGN_clock(game, monkeypatch):
    """A replanning cancels the event between the dispatcher's claim (committed) and its run: the handler is
    never called, the event stays cancelled and not done, and no ``scheduler.<kind>`` row is written."""
    game, _procurator = game
    calls = []
    monkeypatch.setitem(scheduler.HANDLERS, "replanned", lambda ev, now: calls.append(ev.pk) or "ran")
    event = add_event(game, "replanned", due_at=DUE)
    claim = scheduler._claim_one_due_event

    def claim_then_replan(given_now):
        claimed = claim(given_now)
        ScheduledEvent.objects.filter(pk=event.pk).update(cancelled_at=DUE)  # another service, committed
        return claimed

    monkeypatch.setattr(scheduler, "_claim_one_due_event", claim_then_replan)
    before = kinds(game)

    result = try_run_one_due_event(now=DUE)

    assert result is not None and not result.ok and result.event_id == event.pk
    assert calls == [] and kinds(game) == before
    event.refresh_from_db()
    assert event.cancelled_at == DUE and event.done_at is None
    monkeypatch.setattr(scheduler, "_claim_one_due_event", claim)
    assert try_run_one_due_event(now=DUE + timedelta(days=1)) is None and calls == []


def test_a_handler_that_cancels_its_games_pending_events_still_completes_DESIGN_clock(game, monkeypatch):
    """A handler that ends its game cancels the game's pending events, its own among them (M-WIN-1): the event
    is done (not cancelled), its effects stay, the later event stays cancelled and never runs."""
    game, _procurator = game

    def end_the_game(ev, now):
        do_create_public_post(ev.game, kind=PostKind.ANNOUNCEMENT, title="Game over", body="The end.",
                              acting_user=None, now=now)
        ScheduledEvent.objects.filter(game=ev.game, done_at__isnull=True, cancelled_at__isnull=True).update(
            cancelled_at=now)
        return "ended"

    later_calls = []
    monkeypatch.setitem(scheduler.HANDLERS, "end_the_game", end_the_game)
    monkeypatch.setitem(scheduler.HANDLERS, "after_the_end", lambda ev, now: later_calls.append(ev.pk) or "ran")
    event = add_event(game, "end_the_game", due_at=DUE)
    later = add_event(game, "after_the_end", due_at=DUE + timedelta(hours=1))

    result = try_run_one_due_event(now=DUE)

    assert result is not None and result.ok and result.detail == "ended"
    assert PublicPost.objects.filter(game=game, title="Game over").count() == 1
    event.refresh_from_db()
    later.refresh_from_db()
    assert event.done_at == DUE and event.cancelled_at is None and event.started_at is None
    assert later.cancelled_at == DUE and later.done_at is None
    assert kinds(game)[-1] == "scheduler.end_the_game"
    assert dispatch_due_events(now=DUE + timedelta(hours=2)) == 0 and later_calls == []


def test_handler_refused_by_a_service_is_recorded_and_rolled_back_DESIGN_clock(game, monkeypatch):
    game, procurator = game
    post, _event = schedule(game, procurator)

    def publish_twice(event, now):
        target = PublicPost.objects.get(pk=post.pk)
        do_publish_post(target, acting_user=None, now=now)
        do_publish_post(target, acting_user=None, now=now)  # WrongState: the first publication must roll back too
        return "unreachable"

    monkeypatch.setitem(scheduler.HANDLERS, "publish_twice", publish_twice)
    twice = add_event(game, "publish_twice", due_at=DUE - timedelta(minutes=1))

    with translation.override("en"):  # an English request before the tick: the handler still speaks the game's
        assert dispatch_due_events(now=DUE) == 0
    twice.refresh_from_db()
    post.refresh_from_db()
    with translation.override(game.language):
        refusal = translation.gettext("This post is already published.")
    assert game.language == "ru" and refusal != "This post is already published."
    assert twice.last_error == f"WrongState: {refusal}"
    assert post.published_at is None
    assert "scheduler.post_published" not in kinds(game)


# ----------------------------------------------------------------------------------------------------------------
# Refusals of do_schedule_public_post (L-STAFF-1, L-POST)
# ----------------------------------------------------------------------------------------------------------------

def _nothing_scheduled(game):
    assert not PublicPost.objects.filter(game=game).exists()
    assert not ScheduledEvent.objects.filter(game=game).exists()
    assert kinds(game) == ["game.created"]


@pytest.mark.parametrize("who", ["outsider", "procurator-of-another-game"])
def test_only_the_procurator_may_schedule_a_post_L_STAFF_1(game, who):
    game, _procurator = game
    if who == "outsider":
        user = make_user("outsider")
    else:
        _other, user = make_game("elsewhere")  # the Procurator of another game is nobody here
    with translation.override("en"), pytest.raises(NotAllowed) as refused:
        do_schedule_public_post(game, title="Mine", body="Text.", publish_at=DUE, acting_user=user, now=T0)
    assert str(refused.value) == "Only the Procurator of this game may do this."
    assert refused.value.rule == "L-STAFF-1"
    _nothing_scheduled(game)


@pytest.mark.parametrize("publish_at", [T0, T0 - US, T0 - timedelta(days=1)], ids=["equal", "1us-before", "day-before"])
def test_publication_time_must_be_in_the_future_L_POST_2(game, publish_at):
    game, procurator = game
    with translation.override("en"), pytest.raises(InvalidInput) as refused:
        do_schedule_public_post(game, title="Late", body="Text.", publish_at=publish_at, acting_user=procurator,
                                now=T0)
    assert str(refused.value) == "The publication time must be in the future."
    _nothing_scheduled(game)


def test_publication_time_must_be_aware_DESIGN_clock(game):
    game, procurator = game
    with translation.override("en"), pytest.raises(InvalidInput) as refused:
        do_schedule_public_post(game, title="Naive", body="Text.", publish_at=DUE.replace(tzinfo=None),
                                acting_user=procurator, now=T0)
    assert str(refused.value) == "The publication time must include its time zone."
    _nothing_scheduled(game)


@pytest.mark.parametrize(("title", "body", "message"), [
    ("", "Text.", "The title is empty."),
    ("   \n", "Text.", "The title is empty."),
    ("Title", "  ", "The text is empty."),
    ("x" * 201, "Text.", "The title is too long: 201 characters, at most 200."),
])
def test_scheduled_post_needs_a_title_and_a_text_L_POST_2(game, title, body, message):
    game, procurator = game
    with translation.override("en"), pytest.raises(InvalidInput) as refused:
        do_schedule_public_post(game, title=title, body=body, publish_at=DUE, acting_user=procurator, now=T0)
    assert str(refused.value) == message
    _nothing_scheduled(game)


def test_refusal_messages_are_translated_for_russian_games_L_POST_2(game):
    game, procurator = game
    with translation.override("ru"), pytest.raises(InvalidInput) as refused:
        do_schedule_public_post(game, title="Поздно", body="Текст.", publish_at=T0, acting_user=procurator, now=T0)
    assert str(refused.value) == "Время публикации должно быть в будущем."


def test_no_post_is_scheduled_in_a_finished_game_L_POST_2(game):
    game, procurator = game
    game = do_set_game_status(game, GameStatus.FINISHED, acting_user=procurator, now=T0 - timedelta(hours=1))
    with translation.override("en"), pytest.raises(WrongState) as refused:
        do_schedule_public_post(game, title="After", body="Text.", publish_at=DUE, acting_user=procurator, now=T0)
    assert str(refused.value) == "The game is over."
    assert not PublicPost.objects.filter(game=game).exists()
    assert not ScheduledEvent.objects.filter(game=game).exists()


# ----------------------------------------------------------------------------------------------------------------
# manage.py run_due_events [--dry-run] (DESIGN.md "The clock")
# ----------------------------------------------------------------------------------------------------------------

def test_run_due_events_dry_run_prints_and_changes_nothing_DESIGN_clock(game):
    game, procurator = game
    post, event = schedule(game, procurator, title="Day 2 begins")
    before = kinds(game)

    with time_machine.travel(DUE - US, tick=False):
        out = StringIO()
        call_command("run_due_events", "--dry-run", stdout=out)
        assert out.getvalue() == "Nothing is due.\n"

    with time_machine.travel(DUE + timedelta(seconds=5), tick=False):
        out = StringIO()
        call_command("run_due_events", "--dry-run", stdout=out)
        assert out.getvalue() == (
            f"[dry run] event {event.pk} publish_post (game {game.pk}): would run: "
            f"published post {post.pk}: Day 2 begins\n"
        )
        post.refresh_from_db()
        event.refresh_from_db()
        assert post.published_at is None
        assert event.done_at is None and event.attempts == 0 and event.retry_at is None
        assert kinds(game) == before

        out = StringIO()
        call_command("run_due_events", stdout=out)
        assert out.getvalue() == "Ran 1 due event(s).\n"
        post.refresh_from_db()
        event.refresh_from_db()
        assert post.published_at == DUE + timedelta(seconds=5)
        assert event.done_at == DUE + timedelta(seconds=5)

        out = StringIO()
        call_command("run_due_events", stdout=out)
        assert out.getvalue() == "Ran 0 due event(s).\n"


def test_run_due_events_dry_run_reports_a_failure_without_recording_it_DESIGN_clock(game):
    game, procurator = game
    broken = add_event(game, "no_such_kind", due_at=DUE - timedelta(minutes=1))
    post, event = schedule(game, procurator)
    before = kinds(game)

    with time_machine.travel(DUE, tick=False):
        out = StringIO()
        call_command("run_due_events", "--dry-run", stdout=out)
    # The broken event fails, and the post behind it in the same game is not even tried.
    assert out.getvalue() == (
        f"[dry run] event {broken.pk} no_such_kind (game {game.pk}): would FAIL: "
        "LookupError: no handler for scheduled event kind 'no_such_kind'\n"
    )
    broken.refresh_from_db()
    assert broken.attempts == 0 and broken.last_error == "" and broken.retry_at is None
    post.refresh_from_db()
    assert post.published_at is None
    assert kinds(game) == before


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_claimed_event_held_for_an_instant_by_another_dispatcher_is_waited_for_and_run_DESIGN_clock(game, monkeypatch):
    """Another dispatcher's claim scan may lock a just-claimed row for an instant (it then finds it claimed and
    leaves it): the claimant waits for it and runs the event once, instead of taking it for a run elsewhere and
    leaving it to its crash back-off. (SQLite has no row locks: there the event simply runs.)"""
    import threading

    from django.db import connection, transaction

    game, _procurator = game
    calls = []
    monkeypatch.setitem(scheduler.HANDLERS, "held", lambda ev, now: calls.append(ev.pk) or "ran")
    event = add_event(game, "held", due_at=DUE)
    claim = scheduler._claim_one_due_event
    locked, waited = threading.Event(), []

    def other_dispatcher():
        try:
            with transaction.atomic():
                list(ScheduledEvent.objects.select_for_update().filter(pk=event.pk))
                locked.set()
                threading.Event().wait(0.4)  # the instant, long enough for the claimant to meet the lock
        finally:
            connection.close()

    def claim_then_another_scan(given_now):
        claimed = claim(given_now)
        if connection.vendor == "postgresql":
            threading.Thread(target=other_dispatcher).start()
            assert locked.wait(10)
            waited.append(True)
        return claimed

    monkeypatch.setattr(scheduler, "_claim_one_due_event", claim_then_another_scan)
    result = try_run_one_due_event(now=DUE)

    assert result is not None and result.ok and result.event_id == event.pk, result
    assert calls == [event.pk] and waited == ([True] if connection.vendor == "postgresql" else [])
    event.refresh_from_db()
    assert event.done_at == DUE and event.started_at is None
