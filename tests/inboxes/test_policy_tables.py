"""The access policy's per-kind tables are each ruleset's declaration (``RulesetSpec.policy_grants``, read through
``inboxes.policy_tables.kinds_of``): the engine keeps no closed list of one ruleset's kinds, and a ruleset inherits
no other's."""
from __future__ import annotations

import pytest

from cities.models import StaffKind
from inboxes.models import InboxKind as K
from inboxes.policy_tables import KIND_TABLES, kinds_of, kinds_q
from kernel.rulesets import registered_rulesets
from tests.toy_ruleset.ruleset import register

#: The engine-wide tables as they were before each ruleset declared its own: the declarations must give every
#: ruleset's games the same answers (each table restricted to the kinds that exist in that ruleset's games).
BEFORE = {
    "consent_after_game": frozenset({K.PERSONAL, K.SECRET, K.ROLE_PM}),
    "secret_organizers": frozenset({StaffKind.PROCURATOR, StaffKind.TRIBUNE, StaffKind.ARBITER}),
    "penalty_ban_kinds": frozenset({K.CITY, K.PERSONAL, K.CEMETERY, K.STAGE, K.REMOVAL, K.IMPEACHMENT, K.VOTING,
                                    K.PRECINCT}),
    "secret_member_kinds": frozenset({K.CHECK, K.MAFIA_COMPLAINT}),
    "dated_kinds": frozenset({K.SECRET, K.CHECK}),
    "vote_only_kinds": frozenset({K.VOTING, K.PRECINCT}),
    "dead_post_kinds": frozenset({K.CEMETERY, K.PERSONAL, K.STAGE, K.SPECTATORS, K.ROLE_PM}),
    "imprisoned_post_kinds": frozenset({K.PERSONAL, K.STAGE, K.SPECTATORS, K.ROLE_PM}),
    "no_rollover_kinds": frozenset({K.VOTING, K.PRECINCT}),
    "rollover_keeps_dead_kinds": frozenset({K.CEMETERY, K.STAGE}),
    "immutable_kinds": frozenset({K.VOTING, K.PRECINCT, K.COURT, K.CHECK}),
}


def _restricted(spec, table: str) -> frozenset[str]:
    """The old table as it acted in a game of ``spec``: its kinds that exist there. The secret organizers matter
    only where secret inboxes exist."""
    if table == "secret_organizers":
        return BEFORE[table] & set(spec.staff_kinds) if spec.has_inbox_kind(K.SECRET) else frozenset()
    return BEFORE[table] & spec.inbox_kinds


@pytest.mark.parametrize("table", sorted(KIND_TABLES))
def test_each_ruleset_declares_what_the_engine_tables_gave_its_games(table, monkeypatch):
    register(monkeypatch)
    assert set(BEFORE) == KIND_TABLES
    for key, spec in registered_rulesets().items():
        assert kinds_of(key, table) == _restricted(spec, table), (key, table)
