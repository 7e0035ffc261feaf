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


#: The HTTP status of a refusal a page answers in its own template, by the error's own class.
_PAGE_STATUS = {InvalidInput: 400, NotAllowed: 403, WrongState: 409}


def page_status(error: RuleViolation) -> int:
    """The status a page answers ``error`` with when it shows the refusal in its own template (the form comes
    back with the reason): 400 for ``InvalidInput``, 403 for ``NotAllowed``, 409 for ``WrongState``, looked up by
    the error's own class, so a refinement (a ruleset's own refusal, ``NotProvidedByRuleset``) is a 400. A
    refusal no view catches is answered by ``mafia_site.middleware.RuleViolationMiddleware`` instead."""
    return _PAGE_STATUS.get(type(error), 400)
