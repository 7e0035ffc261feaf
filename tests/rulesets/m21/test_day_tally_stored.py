"""M21's day is stored as it goes (RULES.md M-VOTE-1..9, DESIGN.md "Rulesets and layers"): every post, death,
replacement and Judge's order updates the day's stored vote in its own transaction, and a recount from the posts
(``recount_day``, the pure replay) always agrees with it (``audit_m21_day``), whatever the sequence: votes, unvotes,
END/UNEND, deaths mid-day, replacements, edits, the Judge closing proceedings, posts after the deadline."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from cities.models import LifeStatus
from inboxes.membership_services import do_edit_message
from inboxes.posting import do_post_message
from kernel.errors import RuleViolation
from rulesets.m21 import services
from rulesets.m21.day_services import audit_m21_day, day_outcome, recount_day
from rulesets.m21.models import DayStatus, M21Day
from tests.rulesets.m21.day_helpers import build_game, make_user

NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace")
TARGETS = (*NAMES, "No Lynch", "Al", "gra", "Zed", "Sub0", "Sub1")
COMMANDS = st.one_of(
    st.builds(lambda t: f"##VOTE {t}", st.sampled_from(TARGETS)),
    st.just("##UNVOTE"), st.just("##END"), st.just("##UNEND"), st.just("Just talking."),
    st.builds(lambda t: f"> ##VOTE {t}", st.sampled_from(TARGETS)),
)
STEPS = st.lists(st.one_of(
    st.tuples(st.just("post"), st.sampled_from(NAMES), st.lists(COMMANDS, min_size=1, max_size=3)),
    st.tuples(st.just("edit"), st.sampled_from(NAMES), st.lists(COMMANDS, min_size=1, max_size=2)),
    st.tuples(st.just("death"), st.sampled_from(NAMES), st.none()),
    st.tuples(st.just("replace"), st.sampled_from(NAMES), st.none()),
    st.tuples(st.just("close"), st.none(), st.none()),
    st.tuples(st.just("late"), st.sampled_from(NAMES), st.lists(COMMANDS, min_size=1, max_size=2)),
), min_size=1, max_size=25)


def _play(steps) -> None:
    table = build_game()
    game = table.game
    substitutes = 0
    account = dict(table.users)  # the name a step plays -> the account now holding that seat
    last_post = {}
    for kind, name, commands in steps:
        table.tick(1)
        seat = table.seat(account[name].display_name) if name else None
        try:
            if kind in ("post", "late"):
                if kind == "late":
                    table.now = max(table.now, table.day(1).deadline + timedelta(minutes=1))
                last_post[name] = do_post_message(table.thread, "\n".join(commands), acting_user=account[name],
                                                  now=table.now)
            elif kind == "edit" and name in last_post:
                do_edit_message(last_post[name], "\n".join(commands) + "\n(edited)",
                                acting_user=account[name], now=table.now)
            elif kind == "death" and seat.status == LifeStatus.ALIVE:
                services.do_remove_m21_player(seat, acting_user=table.host, cause="killed", now=table.now)
            elif kind == "replace" and seat.status == LifeStatus.ALIVE and substitutes < 2:
                new = make_user(f"Sub{substitutes}")
                substitutes += 1
                services.do_replace_m21_player(seat, new, acting_user=table.host, now=table.now)
                account[name] = new
            elif kind == "close":
                services.do_close_proceedings(game, acting_user=table.user_of_role("judge"), now=table.now)
        except RuleViolation:
            pass
        day = M21Day.objects.get(game=game, number=1)
        assert audit_m21_day(day, now=table.now) == [], (kind, name, commands)


@pytest.mark.django_db
@settings(max_examples=25, phases=(Phase.explicit, Phase.reuse, Phase.generate), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(steps=STEPS)
# A death voiding two votes: the stored day (PostgreSQL's jsonb keeps no key order) tells them as the recount does.
@example(steps=[("close", None, None), ("post", "Grace", ["##VOTE Alice"]), ("post", "Alice", ["##VOTE Alice"]),
                ("close", None, None), ("close", None, None), ("post", "Alice", ["##VOTE Alice"]),
                ("death", "Alice", None)])
def test_the_stored_day_agrees_with_a_recount_from_the_posts_M_VOTE_7(steps):
    with transaction.atomic():
        _play(steps)
        transaction.set_rollback(True)


@pytest.mark.django_db
def test_a_hammer_is_stored_with_each_seats_vote_and_activity_M_VOTE_3_M_VOTE_5():
    table = build_game()
    table.post("Alice", "##VOTE Grace\n##END")
    table.post("Bob", "Hello")
    table.post("Bob", "##VOTE Grace")
    day = table.day(1)
    forum = day.tally["forum"]
    assert forum["votes"] == {"Alice": ["Grace", 1], "Bob": ["Grace", 2]}
    assert forum["end_marks"] == ["Alice"]
    assert forum["posts"] == {"Alice": 1, "Bob": 2} and forum["votes_cast"] == {"Alice": 1, "Bob": 1}
    for name in ("Bob", "Carol", "Dave"):
        table.post(name, "##VOTE Grace\n##END")
    day.refresh_from_db()
    assert (day.status, day.how, day.imprisoned.name) == (DayStatus.DECIDED, "end_hammer", "Grace")
    assert day.tally["forum"]["end"]["eliminated"] == "Grace"
    assert audit_m21_day(day, now=table.now) == []


@pytest.mark.django_db
def test_an_edit_never_changes_what_a_vote_post_did_M_VOTE_1():
    table = build_game()
    message = table.post("Alice", "##VOTE Grace")
    table.tick(1)
    do_edit_message(message, "##VOTE Bob", acting_user=table.users["Alice"], now=table.now)
    day = table.day(1)
    count = day_outcome(day, now=table.now).report.count
    assert dict(count.votes) == {"Grace": ("Alice",)}
    recounted, _ = recount_day(day)
    assert dict(recounted.outcome().report.count.votes) == {"Grace": ("Alice",)}


@pytest.mark.django_db
def test_reading_the_day_reads_no_post_M_VOTE_8(django_assert_max_num_queries):
    table = build_game()
    for i in range(30):
        table.post(NAMES[i % 7], f"##VOTE {NAMES[(i + 1) % 7]}" if i % 3 else "talk")
    day = table.day(1)
    with django_assert_max_num_queries(2):  # the game and its M21 settings (the rules), whatever the posts
        outcome = day_outcome(day, now=table.now)
    assert sum(len(v) for v in outcome.report.count.votes.values()) == 7
