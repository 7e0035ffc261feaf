"""Domain errors, re-exported from ``kernel.errors`` (their home) for the modules that import them from here."""
from kernel.errors import InvalidInput, NotAllowed, RuleViolation, WrongState

__all__ = ["InvalidInput", "NotAllowed", "RuleViolation", "WrongState"]
