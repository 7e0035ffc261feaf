"""Events due together run in one batch (DESIGN.md "The clock"; ``cities.scheduler.BATCH_HANDLERS``): the judge
elections of every city, opening and closing at the same planned time, run in one transaction each way, with
exactly the outcome of the same events run one by one (L-JUDGE-4, L-JUDGE-5, L-DAY-4): the same elections,
results, follow-up elections and their clock events, the same messages in the city inboxes, the same audit rows.
A batch that fails is rolled back whole and its events run one by one, so a failure is recorded on its own
event only.

Each comparison runs the same game twice from the same state: once one by one (batching off) inside a savepoint
that is rolled back, then batched."""
from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction

from bench import world as bench_world
from cities import scheduler
from cities.models import City, GameEvent, Resident, ScheduledEvent
from cities.scheduler import advance_clock, dispatch_due_events
from inboxes import posting
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from rulesets.lepra.court import judge_services
from rulesets.lepra.models import JudgeElection

pytestmark = pytest.mark.django_db

FIRST_DAY = datetime(2033, 3, 7, 7, tzinfo=UTC)


class _Rollback(Exception):
    pass


def _snapshot(game, since_event: int) -> dict:
    """What the clock did to ``game``, with ids replaced by what they stand for (city numbers, times)."""
    number = dict(City.objects.filter(game=game).values_list("pk", "number"))
    elections = list(JudgeElection.objects.filter(game=game).order_by("city_id", "opens_at", "id"))
    key = {e.pk: (number[e.city_id], e.opens_at) for e in elections}
    return {
        "elections": [(key[e.pk], e.day, e.reason, e.announced_at, e.closes_at, e.opened_at, e.closed_at,
                       e.cancelled_at, e.result, e.winner_id, key.get(e.follows_id)) for e in elections],
        "judges": sorted(Resident.objects.filter(seats.rank_q("is_judge"), game=game).values_list("pk", flat=True)),
        "events": sorted(
            (e.kind, e.due_at, e.done_at, e.cancelled_at, e.attempts, e.last_error,
             key.get(e.payload.get("election"), e.payload.get("election")) if "election" in e.payload else None)
            for e in ScheduledEvent.objects.filter(game=game, kind__startswith="election_")),
        "messages": [(number.get(m.inbox.city_id), m.inbox.kind, m.author_name, m.body, m.body_html, m.received_at)
                     for m in Message.objects.filter(inbox__game=game, author_resident__isnull=True)
                     .select_related("inbox").order_by("inbox__city_id", "inbox__kind", "received_at", "id")],
        "precincts": sorted((number[i.city_id], i.title, i.killed_at)
                            for i in Inbox.objects.filter(game=game, kind=LepraInboxKind.PRECINCT)),
        "audit": Counter((e.kind, e.at) for e in GameEvent.objects.filter(game=game, pk__gt=since_event)),
    }


def _one_by_one_then_batched(monkeypatch, game, run) -> tuple[dict, dict]:
    """``run()`` from the same state twice: one by one (rolled back), then batched; the two snapshots."""
    since = GameEvent.objects.order_by("-pk").values_list("pk", flat=True).first()
    try:
        with transaction.atomic(), monkeypatch.context() as m:
            m.setattr(scheduler, "BATCH_HANDLERS", {})
            run()
            one_by_one = _snapshot(game, since)
            raise _Rollback()
    except _Rollback:
        pass
    run()
    return one_by_one, _snapshot(game, since)


def test_every_citys_failing_election_runs_in_one_batch_with_the_outcome_of_one_by_one_L_JUDGE_5(monkeypatch):
    night = bench_world.build_night_game("batch4", cities=4, size=5, first_day=FIRST_DAY)
    dispatch_due_events(now=night.night_start)
    sizes = []
    for kind in ("election_open", "election_close"):
        single, batch = scheduler.BATCH_HANDLERS[kind]

        def spy(events, now, batch=batch, kind=kind):
            sizes.append((kind, len(events)))
            return batch(events, now)
        monkeypatch.setitem(scheduler.BATCH_HANDLERS, kind, (single, spy))
    one_by_one, batched = _one_by_one_then_batched(
        monkeypatch, night.game, lambda: advance_clock(night.until, game=night.game))
    assert batched == one_by_one
    assert sizes == [("election_open", 4), ("election_close", 4)]  # one batch each way, every city in it
    # What happened: the 4 elections of the night opened and closed without a candidate and failed (L-JUDGE-5);
    # each city has a new election 6 h later (L-DAY-4), announced with the result in its city inbox.
    closed = [e for e in batched["elections"] if e[6] == night.until - timedelta(minutes=1)]
    assert len(closed) == 4 and all(e[9] is None for e in closed)
    assert sum(1 for e in batched["elections"] if e[6] is None and e[7] is None) == 4
    assert batched["audit"][("scheduler.election_close", night.until - timedelta(minutes=1))] == 4
    assert batched["audit"][("election.scheduled", night.until - timedelta(minutes=1))] == 4


