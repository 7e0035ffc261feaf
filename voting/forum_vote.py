"""Counting votes, as pure functions over plain dataclasses: no ORM, no clock, no I/O. This module holds the forum
day vote's rules as data, records, receipts and results; the forum day itself is in ``voting.forum_tally``.

Forum day votes
    ``ForumVoteRules`` is the day vote's rules as data (the END-hammer day by default, ``CLASSIC_FORUM_RULES`` for the
    plain-majority forum rule). ``ForumDay`` is the state of one game-thread day: each seat's standing vote and
    END mark, the living seats and who plays them. It takes the day's records in order (posts, removals and
    deaths, replacements), applies every command of a post through ``voting.parsing``, and decides when and how
    the day ends. ``tally_forum_day`` runs a whole day from its ordered records: a day's result is always
    re-derived from the messages, so it can be audited and replayed.

    ``seq`` is the caller's order key of a record (a message id, a forum post number): records must come in
    non-decreasing ``seq``; records of one post split into several messages share it. Time is not read here:
    the caller says when the deadline has come (``ForumDay.close_at_deadline``).

A ruleset's own tallies live in its package.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from voting.parsing import (
    ForumCommand,
)

# ----------------------------------------------------------------------------------------------------------------
# Forum day votes: the rules as data
# ----------------------------------------------------------------------------------------------------------------

FORUM_NO_LYNCH = "NO_LYNCH"
"""The vote target No Lynch, as it appears in counts. No seat may use this label."""


class ForumDeadlineOutcome(StrEnum):
    """What the deadline does when no hammer fell."""

    PLURALITY = "plurality"
    """The target with the most votes is eliminated (No Lynch winning: nobody); a tie eliminates nobody."""
    NOBODY = "nobody"
    """Nobody is eliminated."""
    EARLIEST_LEADER = "earliest_leader"
    """The target with the most votes; among tied targets, the one whose last counted vote came first (it reached
    the count first)."""


class ForumNoLynchThreshold(StrEnum):
    """Votes No Lynch needs to end the day."""

    SAME_AS_LYNCH = "same_as_lynch"
    """The majority, as for a lynch."""
    ONE_FEWER = "one_fewer"
    """One vote fewer than the majority, at least 1 (n/2 when n is even)."""


@dataclass(frozen=True)
class ForumVoteRules:
    """The rules of a forum day vote. The defaults are the END-hammer day (``END_HAMMER_RULES``).

    - ``majority_ends_day`` (default off): a majority on one target ends the day at once, END marks or not (the
      classic forum hammer).
    - ``end_hammer`` (default on): the day ends at once when a majority of the living are marked END
      (``##END``) and vote for the same target. Off: END marks are kept but end nothing.
    - ``deadline_outcome`` (default plurality, tie → nobody): see ``ForumDeadlineOutcome``.
    - ``no_lynch_allowed`` (default on) and ``no_lynch_threshold`` (default the majority).
    - ``self_votes_allowed`` (default on).

    The majority is ``forum_majority`` of the living, whichever rule applies it.
    """

    majority_ends_day: bool = False
    end_hammer: bool = True
    deadline_outcome: ForumDeadlineOutcome = ForumDeadlineOutcome.PLURALITY
    no_lynch_allowed: bool = True
    no_lynch_threshold: ForumNoLynchThreshold = ForumNoLynchThreshold.SAME_AS_LYNCH
    self_votes_allowed: bool = True

    def __post_init__(self):
        for name in ("majority_ends_day", "end_hammer", "no_lynch_allowed", "self_votes_allowed"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false")
        # Accept the enum values as strings too (rules read from JSON), and store the enum members.
        object.__setattr__(self, "deadline_outcome", ForumDeadlineOutcome(self.deadline_outcome))
        object.__setattr__(self, "no_lynch_threshold", ForumNoLynchThreshold(self.no_lynch_threshold))

    def as_dict(self) -> dict[str, bool | str]:
        """The rules as JSON-ready data: ``{"majority_ends_day": false, ..., "deadline_outcome": "plurality"}``."""
        return {
            "majority_ends_day": self.majority_ends_day,
            "end_hammer": self.end_hammer,
            "deadline_outcome": self.deadline_outcome.value,
            "no_lynch_allowed": self.no_lynch_allowed,
            "no_lynch_threshold": self.no_lynch_threshold.value,
            "self_votes_allowed": self.self_votes_allowed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ForumVoteRules:
        """Rules from data: an optional ``"preset"`` (a key of ``FORUM_RULE_PRESETS``, default ``"end_hammer"``) and any
        fields of ``as_dict`` overriding it. Raises ``ValueError`` naming an unknown preset, key or value."""
        values = dict(data)
        preset_name = values.pop("preset", "end_hammer")
        if preset_name not in FORUM_RULE_PRESETS:
            raise ValueError(f"unknown rules preset {preset_name!r}; known: {', '.join(sorted(FORUM_RULE_PRESETS))}")
        unknown = sorted(set(values) - set(FORUM_RULE_PRESETS[preset_name].as_dict()))
        if unknown:
            raise ValueError(f"unknown rules field(s): {', '.join(unknown)}")
        return cls(**{**FORUM_RULE_PRESETS[preset_name].as_dict(), **values})


END_HAMMER_RULES = ForumVoteRules()
"""The END-hammer day: a majority marked ``##END`` on one target ends it, else plurality at the deadline with a tie
eliminating nobody."""

CLASSIC_FORUM_RULES = ForumVoteRules(majority_ends_day=True, end_hammer=False,
                                     deadline_outcome=ForumDeadlineOutcome.EARLIEST_LEADER)
"""The classic forum rule (the mafiascum games of tests/data/real_games): a plain majority ends the day the moment
the deciding vote is posted, no END marks; No Lynch needs a majority too; self-votes count. [interp] At the
deadline the leader is eliminated, a tie going to whoever reached the count first (no replayed day reaches it)."""

FORUM_RULE_PRESETS: dict[str, ForumVoteRules] = {"end_hammer": END_HAMMER_RULES, "classic": CLASSIC_FORUM_RULES}


def forum_majority(living: int) -> int:
    """More than half of ``living`` players: ``floor(living / 2) + 1``. 4 of 8 is not a majority, 5 is.

    The one function behind both what a vote count shows and what ends the day. Raises ``ValueError`` for a
    negative number.
    """
    if living < 0:
        raise ValueError("the number of living players cannot be negative")
    return living // 2 + 1


def forum_threshold(target: str, living: int, rules: ForumVoteRules) -> int:
    """Votes ``target`` (a seat or ``FORUM_NO_LYNCH``) needs to end the day with ``living`` players: the majority, or
        for No Lynch under ``ForumNoLynchThreshold.ONE_FEWER`` one fewer, at least 1."""
    majority = forum_majority(living)
    if target == FORUM_NO_LYNCH and rules.no_lynch_threshold is ForumNoLynchThreshold.ONE_FEWER:
        return max(1, majority - 1)
    return majority


# ----------------------------------------------------------------------------------------------------------------
# Forum day votes: records, receipts and results
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ForumSeat:
    """A seat at the start of the day: its label, the account playing it, and extra names it answers to.

    A vote may name the seat by its label, by any account that has played it (a vote for a replaced player's
    old name is a vote for the seat) or by one of ``names``.
    """

    seat: str
    account: str
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class ForumPost:
    """A game-thread post by ``author`` (an account) with its text."""

    seq: int
    author: str
    text: str


class ForumRemovalCause(StrEnum):
    REMOVED = "removed"
    """The host removed the seat from the game (e.g. a penalty)."""
    KILLED = "killed"
    """The player died during the day (e.g. a day shot)."""


@dataclass(frozen=True)
class ForumRemoval:
    """A living seat leaves the game during the day."""

    seq: int
    seat: str
    cause: ForumRemovalCause = ForumRemovalCause.REMOVED


@dataclass(frozen=True)
class ForumReplacement:
    """A new account takes over a living seat: the seat keeps its vote, its END mark and the votes
    on it; ``names`` are extra names the seat answers to from now on."""

    seq: int
    seat: str
    account: str
    names: tuple[str, ...] = ()


ForumRecord = ForumPost | ForumRemoval | ForumReplacement


class ForumRefusal(StrEnum):
    """Why a command was refused. Each value is also the machine-readable reason in exports."""

    NOT_A_PLAYER = "not_a_player"
    """The author plays no seat in this game."""
    REPLACED = "replaced"
    """The author's seat has been taken over by a replacement."""
    NOT_LIVING = "not_living"
    """The author's seat is dead, imprisoned or removed."""
    DAY_OVER = "day_over"
    """The day has ended: later posts carry no votes."""
    MISSING_NAME = "missing_name"
    """``##VOTE`` without a name."""
    UNKNOWN_NAME = "unknown_name"
    """No living player matches the name."""
    AMBIGUOUS_NAME = "ambiguous_name"
    """Several living players match the name equally well; they are listed."""
    TARGET_NOT_LIVING = "target_not_living"
    """The name is exactly that of a seat that is no longer alive, and of no living one."""
    SELF_VOTE = "self_vote"
    """The host disabled self-votes."""
    NO_LYNCH_DISABLED = "no_lynch_disabled"
    """The rules do not allow No Lynch."""
    END_WITHOUT_VOTE = "end_without_vote"
    """``##END`` while not voting anyone."""
    NOT_VOTING = "not_voting"
    """``##UNVOTE`` without a vote to withdraw."""
    UNVOTE_OTHER = "unvote_other"
    """``##UNVOTE name`` naming someone the voter does not vote for: the vote stays (forum convention)."""
    NO_END_MARK = "no_end_mark"
    """``##UNEND`` without an END mark to clear."""


@dataclass(frozen=True)
class ForumReceipt:
    """What became of one command. ``refusal`` None means it was applied. ``seat`` is the author's seat (None
    when the author plays none); ``target`` is the vote's target for an applied ``##VOTE`` or the withdrawn one
    for an applied ``##UNVOTE``; ``candidates`` lists the seats of an ambiguous name; ``message`` is a
    sentence for the player or the host."""

    seq: int
    author: str
    seat: str | None
    command: ForumCommand
    refusal: ForumRefusal | None
    message: str
    target: str | None = None
    candidates: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        return self.refusal is None

    def as_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "author": self.author, "seat": self.seat, "command": self.command.written,
                "line": self.command.line, "reason": self.refusal.value if self.refusal else None,
                "message": self.message, "candidates": list(self.candidates)}


