"""The benchmark runs in the suite at its tiny size (README "Benchmark"), so that it cannot rot: it builds its
games through the services, serves them with gunicorn on this test database (loopback only), and every scenario
answers as a player expects (votes and posts redirect, pages open, the night resolves). No timing is asserted."""
from __future__ import annotations

import json

import pytest
from django.db import connection

from bench.models import FloorRow
from bench.runner import SIZES, Bench, format_report

pytestmark = pytest.mark.django_db(transaction=True)


def test_tiny_bench_measures_every_scenario_without_an_error_L_VOTE_2(tmp_path):
    size = SIZES["tiny"]
    report = Bench(size, label="tbench", log=lambda line: None, out_dir=tmp_path).run()

    figures = report["figures"]
    assert {name: f["errors"] for name, f in figures.items() if f["errors"]} == {}
    single = size.rounds * size.single_requests
    # One client alternates «казнить» and «не казнить»: each accepted, so half of its posts are votes (L-VOTE-2).
    assert figures["vote"]["n"] + figures["retraction"]["n"] == single
    assert figures["vote"]["n"] == single // 2
    assert figures["floor post"]["n"] == single
    assert figures["floor post"]["statements_median"] >= 1
    assert figures[f"vote post, {size.clients} clients"]["n"] == size.rounds * size.clients * size.requests_per_client
    for n in size.message_counts:
        assert figures[f"thread page, {n} messages"]["n"] == size.rounds * size.page_requests
        assert figures[f"voting inbox page, {n} messages"]["n"] == size.rounds * size.page_requests
    for count in size.inbox_counts:
        assert figures[f"my inboxes, {count} inboxes"]["n"] == size.rounds * size.page_requests
    for cities in size.night_cities:
        assert figures[f"night resolution + daily post, {cities} cities"]["n"] == size.rounds
    burst = size.burst_games * size.burst_players
    assert figures[f"burst: {burst} players in {size.burst_games} games posting at once"]["n"] == size.rounds * burst
    assert all(value is not None for value in report["ratios"].values())

    written = json.loads((tmp_path / "report-tbench.json").read_text())
    assert written["figures"] == figures
    assert "vote post / floor post (median, 1 client)" in format_report(report)
    # The floor's table exists only while the bench runs.
    assert FloorRow._meta.db_table not in connection.introspection.table_names()
