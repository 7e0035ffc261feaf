"""The forum day vote as a pure function: a day's thread of ``##VOTE`` messages counted under
the rules (``voting.forum_vote`` holds the rules as data, the records, receipts and results). No ORM, no clock."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from voting.forum_vote import (
    FORUM_NO_LYNCH,
    ForumCount,
    ForumDayEnd,
    ForumDayEndHow,
    ForumDayReport,
    ForumDayResult,
    ForumDeadlineOutcome,
    ForumOffence,
    ForumOffender,
    ForumPost,
    ForumReceipt,
    ForumRecord,
    ForumRefusal,
    ForumRemoval,
    ForumRemovalCause,
    ForumReplacement,
    ForumSeat,
    ForumVoidedVote,
    ForumVoteRules,
    forum_majority,
    forum_threshold,
)
from voting.parsing import (
    ForumCommand,
    ForumCommandKind,
    ForumMatchKind,
    parse_forum_post,
    resolve_forum_name,
)

# ----------------------------------------------------------------------------------------------------------------
# Forum day votes: the day
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
    """One forum day's vote, from the opening post to the end.

    Feed it the day's records in order with ``apply`` (or ``post`` / ``remove`` / ``replace``); read it with
    ``count``, ``end``, ``receipts``, ``voided``, ``offenders`` or ``report``. Every command is applied on its
    own, in the order written, and the end of the day is checked after each applied command and each
    event, on the count that includes it: a post that hammers ends the day at that command, and its
    later commands carry no votes, exactly as if they had been posted separately. Once the day is over the
    count is frozen; later commands are refused (``DAY_OVER``).

    "The post's final state counts" is read as: the standing vote after a post is the result
    of its commands applied in order (``##VOTE A ##UNVOTE ##VOTE B`` leaves a vote on B). The hammer is checked
    at each command, after the vote is stored, so that splitting a post into
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
        """Apply every command of ``post`` in the order written and return their receipts.

        A post by a living seat's current account while the day is open counts towards the day's minimum of
        posts, with or without commands. Commands by anyone else are refused: not a player, replaced, not living;
        after the end, every command is refused.
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
        """Take a living seat out of the day (a host removal or a death) and return the votes it voids.

        The votes on the seat are void and their voters are told (the returned notices, in the order the votes were
        cast; until they vote again they are not listed as non-voters); the seat's own vote and END mark go. The majority is recomputed on
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
        # In the order the votes were cast, not the dict's: a restored day's dict has the order of its stored JSON,
        # which PostgreSQL's jsonb does not keep.
        for voter, vote in sorted(self._votes.items(), key=lambda item: item[1].order):
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
        """Hand a living seat to a new account: the seat keeps its vote, END mark and the votes on
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
        """End the day at its deadline by ``rules.deadline_outcome`` and return how it ended; a day
        already ended by a hammer keeps that end. The caller decides that the deadline has come."""
        return self._close(ForumDayEndHow.DEADLINE, seq=None, trigger=None)

    def close_proceedings(self, seq: int, judge: str) -> ForumDayEnd:
        """End the day now at record ``seq`` on the votes in place, resolved as at the deadline (a tie
        imprisons nobody): the Judge's *close proceedings*. The caller checks the Judge's right
        (``majority_has_voted``). Raises ``ValueError`` when the day is already over or ``seq`` is out of order."""
        self._check_order(seq)
        if self.end is not None:
            raise ValueError("the day is already over")
        return self._close(ForumDayEndHow.CLOSE_PROCEEDINGS, seq=seq, trigger=judge)

    def majority_has_voted(self) -> bool:
        """True while the day is open and a majority of the living have a vote in place (No Lynch counts, an
        unvote does not): when the Judge may close proceedings."""
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
        """The standing count; once the day is over, the count at its end."""
        if self.end is not None:
            return self.end.count
        return self._live_count()

    def offenders(self) -> tuple[ForumOffender, ...]:
        """The living seats that broke the daily minimum (``ForumOffence``) so far (at the end of the day: for
        the host's list), in seating order: no vote in place (a voter whose vote a death voided is not listed), no vote
        cast this day, fewer than two posts while the day was open."""
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

    # -- storing the state ------------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The day's state as JSON-ready data, for a caller that stores the day as it goes and feeds it one record
        at a time (``restore`` gives the same day back). Receipts are left out: each belongs to its post, which
        the caller stores with it. Its size depends on the seats, never on how many posts the day has had.
        ``{"seats": {seat: {"account", "names", "former_accounts"}}, "living": [...], "votes": {voter: [target,
        order]}, "end_marks": [...], "voided_voters": [...], "posts": {seat: n}, "votes_cast": {seat: n},
        "order": n, "last_seq": n | None, "voided": [ForumVoidedVote.as_dict()], "end": ... | None}``."""
        end = self.end
        return {
            "seats": {seat: {"account": state.account, "names": list(state.names),
                             "former_accounts": list(state.former_accounts)} for seat, state in self._seats.items()},
            "living": list(self._living),
            "votes": {voter: [vote.target, vote.order] for voter, vote in self._votes.items()},
            "end_marks": sorted(self._end_marks),
            "voided_voters": sorted(self._voided_voters),
            "posts": {seat: n for seat, n in sorted(self._posts.items()) if n},
            "votes_cast": {seat: n for seat, n in sorted(self._votes_cast.items()) if n},
            "order": self._order,
            "last_seq": self._last_seq,
            "voided": [notice.as_dict() for notice in self._voided],
            "end": None if end is None else {**end.as_dict(), "count": end.count.as_dict()},
        }

    @classmethod
    def restore(cls, rules: ForumVoteRules, data: Mapping[str, Any]) -> ForumDay:
        """The day stored by ``snapshot``, under ``rules``. Raises ``KeyError``/``ValueError`` for data that is not
        a snapshot."""
        day = cls(rules, ())
        for seat, state in data["seats"].items():
            day._seats[seat] = _SeatState(account=state["account"], names=list(state["names"]),
                                          former_accounts=list(state["former_accounts"]))
            day._account_seat[state["account"]] = seat
            for former in state["former_accounts"]:
                day._former_account_seat[former] = seat
        day._living = list(data["living"])
        day._votes = {voter: _StandingVote(target=target, order=order) for voter, (target, order) in data["votes"].items()}
        day._end_marks = set(data["end_marks"])
        day._voided_voters = set(data["voided_voters"])
        day._posts = Counter(data["posts"])
        day._votes_cast = Counter(data["votes_cast"])
        day._order = data["order"]
        day._last_seq = data["last_seq"]
        day._voided = [ForumVoidedVote(seq=v["seq"], voter=v["voter"], target=v["target"], removed=v["removed"],
                                       cause=ForumRemovalCause(v["cause"])) for v in data["voided"]]
        end = data["end"]
        if end is not None:
            count = end["count"]
            day.end = ForumDayEnd(
                how=ForumDayEndHow(end["how"]), result=ForumDayResult(end["result"]), eliminated=end["eliminated"],
                seq=end["seq"], trigger=end["trigger"], tied=tuple(end["tied"]),
                count=ForumCount(living=tuple(count["living"]), majority=count["majority"],
                                 no_lynch_threshold=count["no_lynch_threshold"],
                                 votes={v["target"]: tuple(v["voters"]) for v in count["votes"]},
                                 not_voting=tuple(count["not_voting"]), voided=tuple(count["voided"]),
                                 end_marked=tuple(count["end_marked"])))
        return day

    def activity(self) -> dict[str, tuple[int, int]]:
        """Posts and votes cast so far this day per seat, ``{seat: (posts, votes)}`` for every seat of
        the day, in seating order."""
        return {seat: (self._posts[seat], self._votes_cast[seat]) for seat in self._seats}

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
        """``##VOTE name``: resolve the name and replace the standing vote; the END mark stays."""
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
            return self._accept(post, seat, command, f"{seat} already votes {_shown(target)}.", target=target)
        self._order += 1
        self._votes[seat] = _StandingVote(target=target, order=self._order)
        return self._accept(post, seat, command, f"{seat} votes {_shown(target)}.", target=target)

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
        """``##UNVOTE`` withdraws the standing vote; the END mark stays. ``##UNVOTE name`` naming
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
                                    f"{seat} votes {_shown(current.target)}, not {_shown(named)}: the vote stays.")
        del self._votes[seat]
        return self._accept(post, seat, command, f"{seat} withdraws the vote on {_shown(current.target)}.",
                            target=current.target)

    def _mark_end(self, post: ForumPost, seat: str, command: ForumCommand) -> ForumReceipt:
        """``##END``: refused while not voting anyone."""
        if seat not in self._votes:
            return self._refuse(post, seat, command, ForumRefusal.END_WITHOUT_VOTE,
                                "##END needs a vote in place: vote first.")
        self._end_marks.add(seat)
        return self._accept(post, seat, command, f"{seat} wants the day to end.")

    def _clear_end(self, post: ForumPost, seat: str, command: ForumCommand) -> ForumReceipt:
        """``##UNEND`` clears the END mark."""
        if seat not in self._end_marks:
            return self._refuse(post, seat, command, ForumRefusal.NO_END_MARK, "There is no END mark to clear.")
        self._end_marks.discard(seat)
        return self._accept(post, seat, command, f"{seat} no longer wants the day to end.")

    # -- the end of the day ----------------------------------------------------------------------------------

    def _check_end(self, seq: int, trigger: str | None) -> None:
        """End the day if the count, recomputed with the change just applied, has a hammer.

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


def _shown(target: str) -> str:
    """A vote target as a receipt names it: a seat's name, or "No Lynch" for ``FORUM_NO_LYNCH``."""
    return "No Lynch" if target == FORUM_NO_LYNCH else target


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
    """Re-derive a whole forum day from its records in order: the same records always give the same
    report. With ``deadline_reached`` a day still open after the last record is closed at its deadline. Raises
    ``ValueError`` as ``ForumDay`` does."""
    day = ForumDay(rules, seats)
    for record in records:
        day.apply(record)
    if deadline_reached:
        day.close_at_deadline()
    return day.report()
