"""Typed kinds (kernel.events): every audit-log kind the code records is an ``EventKind`` (or of a family), and
the audience and timeline tables are read from the enums (L-STAFF-6, L-ARCH-3)."""
from __future__ import annotations

import re
from pathlib import Path

from archive.selectors import PUBLIC_EVENT_KINDS
from cities.scheduler import HANDLERS
from inboxes import audit_policy
from kernel.events import Audience, EventKind, ScheduledKind, event_audience, event_families
from rulesets.lepra.clock.services import CLOCK_EVENT_KINDS, DAY_DEADLINE_KINDS

ROOT = Path(__file__).resolve().parents[2]
RECORDED = re.compile(r'record_event\(\s*[\w.\[\]]+,\s*"([\w.]+)"')


def _recorded_kinds() -> set[str]:
    kinds = set()
    for path in ROOT.glob("*/**/*.py"):
        if path.relative_to(ROOT).parts[0] in {"tests", ".venv", "docs", "scripts"} or "migrations" in path.parts:
            continue
        kinds |= set(RECORDED.findall(path.read_text(encoding="utf-8")))
    return kinds


def test_every_kind_the_code_records_is_typed_L_STAFF_6():
    kinds = _recorded_kinds()
    assert len(kinds) > 80
    untyped = {k for k in kinds if k not in EventKind._value2member_map_
               and not any(k.startswith(prefix) for prefix, _audience in event_families())}
    assert untyped == set()


def test_a_kind_carries_its_audience_and_timeline_L_STAFF_6_L_ARCH_3():
    assert EventKind.VOTING_NOMINATED.audience is Audience.CITY_HOSTS
    assert EventKind("voting.proxy_requested").audience is Audience.CITY_TRIBUNE
    assert EventKind.COMMISSAR_CHECKED.audience is Audience.NOBODY  # L-NIGHT-5: not even the Consigliere
    assert EventKind.RESIDENT_DIED == "resident.died" and EventKind.RESIDENT_DIED.timeline == "death"
    assert event_audience("night.kill_chosen") is Audience.CONSIGLIERE  # a family
    assert event_audience("scheduler.night_end") is Audience.PROCURATOR  # the night's summary counts checks
    assert event_audience("scheduler.voting_open") is Audience.STAFF
    assert event_audience("no.such_kind") is Audience.NOBODY  # fail closed


def test_the_policy_and_the_timeline_read_the_enums():
    assert audit_policy.AUDIT_LOG_AUDIENCE["staff.appointed"] == audit_policy.AUDIT_APPOINTMENT == "appointment"
    assert audit_policy.audit_audience("membership.penalty_banned") == "procurator+arbiter"
    assert PUBLIC_EVENT_KINDS == {"resident.died": "death", "voting.opened": "vote", "voting.closed": "vote",
                                  "voting.execution_decided": "court", "court.sentenced": "court",
                                  "court.case_opened": "court", "election.closed": "election",
                                  "night.resolved": "night", "game.status": "status"}


def test_scheduled_kinds_have_handlers_and_plan_roles_L_DAY_3():
    assert set(CLOCK_EVENT_KINDS) == {"day_start", "night_start", "night_end", "daily_post_draft"}
    assert set(DAY_DEADLINE_KINDS) == {"voting_open", "voting_close", "court_deadline", "election_open",
                                       "election_close"}
    assert {kind.value for kind in ScheduledKind} <= set(HANDLERS)
    assert ScheduledKind.COURT_DEADLINE.audit_kind == "scheduler.court_deadline"
