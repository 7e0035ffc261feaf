"""Typed kinds (kernel.events): every audit-log kind the code records is declared (the engine's ``EventKind``, a
ruleset's ``event_kinds``, or of a family), and the audience, timeline and label tables are read from the enums of
the engine and of the registered rulesets (L-STAFF-6, L-ARCH-3)."""
from __future__ import annotations

from django.utils import translation

from archive.selectors import public_event_kinds
from cities.scheduler import HANDLERS
from inboxes import audit_policy
from kernel.events import (
    Audience,
    DeclaredEventKind,
    DeclaredScheduledKind,
    EventKind,
    ScheduledKind,
    declared_event_kind,
    declared_scheduled_kind,
    event_audience,
    event_families,
    event_kind_problems,
    scheduled_label,
)
from kernel.rulesets import RulesetSpec, get_ruleset, register_ruleset
from mafia_site.checks import check_mafia_settings
from rulesets.lepra.clock.services import CLOCK_EVENT_KINDS, DAY_DEADLINE_KINDS
from rulesets.lepra.events import LepraEventKind, LepraScheduledKind
from rulesets.m21.events import M21ScheduledKind
from tests.support.recorded_kinds import planned_scheduled_kinds, recorded_event_kinds


def test_every_kind_the_code_records_is_declared_L_STAFF_6():
    kinds = set(recorded_event_kinds())
    assert len(kinds) > 80
    assert {"resident.died", "inbox.rolled_over", "voting.opened", "election.closed", "m21.day_decided"} <= kinds
    # a kind passed as a literal to a function that records the kind it is given (``_apply_plan_change``)
    assert {"clock.day_start_set", "clock.long_day", "clock.day_shortened"} <= kinds
    undeclared = {k for k in kinds if declared_event_kind(k) is None
                  and not any(k.startswith(prefix) for prefix, _audience in event_families())}
    assert undeclared == set()


def test_every_scheduled_kind_the_code_plans_or_handles_is_declared_M_SETUP_4():
    planned = set(planned_scheduled_kinds())
    assert {"voting_open", "publish_post", "m21_day_start", "m21_casting_window_end"} <= planned
    assert {kind for kind in planned if declared_scheduled_kind(kind) is None} == set()


def test_a_kind_carries_its_audience_and_timeline_L_STAFF_6_L_ARCH_3():
    assert LepraEventKind.VOTING_NOMINATED.audience is Audience.CITY_HOSTS
    assert LepraEventKind("voting.proxy_requested").audience is Audience.CITY_STAFF
    assert LepraEventKind.COMMISSAR_CHECKED.audience is Audience.NOBODY  # L-NIGHT-5: not even the Consigliere
    assert EventKind.RESIDENT_DIED == "resident.died" and EventKind.RESIDENT_DIED.timeline == "death"
    assert declared_event_kind("voting.proxy_requested") is LepraEventKind.VOTING_PROXY_REQUESTED
    assert event_audience("voting.proxy_requested") is Audience.CITY_STAFF  # a ruleset's kind, through the registry
    assert event_audience("commissar.tribune_told") is Audience.CITY_STAFF_HOST
    assert event_audience("night.kill_chosen") is Audience.NIGHT_STAFF  # a family
    assert event_audience("scheduler.night_end") is Audience.PROCURATOR  # the night's summary counts checks
    assert event_audience("scheduler.voting_open") is Audience.STAFF
    assert event_audience("scheduler.play_ban_end") is Audience.STAFF  # the engine's scheduled kind
    assert event_audience("no.such_kind") is Audience.NOBODY  # fail closed


def test_the_policy_and_the_timeline_read_the_enums():
    assert audit_policy.audit_log_audience()["staff.appointed"] == audit_policy.AUDIT_APPOINTMENT == "appointment"
    assert audit_policy.audit_audience("membership.penalty_banned") == audit_policy.AUDIT_HOST_COURT == "host+court"
    assert audit_policy.audit_log_audience()["court.voted"] == "host+court"  # Lepra's court (L-COURT)
    assert public_event_kinds() == {"resident.died": "death", "voting.opened": "vote", "voting.closed": "vote",
                                    "voting.execution_decided": "court", "court.sentenced": "court",
                                    "court.case_opened": "court", "election.closed": "election",
                                    "night.resolved": "night", "game.status": "status"}


