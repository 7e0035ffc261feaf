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

Lepra execution voting (RULES.md L-VOTE) and judge elections (L-JUDGE-4..6)
    ``tally_lepra_execution`` counts one city's voting inboxes from their messages (``LepraVoteMessage``: id,
    aware receive time, author, the nominee's inbox, text, proxy flag) and returns every nominee's counted
    voters, who changed their mind, the ranking with its L-VOTE-5 tie-break, the leader (or "awaiting a
    decision", L-VOTE-7), the tied leaders for the court (L-COURT-2) and a receipt for every message, refused
    ones with a reason (``LepraRefusal``). ``tally_lepra_election`` does the same for one city's precincts
    (L-JUDGE-4..6). Both are re-derived from the whole record every time; the caller passes the window
    (``opens_at``, ``closes_at``) and the members, never the clock. Times are aware datetimes, reported in UTC.

The forum names all start with ``Forum``/``forum_`` and the Lepra ones with ``Lepra``/``lepra_``, so both live
side by side.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from voting.parsing import (
    ForumCommand, ForumCommandKind, ForumMatchKind, LepraBallot, LepraKeyword, parse_forum_post,
    parse_lepra_election, parse_lepra_execution, resolve_forum_name,
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
    CLOSE_PROCEEDINGS = "close_proceedings"
    """The Judge closed proceedings: the day ends now on the votes in place, as at a deadline (M-ROLE judge)."""


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
        return self._close(ForumDayEndHow.DEADLINE, seq=None, trigger=None)

    def close_proceedings(self, seq: int, judge: str) -> ForumDayEnd:
        """End the day now at record ``seq`` on the votes in place, resolved as at the deadline (M-VOTE-4; a tie
        imprisons nobody): the Judge's *close proceedings* (M-ROLE judge). The caller checks the Judge's right
        (``majority_has_voted``). Raises ``ValueError`` when the day is already over or ``seq`` is out of order."""
        self._check_order(seq)
        if self.end is not None:
            raise ValueError("the day is already over")
        return self._close(ForumDayEndHow.CLOSE_PROCEEDINGS, seq=seq, trigger=judge)

    def majority_has_voted(self) -> bool:
        """True while the day is open and a majority of the living have a vote in place (No Lynch counts, an
        unvote does not): when the Judge may close proceedings (M-ROLE judge, M-VOTE-8)."""
        if self.end is not None:
            return False
        count = self._live_count()
        return len(count.voters()) >= count.majority

    def _close(self, how: ForumDayEndHow, *, seq: int | None, trigger: str | None) -> ForumDayEnd:
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
        self.end = _day_end(how, winner, seq=seq, trigger=trigger, count=count, tied=tied if len(tied) > 1 else ())
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


# ----------------------------------------------------------------------------------------------------------------
# Lepra execution voting (L-VOTE) and judge elections (L-JUDGE-4..6): messages and receipts
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LepraVoteMessage:
    """One message posted in a Lepra voting inbox or election precinct, as the record keeps it.

    ``seq`` is the message id (unique within one tally); ``at`` the server's receive time, an aware datetime
    (microseconds count, L-VOTE-8); ``author`` the poster (a resident or a spirit); ``inbox`` the nominee whose
    voting inbox it was posted in (for an election: the candidate whose precinct); ``text`` the whole message.
    ``proxy`` marks a vote cast by the site for ``author`` (L-NOM-6, L-JUDGE-6): it is timed at the opening,
    whatever ``at`` says.
    """

    seq: int
    at: datetime
    author: str
    inbox: str
    text: str
    proxy: bool = False


class LepraRefusal(StrEnum):
    """Why a message was refused; each value is the machine-readable reason of exports. The player sees the
    receipt's ``message``."""

    UNKNOWN_INBOX = "unknown_inbox"
    """No voting inbox (precinct) of this tally belongs to that nominee (candidate)."""
    NOT_A_MEMBER = "not_a_member"
    """The author is not among the voters (living residents and spirits of the city, L-VOTE-1, L-SPIRIT-2)."""
    NOT_OPEN_YET = "not_open_yet"
    """Received before the opening (L-VOTE-8: opens_at ≤ t)."""
    CLOSED = "closed"
    """Received at or after the closing (L-VOTE-8: t < closes_at)."""
    FLOOD = "flood"
    """Not a keyword (L-VOTE-3), including a nominee's second free text in their own inbox."""
    RETRACTION_WITHOUT_VOTE = "retraction_without_vote"
    """**не казнить** without a standing vote of that voter in that inbox (L-VOTE-2)."""
    ALREADY_VOTING = "already_voting"
    """**казнить** while the voter's vote already stands there: counts nothing, moves no tie-break (L-VOTE-2)."""
    PROXY_NOT_A_VOTE = "proxy_not_a_vote"
    """A proxy whose text is not **казнить** (L-NOM-6 proxies only vote "execute") or, in an election, not a
    ballot."""
    NOT_A_BALLOT = "not_a_ballot"
    """A precinct message that is not **Он - Ганди!** / **Он - Гитлер!** (L-JUDGE-4: no campaigning inside)."""
    ALREADY_VOTED = "already_voted"
    """A second ballot of a voter in one precinct: it cannot be changed or withdrawn (L-JUDGE-4)."""


class LepraAccepted(StrEnum):
    """What an accepted message did."""

    VOTE = "vote"
    """A **казнить** that now stands (L-VOTE-2)."""
    RETRACTION = "retraction"
    """A **не казнить** that withdrew a standing vote (L-VOTE-2)."""
    LAST_WORD = "last_word"
    """The nominee's one free-text message in their own inbox (L-VOTE-3 [interp: one])."""
    PRO = "pro"
    """An election ballot **Он - Ганди!** (+1, L-JUDGE-4)."""
    CON = "con"
    """An election ballot **Он - Гитлер!** (−1, L-JUDGE-4)."""


@dataclass(frozen=True)
class LepraReceipt:
    """What became of one message. Exactly one of ``accepted`` and ``refusal`` is set. ``at`` is the time the
    message is counted at: its receive time, or the opening for a proxy (L-NOM-6). ``message`` is a sentence for
    the player (refusals) or the log (accepted)."""

    seq: int
    at: datetime
    author: str
    inbox: str
    proxy: bool
    accepted: LepraAccepted | None
    refusal: LepraRefusal | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        """``{"seq", "at", "author", "inbox", "proxy", "reason", "message"}`` (``at`` in UTC, ISO 8601); ``reason``
        is the refusal's value, or None for an accepted message."""
        return {"seq": self.seq, "at": lepra_time(self.at), "author": self.author, "inbox": self.inbox,
                "proxy": self.proxy, "reason": self.refusal.value if self.refusal else None,
                "message": self.message}


def lepra_time(moment: datetime | None) -> str | None:
    """An aware datetime as ISO 8601 in UTC, microseconds kept when present (``"2026-03-02T19:00:00+00:00"``)."""
    return None if moment is None else moment.astimezone(UTC).isoformat()


def _lepra_check_window(opens_at: datetime, closes_at: datetime, messages: Sequence[LepraVoteMessage]) -> None:
    for name, moment in (("opens_at", opens_at), ("closes_at", closes_at)):
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError(f"{name} must be an aware datetime")
    if not opens_at < closes_at:
        raise ValueError("opens_at must come before closes_at")
    seen: set[int] = set()
    for message in messages:
        if message.at.tzinfo is None or message.at.utcoffset() is None:
            raise ValueError(f"message {message.seq}: at must be an aware datetime")
        if message.seq in seen:
            raise ValueError(f"message id {message.seq} appears twice")
        seen.add(message.seq)


def _lepra_unique(names: Iterable[str], what: str) -> tuple[str, ...]:
    names = tuple(names)
    duplicates = sorted(name for name, n in Counter(names).items() if n > 1)
    if duplicates:
        raise ValueError(f"{what} listed twice: {', '.join(duplicates)}")
    return names


def lepra_ordered(opens_at: datetime, messages: Iterable[LepraVoteMessage]
                  ) -> list[tuple[datetime, LepraVoteMessage]]:
    """The messages in the order they are counted (L-VOTE-8): by counted time, then by ``seq``. The counted time
    is ``at``, or ``opens_at`` for a proxy (L-NOM-6, L-VOTE-5, L-JUDGE-6). Returns ``(counted time, message)``."""
    timed = [(opens_at if message.proxy else message.at, message) for message in messages]
    return sorted(timed, key=lambda item: (item[0], item[1].seq))


def _lepra_gate(at: datetime, message: LepraVoteMessage, opens_at: datetime, closes_at: datetime,
                inboxes: Collection[str], voters: Collection[str], *, may_post: bool, what: str
                ) -> tuple[LepraRefusal, str] | None:
    """The checks every message passes before its text is read, in this order: the inbox exists, the author is a
    member (``may_post`` lets a nominee post their last word without being a voter), the time is inside
    ``opens_at ≤ t < closes_at`` (L-VOTE-8)."""
    if message.inbox not in inboxes:
        return LepraRefusal.UNKNOWN_INBOX, f"There is no {what} for {message.inbox} here."
    if message.author not in voters and not may_post:
        return LepraRefusal.NOT_A_MEMBER, f"{message.author} has no vote here."
    if at < opens_at:
        return LepraRefusal.NOT_OPEN_YET, f"Voting opens at {lepra_time(opens_at)}: this message came too early."
    if at >= closes_at:
        return LepraRefusal.CLOSED, f"Voting closed at {lepra_time(closes_at)}: this message came too late."
    return None


# ----------------------------------------------------------------------------------------------------------------
# Lepra execution voting (L-VOTE): the tally
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LepraNomineeTally:
    """One voting inbox at the close (L-VOTE-4).

    - ``voters``: the counted voters, whose latest accepted keyword in this inbox is **казнить**, in the order of
      their standing votes (counted time, then ``seq``). ``count == len(voters)``.
    - ``changed_mind``: "who changed their mind (voted, then retracted)": the voters whose latest accepted keyword
      here is **не казнить** (they voted at least once, and their vote does not stand at the end), in the order
      of that last retraction. Disjoint from ``voters``.
    - ``revoted``: the counted voters who retracted at least once before voting again (their standing vote is
      the **казнить** after their last retraction), in ``voters`` order. A subset of ``voters``.
    - ``vote_times``: each counted voter's standing **казнить** time (aware, UTC): a repeated казнить refused as
      ``ALREADY_VOTING`` never moves it; a proxy's is the opening.
    - ``latest_vote_at``: the latest of ``vote_times`` (None without votes): the L-VOTE-5 tie-break.
    - ``last_word_seq``: the id of the nominee's accepted last word (L-VOTE-3), or None.
    - ``void``: the nominee died during voting (L-VOTE-9): these votes are void, the nominee is out of the
      ranking; ``voters`` lists those whose votes were voided (they are told).
    """

    nominee: str
    voters: tuple[str, ...]
    changed_mind: tuple[str, ...]
    revoted: tuple[str, ...]
    vote_times: Mapping[str, datetime]
    latest_vote_at: datetime | None
    last_word_seq: int | None
    void: bool
    #: ``seq`` of the message of the latest counted vote (None without votes): among equal ``latest_vote_at``
    #: the earlier message reached the count first (L-VOTE-5: message order).
    latest_vote_seq: int | None = None

    @property
    def count(self) -> int:
        return len(self.voters)

    def as_dict(self) -> dict[str, Any]:
        return {"nominee": self.nominee, "count": self.count, "voters": list(self.voters),
                "changed_mind": list(self.changed_mind), "revoted": list(self.revoted),
                "latest_vote_at": lepra_time(self.latest_vote_at), "last_word_seq": self.last_word_seq,
                "void": self.void}


@dataclass(frozen=True)
class LepraExecutionResult:
    """The result of one city's execution voting (L-VOTE-4, L-VOTE-5), for the Tribune, the court and the pages.

    - ``nominees``: every nominee's ``LepraNomineeTally``, in the order the nominees were given.
    - ``ranking``: the nominees that are not void, by most counted votes, then EARLIER ``latest_vote_at`` (they
      reached the count first, L-VOTE-5); equal latest times (to the microsecond, e.g. two nominees carried by
      proxies alone, all counted at the opening) by the order of those latest messages (``latest_vote_seq``);
      nominees without votes last; then by name, which only keeps the ranking deterministic.
    - ``leader``: ``ranking[0]`` if it has at least one vote, else None: nobody voted at all, the city is
      "awaiting a decision" by the Procurator (L-VOTE-7, ``awaiting_decision``).
    - ``tied_leaders``: every nominee sharing the leader's count (the leader first, in ranking order) when there
      are two or more of them, else empty: the court chooses among them (L-COURT-2 names 2 or 3; a larger tie is
      listed all the same).
    - ``tie_unresolved``: another nominee has the leader's count and the same latest vote (time and message):
      never with votes, as message ids are unique; kept for the pages.
    - ``receipts``: one per message, in counting order; ``refused`` those refused.
    """

    opens_at: datetime
    closes_at: datetime
    nominees: tuple[LepraNomineeTally, ...]
    ranking: tuple[str, ...]
    leader: str | None
    tied_leaders: tuple[str, ...]
    tie_unresolved: bool
    receipts: tuple[LepraReceipt, ...]

    @property
    def awaiting_decision(self) -> bool:
        """No votes at all (or no nominee): the Procurator names the executed (L-VOTE-7)."""
        return self.leader is None

    @property
    def refused(self) -> tuple[LepraReceipt, ...]:
        return tuple(receipt for receipt in self.receipts if receipt.refusal is not None)

    def tally(self, nominee: str) -> LepraNomineeTally:
        """The tally of one nominee; ``KeyError`` if they are not a nominee."""
        for tally in self.nominees:
            if tally.nominee == nominee:
                return tally
        raise KeyError(nominee)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"opens_at", "closes_at", "nominees": [LepraNomineeTally.as_dict()...], "ranking",
        "leader", "tied_leaders", "tie_unresolved", "awaiting_decision", "refused": [LepraReceipt.as_dict()...]}``."""
        return {"opens_at": lepra_time(self.opens_at), "closes_at": lepra_time(self.closes_at),
                "nominees": [tally.as_dict() for tally in self.nominees], "ranking": list(self.ranking),
                "leader": self.leader, "tied_leaders": list(self.tied_leaders),
                "tie_unresolved": self.tie_unresolved, "awaiting_decision": self.awaiting_decision,
                "refused": [receipt.as_dict() for receipt in self.refused]}


@dataclass
class _LepraInboxVoter:
    standing_at: datetime | None = None  # the counted time of the standing казнить; None: no vote stands
    standing_key: tuple[datetime, int] | None = None
    retracted: bool = False  # ever retracted here
    last_retraction_key: tuple[datetime, int] | None = None


def tally_lepra_execution(opens_at: datetime, closes_at: datetime, voters: Iterable[str],
                          nominees: Iterable[str], messages: Iterable[LepraVoteMessage], *,
                          void_inboxes: Collection[str] = frozenset()) -> LepraExecutionResult:
    """Count one city's execution voting from its messages (L-VOTE): the same messages, in any input order, always
    give the same result.

    Needs: ``opens_at`` < ``closes_at``, aware datetimes; ``voters`` the members with a vote (living residents
    and that day's spirits, L-VOTE-1, L-SPIRIT-2; nominees are voters too); ``nominees`` the voting inboxes
    (unique); ``messages`` with unique ``seq`` and aware ``at``; ``void_inboxes`` the nominees who died during
    voting (L-VOTE-9), a subset of ``nominees``. Raises ``ValueError`` otherwise.

    Messages are taken in ``lepra_ordered`` order (counted time, then ``seq``; a proxy counts at the opening,
    L-NOM-6). Each is checked, first failure wins: the inbox exists (``UNKNOWN_INBOX``); the author is a voter,
    or the nominee in their own inbox (``NOT_A_MEMBER``); ``opens_at ≤ t < closes_at`` (``NOT_OPEN_YET``,
    ``CLOSED``, L-VOTE-8); then the text (``voting.parsing.parse_lepra_execution``):

    - **казнить** by a voter without a standing vote here: the vote stands from that time; with one standing:
      ``ALREADY_VOTING`` (counts nothing, the standing vote keeps its time, L-VOTE-2);
    - **не казнить** with a standing vote: withdrawn; without: ``RETRACTION_WITHOUT_VOTE`` (L-VOTE-2);
    - other text: the nominee's first free text in their own inbox is their last word, accepted; anything else
      is ``FLOOD`` (L-VOTE-3 [interp: one]), the nominee's second free text included;
    - a proxy must be **казнить** (``PROXY_NOT_A_VOTE``, L-NOM-6).

    The votes of a void inbox are counted as usual and reported, but the nominee is out of the ranking
    (L-VOTE-9). See ``LepraExecutionResult`` for the ranking and the leader (L-VOTE-5, L-VOTE-7, L-COURT-2).
    """
    messages = tuple(messages)
    _lepra_check_window(opens_at, closes_at, messages)
    voters = frozenset(voters)
    nominees = _lepra_unique(nominees, "nominee")
    void = frozenset(void_inboxes)
    if not void <= set(nominees):
        raise ValueError(f"void inboxes that are not nominees: {', '.join(sorted(void - set(nominees)))}")
    state: dict[str, dict[str, _LepraInboxVoter]] = {nominee: {} for nominee in nominees}
    last_words: dict[str, int] = {}
    receipts = []
    for at, message in lepra_ordered(opens_at, messages):
        accepted, refusal, text = _lepra_execution_step(at, message, opens_at, closes_at, voters, state, last_words)
        receipts.append(LepraReceipt(seq=message.seq, at=at, author=message.author, inbox=message.inbox,
                                     proxy=message.proxy, accepted=accepted, refusal=refusal, message=text))
    tallies = tuple(_lepra_nominee_tally(nominee, state[nominee], last_words.get(nominee), nominee in void)
                    for nominee in nominees)
    ranked = sorted((tally for tally in tallies if not tally.void), key=_lepra_rank_key)
    ranking = tuple(tally.nominee for tally in ranked)
    leader = ranked[0] if ranked and ranked[0].count else None
    tied = tuple(t.nominee for t in ranked if leader and t.count == leader.count)
    return LepraExecutionResult(
        opens_at=opens_at, closes_at=closes_at, nominees=tallies, ranking=ranking,
        leader=leader.nominee if leader else None, tied_leaders=tied if len(tied) > 1 else (),
        tie_unresolved=bool(leader) and any((t.latest_vote_at, t.latest_vote_seq)
                                            == (leader.latest_vote_at, leader.latest_vote_seq)
                                            for t in ranked[1:] if t.count == leader.count),
        receipts=tuple(receipts))


def _lepra_rank_key(tally: LepraNomineeTally) -> tuple:
    # Most votes first; among equal counts the EARLIER latest counted vote (L-VOTE-5), equal times by the order of
    # the messages (``seq``: proxies counted at the opening share its time); no votes last; then name.
    return (-tally.count, tally.latest_vote_at is None, tally.latest_vote_at or datetime.min.replace(tzinfo=UTC),
            tally.latest_vote_seq or 0, tally.nominee)


def _lepra_execution_step(at: datetime, message: LepraVoteMessage, opens_at: datetime, closes_at: datetime,
                          voters: frozenset[str], state: dict[str, dict[str, _LepraInboxVoter]],
                          last_words: dict[str, int]) -> tuple[LepraAccepted | None, LepraRefusal | None, str]:
    own_inbox = message.author == message.inbox and not message.proxy
    gate = _lepra_gate(at, message, opens_at, closes_at, state, voters, may_post=own_inbox,
                       what="voting inbox")
    if gate is not None:
        return None, *gate
    keyword = parse_lepra_execution(message.text)
    if message.proxy and keyword is not LepraKeyword.EXECUTE:
        return None, LepraRefusal.PROXY_NOT_A_VOTE, "A proxy vote can only be «казнить»."
    if keyword is None:
        if own_inbox and message.inbox not in last_words:
            last_words[message.inbox] = message.seq
            return LepraAccepted.LAST_WORD, None, f"The last word of {message.inbox}."
        if own_inbox:
            return None, LepraRefusal.FLOOD, ("You have already said your last word: only «казнить» or "
                                              "«не казнить» can be posted here now.")
        return None, LepraRefusal.FLOOD, "Only «казнить» or «не казнить» can be posted here."
    if message.author not in voters:  # a nominee who is not a voter: a last word, but no keyword
        return None, LepraRefusal.NOT_A_MEMBER, f"{message.author} has no vote here."
    voter = state[message.inbox].setdefault(message.author, _LepraInboxVoter())
    if keyword is LepraKeyword.EXECUTE:
        if voter.standing_at is not None:
            return None, LepraRefusal.ALREADY_VOTING, "You already vote here: this vote does not count again."
        voter.standing_at, voter.standing_key = at, (at, message.seq)
        return LepraAccepted.VOTE, None, f"{message.author} votes to execute {message.inbox}."
    if voter.standing_at is None:
        return None, LepraRefusal.RETRACTION_WITHOUT_VOTE, "You have no vote here to retract."
    voter.standing_at = voter.standing_key = None
    voter.retracted, voter.last_retraction_key = True, (at, message.seq)
    return LepraAccepted.RETRACTION, None, f"{message.author} retracts the vote on {message.inbox}."


def _lepra_nominee_tally(nominee: str, inbox: dict[str, _LepraInboxVoter], last_word: int | None,
                         void: bool) -> LepraNomineeTally:
    standing = sorted((v.standing_key, name) for name, v in inbox.items() if v.standing_key is not None)
    counted = tuple(name for _, name in standing)
    times = {name: key[0] for key, name in standing}
    latest = max((key for key, _name in standing), default=None)
    changed = sorted((v.last_retraction_key, name) for name, v in inbox.items()
                     if v.standing_key is None and v.retracted)
    return LepraNomineeTally(
        nominee=nominee, voters=counted, changed_mind=tuple(name for _, name in changed),
        revoted=tuple(name for name in counted if inbox[name].retracted), vote_times=times,
        latest_vote_at=max(times.values()) if times else None, last_word_seq=last_word, void=void,
        latest_vote_seq=latest[1] if latest is not None else None)


# ----------------------------------------------------------------------------------------------------------------
# Lepra judge elections (L-JUDGE-4..6): the tally
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LepraCandidateTally:
    """One precinct at the close (L-JUDGE-4, L-JUDGE-5).

    ``pros`` / ``cons``: the voters whose one accepted ballot is **Он - Ганди!** / **Он - Гитлер!**, in counting
    order. ``score = len(pros) - len(cons)``. ``latest_pro_at``: the counted time of the latest pro ballot (a
    proxy's is the opening), None without pros; a con ballot never moves it.
    """

    candidate: str
    pros: tuple[str, ...]
    cons: tuple[str, ...]
    latest_pro_at: datetime | None

    @property
    def score(self) -> int:
        return len(self.pros) - len(self.cons)

    @property
    def eligible(self) -> bool:
        """May win (L-JUDGE-5 [interp]): pros ≥ cons, and at least one pro."""
        return bool(self.pros) and len(self.pros) >= len(self.cons)

    def as_dict(self) -> dict[str, Any]:
        return {"candidate": self.candidate, "pros": len(self.pros), "cons": len(self.cons), "score": self.score,
                "pro_voters": list(self.pros), "con_voters": list(self.cons),
                "latest_pro_at": lepra_time(self.latest_pro_at)}


@dataclass(frozen=True)
class LepraElectionResult:
    """The result of one city's judge election (L-JUDGE-5).

    - ``candidates``: every ``LepraCandidateTally``, in the order the candidates were given.
    - ``ranking``: by highest score, then EARLIER ``latest_pro_at`` (candidates without pros after those with),
      then by name; the name decides only a full tie (same score, same latest pro time to the microsecond) and only
      for determinism: ``tie_unresolved`` says when it decided the winner.
    - ``winner``: ``ranking[0]`` if it is ``eligible`` (pros ≥ cons, L-JUDGE-5; at least one pro [interp]), else
      None: the election failed and a new one is scheduled (``failed``).
    - ``receipts``: one per message, in counting order; ``refused`` those refused.
    """

    opens_at: datetime
    closes_at: datetime
    candidates: tuple[LepraCandidateTally, ...]
    ranking: tuple[str, ...]
    winner: str | None
    tie_unresolved: bool
    receipts: tuple[LepraReceipt, ...]

    @property
    def failed(self) -> bool:
        return self.winner is None

    @property
    def refused(self) -> tuple[LepraReceipt, ...]:
        return tuple(receipt for receipt in self.receipts if receipt.refusal is not None)

    def tally(self, candidate: str) -> LepraCandidateTally:
        """The tally of one candidate; ``KeyError`` if they are not a candidate."""
        for tally in self.candidates:
            if tally.candidate == candidate:
                return tally
        raise KeyError(candidate)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"opens_at", "closes_at", "candidates": [LepraCandidateTally.as_dict()...], "ranking",
        "winner", "failed", "tie_unresolved", "refused": [LepraReceipt.as_dict()...]}``."""
        return {"opens_at": lepra_time(self.opens_at), "closes_at": lepra_time(self.closes_at),
                "candidates": [tally.as_dict() for tally in self.candidates], "ranking": list(self.ranking),
                "winner": self.winner, "failed": self.failed, "tie_unresolved": self.tie_unresolved,
                "refused": [receipt.as_dict() for receipt in self.refused]}


def tally_lepra_election(opens_at: datetime, closes_at: datetime, voters: Iterable[str],
                         candidates: Iterable[str], messages: Iterable[LepraVoteMessage]) -> LepraElectionResult:
    """Count one city's judge election from its precinct messages (L-JUDGE-4..6): the same messages, in any input
    order, always give the same result.

    Needs: ``opens_at`` < ``closes_at``, aware datetimes; ``voters`` the precinct members (the city's living
    residents); ``candidates`` the precincts (unique); ``messages`` with unique ``seq`` and aware ``at``, each
    ``inbox`` naming a candidate's precinct. Raises ``ValueError`` otherwise.

    Messages are taken in ``lepra_ordered`` order (a proxy counts at the opening, L-JUDGE-6). Each is checked,
    first failure wins: the precinct exists (``UNKNOWN_INBOX``), the author is a voter (``NOT_A_MEMBER``),
    ``opens_at ≤ t < closes_at`` (``NOT_OPEN_YET``, ``CLOSED``, as L-VOTE-8); the text is a ballot
    (``voting.parsing.parse_lepra_election``), else ``NOT_A_BALLOT`` (``PROXY_NOT_A_VOTE`` for a proxy); the
    voter has no ballot in this precinct yet, else ``ALREADY_VOTED``: one ballot per voter per precinct, never
    changed or withdrawn (L-JUDGE-4). See ``LepraElectionResult`` for the winner (L-JUDGE-5).
    """
    messages = tuple(messages)
    _lepra_check_window(opens_at, closes_at, messages)
    voters = frozenset(voters)
    names = _lepra_unique(candidates, "candidate")
    ballots: dict[str, dict[str, tuple[LepraBallot, datetime]]] = {name: {} for name in names}
    receipts = []
    for at, message in lepra_ordered(opens_at, messages):
        gate = _lepra_gate(at, message, opens_at, closes_at, ballots, voters, may_post=False, what="precinct")
        ballot = parse_lepra_election(message.text)
        if gate is not None:
            accepted, (refusal, text) = None, gate
        elif ballot is None:
            accepted, refusal = None, LepraRefusal.PROXY_NOT_A_VOTE if message.proxy else LepraRefusal.NOT_A_BALLOT
            text = "Only «Он - Ганди!» or «Он - Гитлер!» can be posted in a precinct."
        elif message.author in ballots[message.inbox]:
            accepted, refusal = None, LepraRefusal.ALREADY_VOTED
            text = "You have already voted in this precinct: a ballot cannot be changed or withdrawn."
        else:
            ballots[message.inbox][message.author] = (ballot, at)
            accepted, refusal = LepraAccepted(ballot.value), None
            text = f"{message.author} votes {'for' if ballot is LepraBallot.PRO else 'against'} {message.inbox}."
        receipts.append(LepraReceipt(seq=message.seq, at=at, author=message.author, inbox=message.inbox,
                                     proxy=message.proxy, accepted=accepted, refusal=refusal, message=text))
    tallies = []
    for name in names:
        cast = ballots[name]  # dicts keep insertion order: the counting order
        pro_times = [at for ballot, at in cast.values() if ballot is LepraBallot.PRO]
        tallies.append(LepraCandidateTally(
            candidate=name, pros=tuple(voter for voter, (ballot, _) in cast.items() if ballot is LepraBallot.PRO),
            cons=tuple(voter for voter, (ballot, _) in cast.items() if ballot is LepraBallot.CON),
            latest_pro_at=max(pro_times) if pro_times else None))
    ranked = sorted(tallies, key=lambda t: (-t.score, t.latest_pro_at is None,
                                            t.latest_pro_at or datetime.min.replace(tzinfo=UTC), t.candidate))
    top = ranked[0] if ranked and ranked[0].eligible else None
    return LepraElectionResult(
        opens_at=opens_at, closes_at=closes_at, candidates=tuple(tallies),
        ranking=tuple(t.candidate for t in ranked), winner=top.candidate if top else None,
        tie_unresolved=top is not None and any(t.score == top.score and t.latest_pro_at == top.latest_pro_at
                                               for t in ranked[1:]),
        receipts=tuple(receipts))