@dataclass(frozen=True)
class ForumVoidedVote:
    """A vote voided because ``removed`` left the game during the day: either a vote on ``removed``
    (its ``voter`` is told, and is not listed as a non-voter) or ``removed``'s own vote."""

    seq: int
    voter: str
    target: str
    removed: str
    cause: ForumRemovalCause

    def as_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "voter": self.voter, "target": self.target, "removed": self.removed,
                "cause": self.cause.value}


@dataclass(frozen=True)
class ForumCount:
    """A vote count: what a count post shows, and what the day's end is decided on.

    ``votes`` maps each target with votes (a seat or ``FORUM_NO_LYNCH``) to its voters in the order their votes
    were cast; targets come by most votes, then by who reached the count first. ``not_voting``: living seats with
    no vote, except those whose vote a death voided (``voided``). ``majority`` and
    ``no_lynch_threshold`` come from ``forum_threshold`` over ``len(living)``.
    """

    living: tuple[str, ...]
    majority: int
    no_lynch_threshold: int
    votes: Mapping[str, tuple[str, ...]]
    not_voting: tuple[str, ...]
    voided: tuple[str, ...]
    end_marked: tuple[str, ...]

    def threshold(self, target: str) -> int:
        """Votes ``target`` needs to end the day: the number shown next to it and the number that decides."""
        return self.no_lynch_threshold if target == FORUM_NO_LYNCH else self.majority

    def voters(self) -> set[str]:
        """Every seat with a vote in place."""
        return {voter for voters in self.votes.values() for voter in voters}

    def as_dict(self) -> dict[str, Any]:
        return {
            "living": list(self.living), "majority": self.majority, "no_lynch_threshold": self.no_lynch_threshold,
            "votes": [{"target": target, "count": len(voters), "needed": self.threshold(target),
                       "voters": list(voters)} for target, voters in self.votes.items()],
            "not_voting": list(self.not_voting), "voided": list(self.voided), "end_marked": list(self.end_marked),
        }


