"""The access policy's per-kind tables are each ruleset's declaration (``RulesetSpec.policy_grants``, read through
``inboxes.policy_tables.kinds_of``): the engine keeps no closed list of one ruleset's kinds, a ruleset declares
only kinds of its own games and inherits no other's, and one that declares none has none."""
from __future__ import annotations

import pytest

from cities.staff_kinds import STAFF_TABLES, staff_kinds_of
from inboxes.policy_tables import KIND_TABLES, STAFF_KIND_TABLES, kinds_of, ranked_kinds
from kernel.rulesets import registered_rulesets
from tests.toy_ruleset.ruleset import KEY as TOY, register

#: The other keys of ``policy_grants``, read by ``inboxes.policies`` and ``inboxes.knowledge``.
GRANT_KEYS = {"staff", "conditional_staff", "spectators", "public_after_game", "open_on_request_after_game",
              "hosts_know_alignments", "seat_states"}


@pytest.fixture
def rulesets(monkeypatch):
    register(monkeypatch)
    return registered_rulesets()


def test_every_ruleset_declares_only_known_tables(rulesets):
    for key, spec in rulesets.items():
        assert set(spec.policy_grants) <= GRANT_KEYS | KIND_TABLES | STAFF_TABLES, key


@pytest.mark.parametrize("table", sorted(STAFF_TABLES))
def test_a_ruleset_names_only_its_own_staff_kinds_in_its_staff_tables(rulesets, table):
    for key, spec in rulesets.items():
        assert staff_kinds_of(key, table) <= set(spec.staff_kinds), (key, table)
    assert (staff_kinds_of("lepra", "city_staff_kinds"), staff_kinds_of("m21", "city_staff_kinds")) == (
        {"tribune"}, frozenset())
    assert (staff_kinds_of("m21", "cohost_staff_kinds"), staff_kinds_of("lepra", "cohost_staff_kinds")) == (
        {"cohost"}, frozenset())
    with pytest.raises(ValueError, match="unknown staff table 'city_staf'"):
        staff_kinds_of("lepra", "city_staf")


@pytest.mark.parametrize("table", sorted(KIND_TABLES))
def test_a_ruleset_declares_only_kinds_of_its_own_games(rulesets, table):
    for key, spec in rulesets.items():
        own = set(spec.staff_kinds) if table in STAFF_KIND_TABLES else spec.inbox_kinds
        assert kinds_of(key, table) <= own, (key, table)


def test_secret_organizers_exist_only_where_secret_inboxes_do(rulesets):
    for key, spec in rulesets.items():
        if spec.opened_secret_kind() is None:
            assert kinds_of(key, "secret_organizers") == kinds_of(key, "secret_barred_staff") == frozenset(), key


def test_a_rulesets_kind_roles_name_kinds_of_its_own_games(rulesets):
    for key, spec in rulesets.items():
        assert set(spec.inbox_kind_roles.values()) <= spec.inbox_kinds, key
    assert rulesets[TOY].inbox_kind_roles == {} and rulesets[TOY].inbox_kind_for("city_square") is None


@pytest.mark.parametrize("table", sorted(KIND_TABLES))
def test_a_ruleset_that_declares_no_table_has_an_empty_one(rulesets, table):
    assert kinds_of(TOY, table) == frozenset()
    assert ranked_kinds(TOY, table) == ()


def test_a_table_name_no_ruleset_knows_is_a_loud_error():
    with pytest.raises(ValueError, match="unknown policy table 'dead_kinds'"):
        kinds_of("lepra", "dead_kinds")


def test_a_rulesets_inbox_order_names_each_of_its_own_kinds_once(rulesets):
    for key, spec in rulesets.items():
        assert len(set(spec.inbox_kind_order)) == len(spec.inbox_kind_order), key
        assert set(spec.inbox_kind_order) <= spec.inbox_kinds, key