def _propose(game, city_number: int, now: datetime) -> Resident:
    """A living resident of city ``city_number`` proposes another one (L-JUDGE-3); returns the candidate."""
    proposer, candidate = Resident.objects.filter(game=game, city__number=city_number, status="alive").order_by(
        "-pk")[:2]
    judge_services.do_propose_candidate(candidate, acting_user=proposer.user, now=now)
    return candidate


def test_elections_with_candidates_run_one_by_one_inside_the_batch_with_the_same_outcome_L_JUDGE_4(monkeypatch):
    night = bench_world.build_night_game("batch5", cities=5, size=5, first_day=FIRST_DAY)
    dispatch_due_events(now=night.night_start)
    # City 2's candidate gets a pro and wins; city 4's gets a con and fails (L-JUDGE-5); the rest have no candidate.
    gandhi = _propose(night.game, 2, night.night_start)
    hitler = _propose(night.game, 4, night.night_start)
    opening = JudgeElection.objects.filter(game=night.game, opened_at__isnull=True, cancelled_at__isnull=True,
                                           closed_at__isnull=True).order_by("opens_at").first().opens_at

    def run():
        advance_clock(opening + timedelta(minutes=1), game=night.game)
        for candidate, ballot in ((gandhi, "Он - Ганди!"), (hitler, "Он - Гитлер!")):
            precinct = Inbox.objects.get(game=night.game, kind=LepraInboxKind.PRECINCT, resident=candidate)
            voter = Resident.objects.filter(city=candidate.city, status="alive").exclude(pk=candidate.pk).order_by(
                "pk").first()
            posting.do_post_message(precinct, ballot, acting_user=voter.user,
                                           now=opening + timedelta(minutes=2))
        advance_clock(night.until, game=night.game)

    one_by_one, batched = _one_by_one_then_batched(monkeypatch, night.game, run)
    assert batched == one_by_one
    assert len(batched["precincts"]) == 2 and batched["judges"] == [gandhi.pk]
    close = night.until - timedelta(minutes=1)
    assert batched["audit"][("scheduler.election_close", close)] == 5
    assert batched["audit"][("election.scheduled", close)] == 4  # every city but the one with a judge


def test_a_failing_event_in_a_batch_fails_alone_and_the_others_run_DESIGN_clock(monkeypatch):
    night = bench_world.build_night_game("batch3", cities=3, size=5, first_day=FIRST_DAY)
    dispatch_due_events(now=night.night_start)
    events = list(ScheduledEvent.objects.filter(game=night.game, kind="election_open", done_at__isnull=True,
                                                cancelled_at__isnull=True).order_by("due_at", "id"))
    assert len(events) == 3 and len({e.due_at for e in events}) == 1
    broken = events[1]
    broken.payload = {"election": 0}  # an election that does not exist: its handler raises
    broken.save(update_fields=["payload"])
    ran = dispatch_due_events(now=events[0].due_at)
    # The batch failed whole and was rolled back; the first event then ran alone, the broken one failed alone and
    # blocks its game's later events (DESIGN.md "The clock"), so the third waits behind it.
    assert ran == 1
    states = {e.pk: e for e in ScheduledEvent.objects.filter(pk__in=[e.pk for e in events])}
    assert states[events[0].pk].done_at == events[0].due_at and states[events[0].pk].attempts == 1
    assert states[broken.pk].done_at is None and states[broken.pk].attempts == 1
    assert states[broken.pk].last_error.startswith("DoesNotExist")
    assert states[events[2].pk].done_at is None and states[events[2].pk].attempts == 0
    assert states[events[2].pk].started_at is None and states[events[2].pk].retry_at is None
    assert GameEvent.objects.filter(game=night.game, kind="scheduler.event_failed",
                                    payload__event=broken.pk).count() == 1
    assert not GameEvent.objects.filter(game=night.game, kind="scheduler.event_failed").exclude(
        payload__event=broken.pk).exists()


