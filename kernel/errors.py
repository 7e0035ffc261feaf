"""Domain errors (the kernel layer). Every service raises a ``RuleViolation`` subclass whose message a player can
read; nothing changed when one is raised."""
from __future__ import annotations


class RuleViolation(Exception):
    """A request the rules refuse. ``str(error)`` is a translated, player-readable message; nothing changed.

    ``rule`` names the RULES.md rule ID when one applies (for logs and tests).
    """

    rule: str = ""

    def __init__(self, message: str, *, rule: str = "") -> None:
        super().__init__(message)
        self.message = message
        if rule:
            self.rule = rule

    def __str__(self) -> str:
        return str(self.message)


class NotAllowed(RuleViolation):
    """The acting user may not do this (not their role, not their inbox, banned)."""


class InvalidInput(RuleViolation):
    """The input is malformed (empty text, too long, a time in the past)."""


class WrongState(RuleViolation):
    """The game or object is not in a state that allows this (inbox killed, game over, already done)."""


class UnknownRuleset(InvalidInput):
    """No ruleset is registered under this key (``kernel.rulesets.get_ruleset``); nothing was created."""


class NotProvidedByRuleset(WrongState):
    """The game's ruleset does not provide this part of the interface (``kernel.rulesets.RulesetSpec``).

    Raised by the spec's defaults, so that an engine asking a ruleset for something it has not declared fails
    loudly with the ruleset key and the part's name instead of running another ruleset's rules.
    """
