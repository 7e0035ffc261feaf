"""The bottom layer (DESIGN.md "Rulesets and layers"): domain errors (``errors``), the ruleset interface and
registry (``rulesets``) and, as they move here, the audit log and time helpers. Imports no other app of the
project."""
