"""The Lepra tallies as pure functions (RULES.md L-VOTE, L-JUDGE-4..6): execution voting and judge elections,
from messages to receipts and results. No ORM, no clock, no I/O."""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from rulesets.lepra.day.keywords import (
    LepraBallot,
    LepraKeyword,
    parse_lepra_election,
    parse_lepra_execution,
)

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
    ``CLOSED``, L-VOTE-8); then the text (``rulesets.lepra.day.keywords.parse_lepra_execution``):

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
    return lepra_execution_result(opens_at, closes_at, tallies, tuple(receipts))


def lepra_execution_result(opens_at: datetime, closes_at: datetime, tallies: tuple[LepraNomineeTally, ...],
                           receipts: tuple[LepraReceipt, ...] = ()) -> LepraExecutionResult:
    """The ranking, the leader and the ties of L-VOTE-5/L-VOTE-7/L-COURT-2 over the nominees' ``tallies`` (see
    ``LepraExecutionResult``): the end of ``tally_lepra_execution``, shared with the standing tally kept as data
    (``rulesets.lepra.day.standing``), so that both rank by the same rule."""
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
        receipts=receipts)


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
    (``rulesets.lepra.day.keywords.parse_lepra_election``), else ``NOT_A_BALLOT`` (``PROXY_NOT_A_VOTE`` for a proxy); the
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