def test_scheduled_kinds_have_handlers_labels_and_plan_roles_L_DAY_3():
    assert set(CLOCK_EVENT_KINDS) == {"day_start", "night_start", "night_end", "daily_post_draft"}
    assert set(DAY_DEADLINE_KINDS) == {"voting_open", "voting_close", "court_deadline", "election_open",
                                       "election_close"}
    assert {kind.value for kind in (*ScheduledKind, *LepraScheduledKind, *M21ScheduledKind)} <= set(HANDLERS)
    assert LepraScheduledKind.COURT_DEADLINE.audit_kind == "scheduler.court_deadline"
    assert declared_scheduled_kind("court_deadline") is LepraScheduledKind.COURT_DEADLINE
    assert declared_scheduled_kind("publish_post") is ScheduledKind.PUBLISH_POST
    assert declared_scheduled_kind("m21_day_start") is M21ScheduledKind.DAY_START  # M21's, on its spec
    assert declared_scheduled_kind("no_such_kind") is None
    with translation.override("en"):
        assert scheduled_label("voting_open") == "the opening of the voting"
        assert scheduled_label("daily_post_publish") == "the publication of the daily post"  # L-POST-2, held draft
        assert scheduled_label("play_ban_end") == "the end of a play ban"
        assert scheduled_label("m21_day_start") == "the start of a day"
        assert scheduled_label("no_such_kind") == "no such kind"  # declared by nobody: its name, spaced
    with translation.override("ru"):
        assert scheduled_label("daily_post_publish") == "публикация поста дня"
    assert event_audience("scheduler.daily_post_publish") is Audience.STAFF
    assert event_audience("scheduler.m21_night_end") is Audience.PROCURATOR  # the hosts' (M-SETUP-4)


def test_the_engine_tables_hold_no_ruleset_kind():
    lepra = get_ruleset("lepra")
    assert tuple(lepra.event_kinds) == tuple(LepraEventKind)
    assert tuple(lepra.scheduled_event_kinds) == tuple(LepraScheduledKind)
    assert not {k.value for k in EventKind} & {k.value for k in LepraEventKind}
    assert not {k.value for k in ScheduledKind} & {k.value for k in LepraScheduledKind}
    assert ("night.", Audience.NIGHT_STAFF) in lepra.event_families  # Lepra's families are Lepra's
    m21 = get_ruleset("m21")
    assert tuple(m21.scheduled_event_kinds) == tuple(M21ScheduledKind)
    assert set(m21.scheduler_kinds) == {kind.value for kind in M21ScheduledKind}
    assert event_kind_problems() == []  # no registered ruleset declares a kind declared elsewhere


def test_a_rulesets_declarations_join_the_tables_when_it_registers_and_a_clash_is_a_system_error(monkeypatch):
    import kernel.rulesets

    monkeypatch.setattr(kernel.rulesets, "_REGISTRY", dict(kernel.rulesets._REGISTRY))

    class DiceKind(DeclaredEventKind):
        ROLLED = "dice.rolled", Audience.PROCURATOR, "roll"
        CREATED = "game.created", Audience.NOBODY  # the engine's kind

    class DiceScheduled(DeclaredScheduledKind):
        ROLL = "dice_roll", Audience.STAFF, "the roll of the dice"

    class Dice(RulesetSpec):
        key = "dice"
        event_kinds = tuple(DiceKind)
        scheduled_event_kinds = tuple(DiceScheduled)

    assert event_audience("dice.rolled") is Audience.NOBODY and event_kind_problems() == []
    register_ruleset(Dice())
    assert event_audience("dice.rolled") is Audience.PROCURATOR
    assert public_event_kinds()["dice.rolled"] == "roll"
    assert event_audience("scheduler.dice_roll") is Audience.STAFF
    assert scheduled_label("dice_roll") == "the roll of the dice"  # a plain string: no translation
    assert event_audience("game.created") is Audience.STAFF  # the engine's declaration stands
    assert event_kind_problems() == ["ruleset 'dice': event kind 'game.created' is declared by the engine too"]
    assert [e.id for e in check_mafia_settings(None) if e.id == "mafia.E010"] == ["mafia.E010"]
