"""The rule IDs a game's ruleset gives the engine's refusals (``RuleViolation.rule``).

The engine names the rule a refusal enforces by a neutral key ("procurator_only", "city_formation", ...); each
ruleset maps the keys it enforces to the IDs of its own rules in ``rule_ids`` (a mapping on its ``RulesetSpec``:
key -> rule ID). A key no registered ruleset maps is a typo and a loud ``ValueError``; a key the game's ruleset
does not map gives no rule ID, never another ruleset's."""
from __future__ import annotations

from collections.abc import Mapping

from kernel.rulesets import registered_rulesets


def rule_ids_of(spec) -> Mapping[str, str]:
    """The ``rule_ids`` mapping ``spec`` declares (key -> rule ID); empty when it declares none."""
    return getattr(spec, "rule_ids", None) or {}


def known_rule_keys() -> frozenset[str]:
    """Every key some registered ruleset maps to a rule ID."""
    return frozenset().union(*(rule_ids_of(spec).keys() for spec in registered_rulesets().values()))


def rule_id(game, key: str) -> str | None:
    """The rule ID the ruleset of ``game`` (anything with a ``ruleset`` key, or the key itself) gives ``key``, or
    None when it gives none (or is not registered: the refusal is raised all the same). Raises ``ValueError``
    when no registered ruleset knows ``key``."""
    if key not in known_rule_keys():
        raise ValueError(f"no ruleset maps the rule key {key!r}")
    ruleset = game if isinstance(game, str) else getattr(game, "ruleset", None)
    spec = registered_rulesets().get(ruleset)
    return rule_ids_of(spec).get(key) if spec is not None else None
