"""Rulesets (DESIGN.md "Rulesets"): what differs between hosted games, declared per ruleset; the engine is shared."""
