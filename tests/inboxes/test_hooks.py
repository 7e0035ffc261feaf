"""The post-hook registry (inboxes.hooks): the ruleset's rule for a message posted in an inbox of a kind."""
from __future__ import annotations

from types import SimpleNamespace

from cities.scheduler import HANDLERS
from inboxes.hooks import POST_HOOKS, PostHook, post_hook, post_hook_for
from rulesets.lepra.kinds import LepraInboxKind
from kernel.rulesets import get_ruleset
from rulesets.lepra.hooks import PrecinctHook, VotingInboxHook


def _inbox(ruleset: str, kind: str):
    return SimpleNamespace(kind=kind, game=SimpleNamespace(ruleset=ruleset))


def test_lepra_registers_its_voting_and_precinct_hooks_L_VOTE_3_L_JUDGE_4():
    assert isinstance(post_hook_for(_inbox("lepra", LepraInboxKind.VOTING)), VotingInboxHook)
    assert isinstance(post_hook_for(_inbox("lepra", LepraInboxKind.PRECINCT)), PrecinctHook)
    assert post_hook_for(_inbox("lepra", LepraInboxKind.CITY)) is None
    assert post_hook_for(_inbox("m21", LepraInboxKind.VOTING)) is None  # a Lepra rule never runs in another ruleset
    assert set(get_ruleset("lepra").post_hook_kinds) == {LepraInboxKind.VOTING, LepraInboxKind.PRECINCT}


def test_lepra_registers_its_scheduler_handlers_L_VOTE_6():
    for kind in get_ruleset("lepra").scheduler_kinds:
        assert HANDLERS[kind].__module__ == "rulesets.lepra.handlers"


def test_a_ruleset_hook_wins_over_a_general_one(monkeypatch):
    monkeypatch.setattr("inboxes.hooks.POST_HOOKS", dict(POST_HOOKS))

    @post_hook("bar")
    class General(PostHook):
        pass

    @post_hook("bar", ruleset="m21")
    class Special(PostHook):
        def check(self, inbox, seat, text, now):
            return "special"

    assert type(post_hook_for(_inbox("lepra", "bar"))) is General
    assert type(post_hook_for(_inbox("m21", "bar"))) is Special
    assert post_hook_for(_inbox("m21", "bar")).check(None, None, "x", None) == "special"
    assert General().check(None, None, "x", None) is None and General().record(None, None, None, None, None) is None
