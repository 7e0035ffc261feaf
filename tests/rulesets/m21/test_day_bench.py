"""The M21 day's benchmark runs in the suite at a tiny size, so that it cannot rot (no timing is asserted): a vote
post redirects, the pages open, and the stored day took every vote (M-VOTE-8)."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from rulesets.m21.day_bench import format_day_bench, run_day_bench
from rulesets.m21.day_services import audit_m21_day
from rulesets.m21.models import M21Day


@pytest.mark.django_db
def test_the_day_bench_measures_a_vote_and_both_pages_without_an_error_M_VOTE_8():
    report = run_day_bench((3, 12), repeats=2, log=lambda line: None)
    assert {name: f["errors"] for name, f in report["figures"].items() if f["errors"]} == {}
    assert {name: f["n"] for name, f in report["figures"].items()} == {
        f"{measure}, {n} posts": 2 for measure in ("vote post", "thread page", "game page") for n in (3, 12)}
    assert all(ratio is not None for ratio in report["ratios"].values())
    assert all(f["statements"] >= 1 for f in report["figures"].values())  # each request's SQL is counted
    assert "vote post: 12 / 3 posts" in format_day_bench(report)
    days = list(M21Day.objects.filter(game__slug__startswith="m21bench"))
    assert len(days) == 2
    for day in days:
        voter = next(iter(day.tally["forum"]["seats"]))  # the first seat is the bench's voter
        assert day.tally["forum"]["votes"][voter][0] in day.tally["forum"]["seats"]
        assert audit_m21_day(day, now=timezone.now()) == []


@pytest.mark.django_db
def test_the_bench_command_refuses_a_single_post_count():
    with pytest.raises(CommandError, match="at least two post counts"):
        call_command("bench_m21_day", posts="30", repeats=1)
