"""Lepra's keywords as pure functions (RULES.md L-VOTE-2, L-VOTE-3, L-JUDGE-4): no ORM, no clock, no I/O.

``parse_lepra_execution(text)`` reads a whole voting-inbox message as **казнить** / **не казнить** or flood;
``parse_lepra_election(text)`` reads a whole precinct message as **Он - Ганди!** / **Он - Гитлер!** or nothing. Both
match through ``lepra_keyword_key``. What a keyword does is the tallies' business (``rulesets.lepra.day.tally``:
``tally_lepra_execution``, ``tally_lepra_election``).
"""
from __future__ import annotations

import re
import unicodedata
from enum import StrEnum


class LepraKeyword(StrEnum):
    """The two keywords of an execution voting inbox. There is no vote against execution."""

    EXECUTE = "execute"
    """**казнить**: a vote to execute the inbox's nominee."""
    RETRACT = "retract"
    """**не казнить**: withdraws the voter's standing vote in that inbox."""


class LepraBallot(StrEnum):
    """The two ballots of a judge election precinct."""

    PRO = "pro"
    """**Он - Ганди!** ("he is Gandhi"): +1."""
    CON = "con"
    """**Он - Гитлер!** ("he is Hitler"): −1."""

    @property
    def weight(self) -> int:
        """+1 for a pro, −1 for a con."""
        return 1 if self is LepraBallot.PRO else -1


# The dashes a "Он - Ганди!" may be written with ("hyphen or dash alike"): hyphen-minus, hyphen,
# non-breaking hyphen, figure dash, en dash, em dash, horizontal bar, minus sign, small and full-width hyphen-minus.
LEPRA_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"
_LEPRA_EXECUTION_KEYWORDS = {"казнить": LepraKeyword.EXECUTE, "не казнить": LepraKeyword.RETRACT}
_LEPRA_BALLOT_RE = re.compile(r"он\s*[" + re.escape(LEPRA_DASHES) + r"]\s*(ганди|гитлер)")
_LEPRA_BALLOTS = {"ганди": LepraBallot.PRO, "гитлер": LepraBallot.CON}


def lepra_keyword_key(text: str) -> str:
    """The form a voting-inbox message is matched in: Unicode NFC (a combining diaeresis joins its
    letter), case folded, ё read as е, white space trimmed at both ends and runs of inner white space read as one
    space, then trailing punctuation (any Unicode punctuation character, with white space between) removed.
    Leading punctuation is kept: ``"!казнить"`` is not a keyword. ``"  Не   КАЗНИТЬ!!. "`` → ``"не казнить"``."""
    text = " ".join(unicodedata.normalize("NFC", text).casefold().replace("ё", "е").split())
    end = len(text)
    while end and (text[end - 1].isspace() or unicodedata.category(text[end - 1]).startswith("P")):
        end -= 1
    return text[:end]


def parse_lepra_execution(text: str) -> LepraKeyword | None:
    """The keyword a whole voting-inbox message is, or None when it is flood.

    The whole text, read by ``lepra_keyword_key``, must be exactly ``казнить`` (``EXECUTE``) or ``не казнить``
    (``RETRACT``): ``"Казнить!"``, ``"КАЗНИТЬ."``, ``"не казнить "`` are keywords; ``"казнить его"``,
    ``"казнить!!! он мафия"``, ``"!казнить"``, ``"казнит"`` are flood. Whether the keyword is allowed at that
    moment (a retraction needs a standing vote) is the tally's business. Never raises.
    """
    return _LEPRA_EXECUTION_KEYWORDS.get(lepra_keyword_key(text))


def parse_lepra_election(text: str) -> LepraBallot | None:
    """The ballot a whole precinct message is, or None when it is anything else (refused).

    Matched as a voting keyword is (``lepra_keyword_key``: case, ё = е, white space, trailing punctuation), then the
    text must be ``он``, any dash of ``LEPRA_DASHES`` with or without spaces around it, and ``ганди`` (``PRO``) or
    ``гитлер`` (``CON``): ``"Он - Ганди!"``, ``"он—гитлер"``, ``"ОН – ГАНДИ !!!"``, ``"Он − Гитлер."`` are ballots;
    ``"Он Ганди!"`` (no dash), ``"Он - Ганди! Голосуйте!"`` and ``"Она - Ганди!"`` are not. Never raises.
    """
    match = _LEPRA_BALLOT_RE.fullmatch(lepra_keyword_key(text))
    return _LEPRA_BALLOTS[match[1]] if match else None