# ---- The scheduler's batches, with handlers of a kind made for the test ----------------------------------------

DUE = datetime(2021, 7, 1, 9, tzinfo=UTC)  # long before anything the session's demo game schedules


@pytest.fixture
def ticks(monkeypatch):
    """A kind ``tick`` with a handler and a batch handler; ``calls`` lists the batch sizes the handler ran."""
    from cities.services import do_create_game
    from tests.cities.clock_helpers import make_user

    game = do_create_game(title="Batches", slug="batches", acting_user=make_user("batches-proc"),
                          now=DUE - timedelta(days=1))
    calls: list[int] = []

    def tick(event, now):
        if event.payload.get("ends_game"):  # as a handler that ends its game: its pending events are cancelled
            ScheduledEvent.objects.filter(game=event.game_id, done_at__isnull=True, cancelled_at__isnull=True).update(
                cancelled_at=now)
        return f"tick {event.payload['n']}"

    def tick_batch(events, now):
        calls.append(len(events))
        return [tick(e, now) for e in events]

    monkeypatch.setitem(scheduler.HANDLERS, "tick", tick)
    monkeypatch.setitem(scheduler.HANDLERS, "tock", lambda event, now: "tock")
    monkeypatch.setitem(scheduler.BATCH_HANDLERS, "tick", (tick, tick_batch))
    return game, calls


def _add(game, kind: str, n: int, **payload) -> ScheduledEvent:
    return ScheduledEvent.objects.create(game=game, kind=kind, due_at=DUE, payload={"n": n, **payload},
                                         created_at=DUE - timedelta(days=1))


def test_a_batch_ends_at_an_event_of_another_kind_so_the_games_order_holds_DESIGN_clock(ticks):
    game, calls = ticks
    events = [_add(game, "tick", 0), _add(game, "tick", 1), _add(game, "tock", 2), _add(game, "tick", 3)]
    assert dispatch_due_events(now=DUE) == 4
    assert calls == [2]  # ticks 0 and 1 together; the tock alone; tick 3 alone (no companion)
    audit = list(GameEvent.objects.filter(game=game, kind__in=["scheduler.tick", "scheduler.tock"]).order_by("id")
                 .values_list("kind", "payload"))
    assert audit == [("scheduler.tick", {"event": events[0].pk, "detail": "tick 0"}),
                     ("scheduler.tick", {"event": events[1].pk, "detail": "tick 1"}),
                     ("scheduler.tock", {"event": events[2].pk, "detail": "tock"}),
                     ("scheduler.tick", {"event": events[3].pk, "detail": "tick 3"})]
    assert all(e.done_at == DUE and e.attempts == 1 for e in ScheduledEvent.objects.filter(game=game))


def test_a_batch_whose_first_event_cancels_the_others_keeps_only_the_first_as_run_alone_DESIGN_clock(ticks):
    game, calls = ticks
    first, second, third = _add(game, "tick", 0, ends_game=True), _add(game, "tick", 1), _add(game, "tick", 2)
    assert dispatch_due_events(now=DUE) == 1
    assert calls == [3]  # tried together, not kept: run alone, the first cancelled the others, which never ran
    states = {e.pk: e for e in ScheduledEvent.objects.filter(game=game)}
    assert states[first.pk].done_at == DUE and states[first.pk].cancelled_at is None
    assert all(states[e.pk].done_at is None and states[e.pk].cancelled_at == DUE for e in (second, third))
    assert list(GameEvent.objects.filter(game=game, kind="scheduler.tick").values_list("payload", flat=True)) == [
        {"event": first.pk, "detail": "tick 0"}]


def test_a_replaced_handler_is_never_bypassed_by_its_batch_handler_DESIGN_clock(ticks, monkeypatch):
    game, calls = ticks
    monkeypatch.setitem(scheduler.HANDLERS, "tick", lambda event, now: "replaced")
    _add(game, "tick", 0), _add(game, "tick", 1)
    assert dispatch_due_events(now=DUE) == 2
    assert calls == []
    assert set(GameEvent.objects.filter(game=game, kind="scheduler.tick").values_list("payload__detail", flat=True)) \
        == {"replaced"}