class ForumDayEndHow(StrEnum):
    MAJORITY = "majority"
    """A target reached its threshold with ``majority_ends_day`` on."""
    END_HAMMER = "end_hammer"
    """A majority marked END and voting for one target."""
    DEADLINE = "deadline"
    """The deadline came without a hammer."""
    CLOSE_PROCEEDINGS = "close_proceedings"
    """The Judge closed proceedings: the day ends now on the votes in place, as at a deadline."""


class ForumDayResult(StrEnum):
    LYNCH = "lynch"
    NO_LYNCH = "no_lynch"
    NOBODY = "nobody"
    """A deadline with a tie, no votes, or the ``nobody`` outcome."""


@dataclass(frozen=True)
class ForumDayEnd:
    """How the day ended. ``seq`` is the record whose command or event ended it (None at the deadline);
    ``trigger`` the seat whose command did (None for an event or the deadline); ``count`` the count at that
    moment, the triggering vote included; ``tied`` the targets sharing the most votes at the deadline (for the
    Judge's casting vote), else empty."""

    how: ForumDayEndHow
    result: ForumDayResult
    eliminated: str | None
    seq: int | None
    trigger: str | None
    count: ForumCount
    tied: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"how": self.how.value, "result": self.result.value, "eliminated": self.eliminated, "seq": self.seq,
                "trigger": self.trigger, "tied": list(self.tied)}


class ForumOffence(StrEnum):
    """How a living player broke the daily minimum: a vote in place at the end of the day, at least one vote cast
    and at least two posts."""

    NO_VOTE_AT_END = "no_vote_at_end"
    """No vote in place when the day ended (ending the day on an unvote is allowed but listed)."""
    NEVER_VOTED = "never_voted"
    FEWER_THAN_TWO_POSTS = "fewer_than_two_posts"


@dataclass(frozen=True)
class ForumOffender:
    """A living seat that broke the daily minimum, for the host (there is no automatic penalty)."""

    seat: str
    offences: tuple[ForumOffence, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "offences": [offence.value for offence in self.offences]}


@dataclass(frozen=True)
class ForumDayReport:
    """Everything a host needs about a day: the rules, the standing count (at the end once the day is over), how
    the day ended (None while open), every command's receipt, the voided votes and the seats that broke the daily
    minimum."""

    rules: ForumVoteRules
    count: ForumCount
    end: ForumDayEnd | None
    receipts: tuple[ForumReceipt, ...]
    voided: tuple[ForumVoidedVote, ...]
    offenders: tuple[ForumOffender, ...]

    @property
    def refused(self) -> tuple[ForumReceipt, ...]:
        return tuple(receipt for receipt in self.receipts if not receipt.accepted)
