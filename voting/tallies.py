"""Counting votes, as pure functions over plain dataclasses: no ORM, no clock, no I/O.

Forum day votes (RULES.md M-VOTE)
    ``ForumVoteRules`` is the day vote's rules as data (M21's M-VOTE by default, ``CLASSIC_FORUM_RULES`` for the
    plain-majority forum rule). ``ForumDay`` is the state of one game-thread day: each seat's standing vote and
    END mark, the living seats and who plays them. It takes the day's records in order (posts, removals and
    deaths, replacements), applies every command of a post through ``voting.parsing``, and decides when and how
    the day ends. ``tally_forum_day`` runs a whole day from its ordered records: a day's result is always
    re-derived from the messages, so it can be audited and replayed.

    ``seq`` is the caller's order key of a record (a message id, a forum post number): records must come in
    non-decreasing ``seq``; records of one post split into several messages share it. Time is not read here:
    the caller says when the deadline has come (``ForumDay.close_at_deadline``).

The Lepra execution tally (L-VOTE) belongs in this module too, in its own section with ``Lepra``-prefixed names;
the forum names below all start with ``Forum``/``forum_`` so both can live side by side.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from voting.parsing import (
    ForumCommand, ForumCommandKind, ForumMatchKind, parse_forum_post, resolve_forum_name,
)

# ----------------------------------------------------------------------------------------------------------------
# Forum day votes (M-VOTE): the rules as data
# ----------------------------------------------------------------------------------------------------------------

FORUM_NO_LYNCH = "NO_LYNCH"
"""The vote target No Lynch (M-VOTE-1), as it appears in counts. No seat may use this label."""


class ForumDeadlineOutcome(StrEnum):
    """What the deadline does when no hammer fell (M-VOTE-4)."""

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
    """The majority, as for a lynch (M-VOTE-8)."""
    ONE_FEWER = "one_fewer"
    """One vote fewer than the majority, at least 1 (n/2 when n is even)."""


@dataclass(frozen=True)
class ForumVoteRules:
    """The rules of a forum day vote. The defaults are M21's (RULES.md M-VOTE).

    - ``majority_ends_day`` (default off): a majority on one target ends the day at once, END marks or not (the
      classic forum hammer).
    - ``end_hammer`` (default on, M-VOTE-3): the day ends at once when a majority of the living are marked END
      (``##END``, M-VOTE-2) and vote for the same target. Off: END marks are kept but end nothing.
    - ``deadline_outcome`` (default plurality, tie → nobody, M-VOTE-4): see ``ForumDeadlineOutcome``.
    - ``no_lynch_allowed`` (default on, M-VOTE-1) and ``no_lynch_threshold`` (default the majority).
    - ``self_votes_allowed`` (default on, M-VOTE-7).

    The majority is ``forum_majority`` of the living (M-VOTE-8), whichever rule applies it.
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
        """Rules from data: an optional ``"preset"`` (a key of ``FORUM_RULE_PRESETS``, default ``"m21"``) and any
        fields of ``as_dict`` overriding it. Raises ``ValueError`` naming an unknown preset, key or value."""
        values = dict(data)
        preset_name = values.pop("preset", "m21")
        if preset_name not in FORUM_RULE_PRESETS:
            raise ValueError(f"unknown rules preset {preset_name!r}; known: {', '.join(sorted(FORUM_RULE_PRESETS))}")
        unknown = sorted(set(values) - set(FORUM_RULE_PRESETS[preset_name].as_dict()))
        if unknown:
            raise ValueError(f"unknown rules field(s): {', '.join(unknown)}")
        return cls(**{**FORUM_RULE_PRESETS[preset_name].as_dict(), **values})


M21_FORUM_RULES = ForumVoteRules()
"""M21's day vote (M-VOTE): END-hammer, plurality at the deadline with a tie eliminating nobody."""

CLASSIC_FORUM_RULES = ForumVoteRules(majority_ends_day=True, end_hammer=False,
                                     deadline_outcome=ForumDeadlineOutcome.EARLIEST_LEADER)
"""The classic forum rule (the mafiascum games of tests/data/real_games): a plain majority ends the day the moment
the deciding vote is posted, no END marks; No Lynch needs a majority too; self-votes count. [interp] At the
deadline the leader is eliminated, a tie going to whoever reached the count first (no replayed day reaches it)."""

FORUM_RULE_PRESETS: dict[str, ForumVoteRules] = {"m21": M21_FORUM_RULES, "classic": CLASSIC_FORUM_RULES}


def forum_majority(living: int) -> int:
    """More than half of ``living`` players: ``floor(living / 2) + 1`` (M-VOTE-8). 4 of 8 is not a majority, 5 is.

    The one function behind both what a vote count shows and what ends the day. Raises ``ValueError`` for a
    negative number.
    """
    if living < 0:
        raise ValueError("the number of living players cannot be negative")
    return living // 2 + 1


def forum_threshold(target: str, living: int, rules: ForumVoteRules) -> int:
    """Votes ``target`` (a seat or ``FORUM_NO_LYNCH``) needs to end the day with ``living`` players: the majority
    (M-VOTE-8), or for No Lynch under ``ForumNoLynchThreshold.ONE_FEWER`` one fewer, at least 1."""
    majority = forum_majority(living)
    if target == FORUM_NO_LYNCH and rules.no_lynch_threshold is ForumNoLynchThreshold.ONE_FEWER:
        return max(1, majority - 1)
    return majority


# ----------------------------------------------------------------------------------------------------------------
# Forum day votes (M-VOTE): records, receipts and results
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
    """A living seat leaves the game during the day (M-VOTE-9)."""

    seq: int
    seat: str
    cause: ForumRemovalCause = ForumRemovalCause.REMOVED


@dataclass(frozen=True)
class ForumReplacement:
    """A new account takes over a living seat (L-REPLACE-1): the seat keeps its vote, its END mark and the votes
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
    """The author's seat has been taken over by a replacement (L-REPLACE-1)."""
    NOT_LIVING = "not_living"
    """The author's seat is dead, imprisoned or removed (M-VOTE-6)."""
    DAY_OVER = "day_over"
    """The day has ended: later posts carry no votes (M-VOTE-7)."""
    MISSING_NAME = "missing_name"
    """``##VOTE`` without a name (M-VOTE-1)."""
    UNKNOWN_NAME = "unknown_name"
    """No living player matches the name (M-VOTE-1)."""
    AMBIGUOUS_NAME = "ambiguous_name"
    """Several living players match the name equally well; they are listed (M-VOTE-1)."""
    TARGET_NOT_LIVING = "target_not_living"
    """The name is exactly that of a seat that is no longer alive, and of no living one (M-VOTE-1)."""
    SELF_VOTE = "self_vote"
    """The host disabled self-votes (M-VOTE-7)."""
    NO_LYNCH_DISABLED = "no_lynch_disabled"
    """The rules do not allow No Lynch."""
    END_WITHOUT_VOTE = "end_without_vote"
    """``##END`` while not voting anyone (M-VOTE-7)."""
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
    for an applied ``##UNVOTE``; ``candidates`` lists the seats of an ambiguous name (M-VOTE-1); ``message`` is a
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
    """A vote voided because ``removed`` left the game during the day (M-VOTE-9): either a vote on ``removed``
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
    """A vote count (M-VOTE-8): what a count post shows, and what the day's end is decided on.

    ``votes`` maps each target with votes (a seat or ``FORUM_NO_LYNCH``) to its voters in the order their votes
    were cast; targets come by most votes, then by who reached the count first. ``not_voting``: living seats with
    no vote, except those whose vote a death voided (``voided``, M-VOTE-9). ``majority`` and
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
    """A majority marked END and voting for one target (M-VOTE-3)."""
    DEADLINE = "deadline"
    """The deadline came without a hammer (M-VOTE-4)."""


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
    Judge's casting vote, M-VOTE-4), else empty."""

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
    """What M-VOTE-5 asks of every living player each day."""

    NO_VOTE_AT_END = "no_vote_at_end"
    """No vote in place when the day ended (ending the day on an unvote is allowed but listed, M-VOTE-7)."""
    NEVER_VOTED = "never_voted"
    FEWER_THAN_TWO_POSTS = "fewer_than_two_posts"


@dataclass(frozen=True)
class ForumOffender:
    """A living seat that broke M-VOTE-5, for the host (there is no automatic penalty)."""

    seat: str
    offences: tuple[ForumOffence, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "offences": [offence.value for offence in self.offences]}


@dataclass(frozen=True)
class ForumDayReport:
    """Everything a host needs about a day: the rules, the standing count (at the end once the day is over), how
    the day ended (None while open), every command's receipt, the voided votes and the M-VOTE-5 offenders."""

    rules: ForumVoteRules
    count: ForumCount
    end: ForumDayEnd | None
    receipts: tuple[ForumReceipt, ...]
    voided: tuple[ForumVoidedVote, ...]
    offenders: tuple[ForumOffender, ...]

    @property
    def refused(self) -> tuple[ForumReceipt, ...]:
        return tuple(receipt for receipt in self.receipts if not receipt.accepted)


# ----------------------------------------------------------------------------------------------------------------
# Forum day votes (M-VOTE): the day
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class _StandingVote:
    target: str
    order: int  # position of the vote among all votes cast this day: who reached a count first


@dataclass
class _SeatState:
    account: str
    names: list[str]
    former_accounts: list[str] = field(default_factory=list)

    def all_names(self, seat: str) -> list[str]:
        return [seat, self.account, *self.former_accounts, *self.names]


class ForumDay:
    """One forum day's vote, from the opening post to the end (M-VOTE).

    Feed it the day's records in order with ``apply`` (or ``post`` / ``remove`` / ``replace``); read it with
    ``count``, ``end``, ``receipts``, ``voided``, ``offenders`` or ``report``. Every command is applied on its
    own, in the order written (M-VOTE-7), and the end of the day is checked after each applied command and each
    event, on the count that includes it (M-VOTE-8): a post that hammers ends the day at that command, and its
    later commands carry no votes, exactly as if they had been posted separately. Once the day is over the
    count is frozen; later commands are refused (``DAY_OVER``).

    [interp] M-VOTE-7's "the post's final state counts" is read as: the standing vote after a post is the result
    of its commands applied in order (``##VOTE A ##UNVOTE ##VOTE B`` leaves a vote on B). The hammer is checked
    at each command, as M-VOTE-8 says ("after the triggering vote is stored"), so that splitting a post into
    several messages, order kept, never changes the outcome.

    Raises ``ValueError`` for inconsistent input: duplicate seats or accounts, a seat labelled
    ``FORUM_NO_LYNCH``, records out of ``seq`` order, an event on a seat that is not alive, an account that
    already plays another seat.
    """

    def __init__(self, rules: ForumVoteRules, seats: Iterable[ForumSeat]):
        self.rules = rules
        self._seats: dict[str, _SeatState] = {}
        self._living: list[str] = []
        self._account_seat: dict[str, str] = {}
        self._former_account_seat: dict[str, str] = {}
        for seat in seats:
            if not seat.seat or seat.seat == FORUM_NO_LYNCH:
                raise ValueError(f"invalid seat label {seat.seat!r}")
            if seat.seat in self._seats:
                raise ValueError(f"seat {seat.seat} is listed twice")
            self._claim_account(seat.account, seat.seat)
            self._seats[seat.seat] = _SeatState(account=seat.account, names=list(seat.names))
            self._living.append(seat.seat)
        self._votes: dict[str, _StandingVote] = {}
        self._end_marks: set[str] = set()
        self._voided_voters: set[str] = set()  # voters whose vote a death voided and who have not voted since
        self._posts: Counter[str] = Counter()
        self._votes_cast: Counter[str] = Counter()
        self._order = 0
        self._last_seq: int | None = None
        self._receipts: list[ForumReceipt] = []
        self._voided: list[ForumVoidedVote] = []
        self.end: ForumDayEnd | None = None

    # -- feeding records ------------------------------------------------------------------------------------

    def apply(self, record: ForumRecord) -> None:
        """Apply one record of the day (a post, a removal or death, a replacement). See the class docstring."""
        match record:
            case ForumPost():
                self.post(record)
            case ForumRemoval():
                self.remove(record)
            case ForumReplacement():
                self.replace(record)
            case _:
                raise TypeError(f"not a forum day record: {record!r}")

    def post(self, post: ForumPost) -> tuple[ForumReceipt, ...]:
        """Apply every command of ``post`` in the order written (M-VOTE-7) and return their receipts.

        A post by a living seat's current account while the day is open counts towards M-VOTE-5's two posts,
        with or without commands. Commands by anyone else are refused: not a player, replaced, not living
        (M-VOTE-6); after the end, every command is refused (M-VOTE-7).
        """
        self._check_order(post.seq)
        seat, refusal = self._author_seat(post.author)
        if refusal is None and self.end is None:
            self._posts[seat] += 1
        receipts = []
        for command in parse_forum_post(post.text):
            if refusal is not None:
                receipt = self._refuse(post, seat, command, refusal, _AUTHOR_REFUSALS[refusal])
            else:
                receipt = self._apply_command(post, seat, command)
            self._receipts.append(receipt)
            receipts.append(receipt)
            if receipt.accepted:
                self._check_end(post.seq, trigger=seat)
        return tuple(receipts)

    def remove(self, removal: ForumRemoval) -> tuple[ForumVoidedVote, ...]:
        """Take a living seat out of the day (a host removal or a death, M-VOTE-9) and return the votes it voids.

        The votes on the seat are void and their voters are told (the returned notices; until they vote again
        they are not listed as non-voters); the seat's own vote and END mark go. The majority is recomputed on
        the remaining living, and the day ends if a target now has enough votes [interp: the end is checked
        after every change of the count, an event included]. After the end of the day only the living set
        changes: the count is frozen. Raises ``ValueError`` if the seat is not alive.
        """
        self._check_order(removal.seq)
        if removal.seat not in self._living:
            raise ValueError(f"seat {removal.seat} is not alive")
        self._living.remove(removal.seat)
        if self.end is not None:
            return ()
        notices = []
        for voter, vote in list(self._votes.items()):
            if voter == removal.seat or vote.target == removal.seat:
                notices.append(ForumVoidedVote(seq=removal.seq, voter=voter, target=vote.target,
                                               removed=removal.seat, cause=removal.cause))
                del self._votes[voter]
                if voter != removal.seat:
                    self._voided_voters.add(voter)
        self._end_marks.discard(removal.seat)
        self._voided_voters.discard(removal.seat)
        self._voided.extend(notices)
        self._check_end(removal.seq, trigger=None)
        return tuple(notices)

    def replace(self, replacement: ForumReplacement) -> None:
        """Hand a living seat to a new account (L-REPLACE-1): the seat keeps its vote, END mark and the votes on
        it; the old account can no longer vote for it (``REPLACED``) but its name still names the seat. Raises
        ``ValueError`` if the seat is not alive or the account already plays a seat."""
        self._check_order(replacement.seq)
        if replacement.seat not in self._living:
            raise ValueError(f"seat {replacement.seat} is not alive")
        state = self._seats[replacement.seat]
        self._claim_account(replacement.account, replacement.seat)
        del self._account_seat[state.account]
        self._former_account_seat[state.account] = replacement.seat
        state.former_accounts.append(state.account)
        state.account = replacement.account
        state.names.extend(replacement.names)

    def close_at_deadline(self) -> ForumDayEnd:
        """End the day at its deadline by ``rules.deadline_outcome`` (M-VOTE-4) and return how it ended; a day
        already ended by a hammer keeps that end. The caller decides that the deadline has come."""
        if self.end is not None:
            return self.end
        count = self.count()
        ranked = list(count.votes)
        top = len(count.votes[ranked[0]]) if ranked else 0
        tied = tuple(target for target in ranked if len(count.votes[target]) == top) if top else ()
        outcome = self.rules.deadline_outcome
        if outcome is ForumDeadlineOutcome.NOBODY or not tied:
            winner = None
        elif outcome is ForumDeadlineOutcome.PLURALITY:
            winner = tied[0] if len(tied) == 1 else None
        else:  # EARLIEST_LEADER: the count ranks tied targets by who reached the count first
            winner = tied[0]
        self.end = _day_end(ForumDayEndHow.DEADLINE, winner, seq=None, trigger=None, count=count,
                            tied=tied if len(tied) > 1 else ())
        return self.end

    # -- reading ---------------------------------------------------------------------------------------------

    @property
    def living(self) -> tuple[str, ...]:
        """The living seats now, in seating order."""
        return tuple(self._living)

    @property
    def receipts(self) -> tuple[ForumReceipt, ...]:
        return tuple(self._receipts)

    @property
    def voided(self) -> tuple[ForumVoidedVote, ...]:
        return tuple(self._voided)

    def count(self) -> ForumCount:
        """The standing count (M-VOTE-8); once the day is over, the count at its end."""
        if self.end is not None:
            return self.end.count
        return self._live_count()

    def offenders(self) -> tuple[ForumOffender, ...]:
        """The living seats that broke M-VOTE-5 so far (at the end of the day: for the host's list), in seating
        order: no vote in place (a voter whose vote a death voided is not listed, M-VOTE-9), no vote cast this
        day, fewer than two posts while the day was open."""
        count = self.count()
        voters = count.voters()
        offenders = []
        for seat in count.living:
            offences = []
            if seat not in voters and seat not in count.voided:
                offences.append(ForumOffence.NO_VOTE_AT_END)
            if self._votes_cast[seat] == 0:
                offences.append(ForumOffence.NEVER_VOTED)
            if self._posts[seat] < 2:
                offences.append(ForumOffence.FEWER_THAN_TWO_POSTS)
            if offences:
                offenders.append(ForumOffender(seat=seat, offences=tuple(offences)))
        return tuple(offenders)

    def report(self) -> ForumDayReport:
        return ForumDayReport(rules=self.rules, count=self.count(), end=self.end, receipts=self.receipts,
                              voided=self.voided, offenders=self.offenders())

    # -- commands --------------------------------------------------------------------------------------------

    def _apply_command(self, post: ForumPost, seat: str, command: ForumCommand) -> ForumReceipt:
        if self.end is not None:
            return self._refuse(post, seat, command, ForumRefusal.DAY_OVER, "The day is over: this carries no vote.")
        handler = {
            ForumCommandKind.VOTE: self._vote,
            ForumCommandKind.UNVOTE: self._unvote,
            ForumCommandKind.END: self._mark_end,
            ForumCommandKind.UNEND: self._clear_end,
        }[command.kind]
        return handler(post, seat, command)

    def _vote(self, post: ForumPost, seat: str, command: ForumCommand) -> ForumReceipt:
        """``##VOTE name``: resolve the name (M-VOTE-1) and replace the standing vote; the END mark stays."""
        target, refused = self._resolve_target(post, seat, command)
        if refused is not None:
            return refused
        if target == seat and not self.rules.self_votes_allowed:
            return self._refuse(post, seat, command, ForumRefusal.SELF_VOTE, "Self-votes are not allowed here.")
        if target == FORUM_NO_LYNCH and not self.rules.no_lynch_allowed:
            return self._refuse(post, seat, command, ForumRefusal.NO_LYNCH_DISABLED,
                                "No Lynch is not a valid vote in this game.")
        self._votes_cast[seat] += 1
        self._voided_voters.discard(seat)
        current = self._votes.get(seat)
        if current is not None and current.target == target:
            return self._accept(post, seat, command, f"{seat} already votes {target}.", target=target)
        self._order += 1
        self._votes[seat] = _StandingVote(target=target, order=self._order)
        return self._accept(post, seat, command, f"{seat} votes {target}.", target=target)

    def _resolve_target(self, post: ForumPost, seat: str,
                        command: ForumCommand) -> tuple[str | None, ForumReceipt | None]:
        if command.names_no_lynch:
            return FORUM_NO_LYNCH, None
        if not command.argument:
            return None, self._refuse(post, seat, command, ForumRefusal.MISSING_NAME,
                                      "Name a player (or No Lynch) after ##VOTE.")
        resolution = resolve_forum_name(command.argument, self._names(self._living))
        if resolution.how is not ForumMatchKind.EXACT:
            # The exact name of a seat that is gone is not a misspelling or abbreviation of a living one.
            gone = resolve_forum_name(command.argument, self._names(self._gone_seats()))
            if gone.how is ForumMatchKind.EXACT:
                return None, self._refuse(post, seat, command, ForumRefusal.TARGET_NOT_LIVING,
                                          f"{gone.seat} is no longer alive.")
        if resolution.resolved:
            return resolution.seat, None
        if resolution.ambiguous:
            listed = ", ".join(resolution.candidates)
            return None, self._refuse(post, seat, command, ForumRefusal.AMBIGUOUS_NAME,
                                      f"{command.argument!r} could be {listed}: write more of the name.",
                                      candidates=resolution.candidates)
        return None, self._refuse(post, seat, command, ForumRefusal.UNKNOWN_NAME,
                                  f"No living player matches {command.argument!r}.")

    def _unvote(self, post: ForumPost, seat: str, command: ForumCommand) -> ForumReceipt:
        """``##UNVOTE`` withdraws the standing vote; the END mark stays (M-VOTE-2). ``##UNVOTE name`` naming
        another player than the one voted for leaves the vote in place (forum convention); a name that resolves
        to nobody is read as plain text and the vote is withdrawn."""
        current = self._votes.get(seat)
        if current is None:
            return self._refuse(post, seat, command, ForumRefusal.NOT_VOTING, "There is no vote to withdraw.")
        if command.argument:
            named = (FORUM_NO_LYNCH if command.names_no_lynch
                     else resolve_forum_name(command.argument, self._names(self._living)).seat)
            if named is not None and named != current.target:
                return self._refuse(post, seat, command, ForumRefusal.UNVOTE_OTHER,
                                    f"{seat} votes {current.target}, not {named}: the vote stays.")
        del self._votes[seat]
        return self._accept(post, seat, command, f"{seat} withdraws the vote on {current.target}.",
                            target=current.target)

    def _mark_end(self, post: ForumPost, seat: str, command: ForumCommand) -> ForumReceipt:
        """``##END`` (M-VOTE-2): refused while not voting anyone (M-VOTE-7)."""
        if seat not in self._votes:
            return self._refuse(post, seat, command, ForumRefusal.END_WITHOUT_VOTE,
                                "##END needs a vote in place: vote first.")
        self._end_marks.add(seat)
        return self._accept(post, seat, command, f"{seat} wants the day to end.")

    def _clear_end(self, post: ForumPost, seat: str, command: ForumCommand) -> ForumReceipt:
        """``##UNEND`` clears the END mark (M-VOTE-2 [interp])."""
        if seat not in self._end_marks:
            return self._refuse(post, seat, command, ForumRefusal.NO_END_MARK, "There is no END mark to clear.")
        self._end_marks.discard(seat)
        return self._accept(post, seat, command, f"{seat} no longer wants the day to end.")

    # -- the end of the day ----------------------------------------------------------------------------------

    def _check_end(self, seq: int, trigger: str | None) -> None:
        """End the day if the count, recomputed with the change just applied, has a hammer (M-VOTE-3, M-VOTE-8).

        A majority hammer (``majority_ends_day``) is checked before an END-hammer. If two targets reach their
        thresholds at once (only possible when a removal lowers both), the one ranked first in the count wins.
        """
        if self.end is not None:
            return
        count = self._live_count()
        if self.rules.majority_ends_day:
            for target, voters in count.votes.items():
                if len(voters) >= count.threshold(target):
                    self.end = _day_end(ForumDayEndHow.MAJORITY, target, seq=seq, trigger=trigger, count=count)
                    return
        if self.rules.end_hammer:
            marked = set(count.end_marked)
            for target, voters in count.votes.items():
                if len(marked.intersection(voters)) >= count.threshold(target):
                    self.end = _day_end(ForumDayEndHow.END_HAMMER, target, seq=seq, trigger=trigger, count=count)
                    return

    def _live_count(self) -> ForumCount:
        living = len(self._living)
        by_target: dict[str, list[tuple[int, str]]] = {}
        for voter, vote in self._votes.items():
            by_target.setdefault(vote.target, []).append((vote.order, voter))
        ranked = sorted(by_target.items(), key=lambda item: (-len(item[1]), max(item[1])[0], item[0]))
        votes = {target: tuple(voter for _, voter in sorted(cast)) for target, cast in ranked}
        return ForumCount(
            living=tuple(self._living),
            majority=forum_majority(living),
            no_lynch_threshold=forum_threshold(FORUM_NO_LYNCH, living, self.rules),
            votes=votes,
            not_voting=tuple(s for s in self._living if s not in self._votes and s not in self._voided_voters),
            voided=tuple(s for s in self._living if s in self._voided_voters),
            end_marked=tuple(s for s in self._living if s in self._end_marks),
        )

    # -- helpers ---------------------------------------------------------------------------------------------

    def _claim_account(self, account: str, seat: str) -> None:
        if not account:
            raise ValueError(f"seat {seat} needs an account")
        if account in self._account_seat:
            raise ValueError(f"account {account} already plays seat {self._account_seat[account]}")
        self._account_seat[account] = seat
        self._former_account_seat.pop(account, None)

    def _check_order(self, seq: int) -> None:
        if self._last_seq is not None and seq < self._last_seq:
            raise ValueError(f"record {seq} comes after record {self._last_seq}: records must be in order")
        self._last_seq = seq

    def _author_seat(self, author: str) -> tuple[str | None, ForumRefusal | None]:
        if author in self._account_seat:
            seat = self._account_seat[author]
            return seat, None if seat in self._living else ForumRefusal.NOT_LIVING
        if author in self._former_account_seat:
            return self._former_account_seat[author], ForumRefusal.REPLACED
        return None, ForumRefusal.NOT_A_PLAYER

    def _gone_seats(self) -> list[str]:
        return [seat for seat in self._seats if seat not in self._living]

    def _names(self, seats: Sequence[str]) -> dict[str, list[str]]:
        return {seat: self._seats[seat].all_names(seat) for seat in seats}

    def _accept(self, post: ForumPost, seat: str, command: ForumCommand, message: str, *,
                target: str | None = None) -> ForumReceipt:
        return ForumReceipt(seq=post.seq, author=post.author, seat=seat, command=command, refusal=None,
                            message=message, target=target)

    def _refuse(self, post: ForumPost, seat: str | None, command: ForumCommand, refusal: ForumRefusal,
                message: str, *, candidates: tuple[str, ...] = ()) -> ForumReceipt:
        return ForumReceipt(seq=post.seq, author=post.author, seat=seat, command=command, refusal=refusal,
                            message=message, candidates=candidates)


_AUTHOR_REFUSALS = {
    ForumRefusal.NOT_A_PLAYER: "Only the players of this game vote here.",
    ForumRefusal.REPLACED: "This account has been replaced: its seat votes through the new account.",
    ForumRefusal.NOT_LIVING: "Dead, imprisoned or removed players cannot vote.",
}


def _day_end(how: ForumDayEndHow, target: str | None, *, seq: int | None, trigger: str | None, count: ForumCount,
             tied: tuple[str, ...] = ()) -> ForumDayEnd:
    if target is None:
        result, eliminated = ForumDayResult.NOBODY, None
    elif target == FORUM_NO_LYNCH:
        result, eliminated = ForumDayResult.NO_LYNCH, None
    else:
        result, eliminated = ForumDayResult.LYNCH, target
    return ForumDayEnd(how=how, result=result, eliminated=eliminated, seq=seq, trigger=trigger, count=count,
                       tied=tied)


def tally_forum_day(rules: ForumVoteRules, seats: Iterable[ForumSeat], records: Iterable[ForumRecord], *,
                    deadline_reached: bool = False) -> ForumDayReport:
    """Re-derive a whole forum day from its records in order (M-VOTE): the same records always give the same
    report. With ``deadline_reached`` a day still open after the last record is closed at its deadline
    (M-VOTE-4). Raises ``ValueError`` as ``ForumDay`` does."""
    day = ForumDay(rules, seats)
    for record in records:
        day.apply(record)
    if deadline_reached:
        day.close_at_deadline()
    return day.report()
