"""The M21 day as a pure function over its records (RULES.md M-VOTE-1..9, M-ROLE judge): no ORM, no clock, no I/O.

``run_m21_day`` re-derives a whole day of the game thread from its ordered records: the posts (through
``voting.forum_tally.ForumDay``, the same engine as ``tally forum-day`` and the replay tool), deaths and removals
during the day (M-VOTE-9), replacements (L-REPLACE-1), and the Judge's two powers, once per game:

- *close proceedings* (``JudgeCloses``): while a majority of the living have a vote in place, the day ends now on
  the votes in place, resolved as at the deadline (plurality; a tie imprisons nobody);
- *casting vote* (``JudgeCasts``): registered in advance (before the end of the day) or within 15 minutes after
  the end while the result waits for it; on a tie at the deadline it imprisons the chosen tied candidate.

The caller says whether the deadline has come and whether the casting window is over (time is not read here), and
stores every record, so that the day's result can always be re-derived and audited.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from voting.forum_tally import ForumDay
from voting.forum_vote import (
    FORUM_NO_LYNCH,
    ForumDayEnd,
    ForumDayEndHow,
    ForumDayReport,
    ForumPost,
    ForumReceipt,
    ForumRemoval,
    ForumRemovalCause,
    ForumReplacement,
    ForumSeat,
    ForumVoidedVote,
    ForumVoteRules,
)


@dataclass(frozen=True)
class JudgeCloses:
    """The Judge (seat ``judge``) orders *close proceedings* at record ``seq``."""

    seq: int
    judge: str


@dataclass(frozen=True)
class JudgeCasts:
    """The Judge (seat ``judge``) names ``target`` (a seat or ``FORUM_NO_LYNCH``) for a casting vote at ``seq``:
    in advance while the day is open, or after a tied end within the window."""

    seq: int
    judge: str
    target: str


@dataclass(frozen=True)
class DeadlinePasses:
    """The day's deadline passed before record ``seq`` (M-VOTE-4): the day is closed there, and only a casting vote
    may follow."""

    seq: int


M21Record = ForumPost | ForumRemoval | ForumReplacement | JudgeCloses | JudgeCasts | DeadlinePasses


class JudgeRefusal(StrEnum):
    NOT_JUDGE = "not_judge"
    NOT_LIVING = "not_living"
    POWER_USED = "power_used"
    DAY_OVER = "day_over"
    NO_MAJORITY_VOTING = "no_majority_voting"
    NO_TIE = "no_tie"
    NOT_TIED = "not_tied"
    UNKNOWN_TARGET = "unknown_target"


@dataclass(frozen=True)
class JudgeReceipt:
    """What became of one Judge record: ``refusal`` None when accepted; ``message`` a sentence for the Judge."""

    seq: int
    kind: str  # "close_proceedings" or "casting_vote"
    refusal: JudgeRefusal | None
    message: str

    @property
    def accepted(self) -> bool:
        return self.refusal is None


class DayState(StrEnum):
    OPEN = "open"
    """The day goes on."""
    AWAITING_CASTING_VOTE = "awaiting_casting_vote"
    """The day ended in a tie; the Judge may still break it within the window (M-ROLE judge)."""
    DECIDED = "decided"
    """The day's result is final."""


@dataclass(frozen=True)
class M21DayOutcome:
    """A day re-derived: ``report`` the forum day's report (count, end, receipts, voided votes, M-VOTE-5
    offenders); ``state``; ``imprisoned`` the seat to imprison (None: nobody, or not decided yet); ``no_lynch``
    True when No Lynch won; ``judge_power`` how the Judge's power was used this day ("close_proceedings",
    "casting_vote" or None); ``casting_target`` the registered or cast target; ``judge_receipts`` one per Judge
    record; ``post_receipts`` the receipts per post ``seq``."""

    report: ForumDayReport
    state: DayState
    imprisoned: str | None
    no_lynch: bool
    judge_power: str | None
    casting_target: str | None
    judge_receipts: tuple[JudgeReceipt, ...]
    post_receipts: dict[int, tuple[ForumReceipt, ...]]
    voided_by_seq: dict[int, tuple[ForumVoidedVote, ...]]

    @property
    def end(self) -> ForumDayEnd | None:
        return self.report.end


class M21DayRun:
    """An M21 day fed one record at a time (see the module docstring), so that a caller can store it as it goes
    (``snapshot`` / ``restore``) and apply each new post, death, replacement or Judge's order to the stored state
    instead of re-deriving the whole day. ``run_m21_day`` feeds it a whole day; both give the same outcome.

    ``judge`` is the Judge's seat (None: no Judge in play) and ``judge_power_left`` whether the once-per-game power
    is still unused at the start of the day. Raises ``ValueError`` as ``ForumDay`` does.
    """

    def __init__(self, rules: ForumVoteRules, seats: Iterable[ForumSeat], *, judge: str | None = None,
                 judge_power_left: bool = False):
        self.rules = rules
        self.day = ForumDay(rules, seats)
        self.judge = judge
        self.power_left = bool(judge and judge_power_left)
        self.power_used: str | None = None
        self.registered: str | None = None
        self.cast: str | None = None
        self.deadline_passed = False
        self.seq = 0
        self.judge_receipts: list[JudgeReceipt] = []
        self.post_receipts: dict[int, tuple[ForumReceipt, ...]] = {}
        self.voided_by_seq: dict[int, tuple[ForumVoidedVote, ...]] = {}

    def next_seq(self) -> int:
        """The ``seq`` of the next record: one more than the last one given out."""
        self.seq += 1
        return self.seq

    # -- storing -----------------------------------------------------------------------------------------------

    def snapshot(self) -> dict:
        """The run's state as JSON-ready data (``ForumDay.snapshot`` plus the Judge's power, the registered or cast
        target, the deadline and the record counter). Post receipts are left out (each is stored with its post);
        the size depends on the seats, never on the number of posts."""
        return {"forum": self.day.snapshot(), "judge": self.judge, "power_left": self.power_left,
                "power_used": self.power_used, "registered": self.registered, "cast": self.cast,
                "deadline_passed": self.deadline_passed, "seq": self.seq,
                "judge_receipts": [{"seq": r.seq, "kind": r.kind, "refusal": r.refusal.value if r.refusal else None,
                                    "message": r.message} for r in self.judge_receipts],
                "voided_by_seq": {str(seq): [v.as_dict() for v in notices]
                                  for seq, notices in self.voided_by_seq.items()}}

    @classmethod
    def restore(cls, rules: ForumVoteRules, data: dict) -> M21DayRun:
        """The run stored by ``snapshot``, under ``rules``. Raises ``KeyError``/``ValueError`` for other data."""
        run = cls(rules, ())
        run.day = ForumDay.restore(rules, data["forum"])
        run.judge, run.power_left, run.power_used = data["judge"], data["power_left"], data["power_used"]
        run.registered, run.cast, run.deadline_passed = data["registered"], data["cast"], data["deadline_passed"]
        run.seq = data["seq"]
        run.judge_receipts = [JudgeReceipt(seq=r["seq"], kind=r["kind"],
                                           refusal=JudgeRefusal(r["refusal"]) if r["refusal"] else None,
                                           message=r["message"]) for r in data["judge_receipts"]]
        run.voided_by_seq = {int(seq): tuple(ForumVoidedVote(seq=v["seq"], voter=v["voter"], target=v["target"],
                                                             removed=v["removed"], cause=ForumRemovalCause(v["cause"]))
                                             for v in notices)
                             for seq, notices in data["voided_by_seq"].items()}
        return run

    # -- feeding -----------------------------------------------------------------------------------------------

    def apply(self, record: M21Record) -> tuple:
        """Apply one record: returns a post's receipts, a removal's voided votes, else ``()``."""
        day = self.day
        self.seq = max(self.seq, record.seq)
        match record:
            case DeadlinePasses():
                self._close_at_deadline()
            case ForumPost():
                receipts = day.post(record)
                self.post_receipts[record.seq] = self.post_receipts.get(record.seq, ()) + receipts
                return receipts
            case ForumRemoval():
                voided = day.remove(record)
                self.voided_by_seq[record.seq] = self.voided_by_seq.get(record.seq, ()) + voided
                return voided
            case ForumReplacement():
                day.replace(record)
            case JudgeCloses():
                self._close_proceedings(record)
            case JudgeCasts():
                self._casting_vote(record)
            case _:
                raise TypeError(f"not an M21 day record: {record!r}")
        return ()

    def _refuse(self, record, kind: str, refusal: JudgeRefusal, message: str) -> None:
        self.judge_receipts.append(JudgeReceipt(seq=record.seq, kind=kind, refusal=refusal, message=message))

    def _judge_refusal(self, record, kind: str) -> bool:
        """Refuse a Judge record from a seat that cannot use the power; True when refused."""
        day, judge = self.day, self.judge
        if judge is None or record.judge != judge:
            self._refuse(record, kind, JudgeRefusal.NOT_JUDGE, "Only the Judge has this power.")
        elif not self.power_left:
            self._refuse(record, kind, JudgeRefusal.POWER_USED, "The Judge's power has already been used this game.")
        elif judge not in day.living and not (kind == "casting_vote" and day.end is not None
                                              and judge in day.end.count.living):
            self._refuse(record, kind, JudgeRefusal.NOT_LIVING, "Only a living Judge can use this power.")
        else:
            return False
        return True

    def _close_at_deadline(self) -> None:
        day = self.day
        self.deadline_passed = True
        if day.end is not None:
            return
        day.close_at_deadline()
        if self.registered is not None and self.power_left and day.end.tied and self.registered in day.end.tied \
                and self.judge in day.end.count.living:
            self.cast, self.power_left, self.power_used = self.registered, False, "casting_vote"

    def _close_proceedings(self, record: JudgeCloses) -> None:
        day = self.day
        if self._judge_refusal(record, "close_proceedings"):
            return
        if day.end is not None:
            self._refuse(record, "close_proceedings", JudgeRefusal.DAY_OVER, "The day is already over.")
        elif not day.majority_has_voted():
            count = day.count()
            self._refuse(record, "close_proceedings", JudgeRefusal.NO_MAJORITY_VOTING,
                         f"Proceedings can be closed only when a majority ({count.majority} of "
                         f"{len(count.living)}) have a vote in place; {len(count.voters())} do.")
        else:
            day.close_proceedings(record.seq, record.judge)
            self.power_left, self.power_used = False, "close_proceedings"
            self.judge_receipts.append(JudgeReceipt(seq=record.seq, kind="close_proceedings", refusal=None,
                                                    message="Proceedings are closed: the day ends now."))

    def _casting_vote(self, record: JudgeCasts) -> None:
        day = self.day
        if self._judge_refusal(record, "casting_vote"):
            return
        if day.end is None:
            target_name = _label(record.target)
            if record.target != FORUM_NO_LYNCH and record.target not in day.living:
                self._refuse(record, "casting_vote", JudgeRefusal.UNKNOWN_TARGET,
                             f"{target_name} is not a living player.")
                return
            self.registered = record.target
            self.judge_receipts.append(JudgeReceipt(
                seq=record.seq, kind="casting_vote", refusal=None,
                message=f"Registered: if the day ends in a tie involving {target_name}, your casting "
                        f"vote goes to {target_name}."))
        elif self.cast is not None or day.end.how is not ForumDayEndHow.DEADLINE or not day.end.tied:
            self._refuse(record, "casting_vote", JudgeRefusal.NO_TIE,
                         "The day did not end in a tie waiting for a casting vote.")
        elif record.target not in day.end.tied:
            self._refuse(record, "casting_vote", JudgeRefusal.NOT_TIED,
                         f"Choose one of the tied candidates: {', '.join(_label(t) for t in day.end.tied)}.")
        else:
            self.cast = record.target
            self.power_left, self.power_used = False, "casting_vote"
            self.judge_receipts.append(JudgeReceipt(seq=record.seq, kind="casting_vote", refusal=None,
                                                    message=f"Your casting vote goes to {_label(self.cast)}."))

    # -- reading -----------------------------------------------------------------------------------------------

    def outcome(self, *, deadline_reached: bool = False, casting_window_over: bool = False) -> M21DayOutcome:
        """The day's outcome now. ``deadline_reached`` closes a day still open at its deadline (M-VOTE-4; this
        changes the run: read a restored copy when the deadline is only being looked at); a tie then waits for the
        casting vote unless the Judge cannot give one, the registered one applies, or ``casting_window_over``.
        ``post_receipts`` hold the receipts of the posts applied since the run was made or restored."""
        if deadline_reached:
            self._close_at_deadline()
        day = self.day
        end = day.end
        state = DayState.OPEN if end is None else DayState.DECIDED
        target = end.eliminated if end is not None else None
        no_lynch = end is not None and end.result.value == "no_lynch"
        if end is not None and end.how is ForumDayEndHow.DEADLINE and end.tied:
            if self.cast is not None:
                target, no_lynch = (None, True) if self.cast == FORUM_NO_LYNCH else (self.cast, False)
            elif self.power_left and self.judge in end.count.living and not casting_window_over:
                state = DayState.AWAITING_CASTING_VOTE
        return M21DayOutcome(
            report=day.report(), state=state, imprisoned=target if state is DayState.DECIDED else None,
            no_lynch=no_lynch and state is DayState.DECIDED, judge_power=self.power_used,
            casting_target=self.cast if self.cast is not None else self.registered,
            judge_receipts=tuple(self.judge_receipts), post_receipts=dict(self.post_receipts),
            voided_by_seq=dict(self.voided_by_seq))


def run_m21_day(rules: ForumVoteRules, seats: Iterable[ForumSeat], records: Iterable[M21Record], *,
                judge: str | None = None, judge_power_left: bool = False, deadline_reached: bool = False,
                casting_window_over: bool = False) -> M21DayOutcome:
    """Re-derive an M21 day from all its records (see the module docstring and ``M21DayRun``).

    A ``DeadlinePasses`` record, or ``deadline_reached`` after the last record, closes a day still open at its
    deadline (M-VOTE-4); a tie then waits for the casting vote unless the Judge cannot give one, the registered one
    applies, or ``casting_window_over``. Raises ``ValueError`` as ``ForumDay`` does.
    """
    run = M21DayRun(rules, seats, judge=judge, judge_power_left=judge_power_left)
    for record in records:
        run.apply(record)
    return run.outcome(deadline_reached=deadline_reached, casting_window_over=casting_window_over)


def _label(target: str) -> str:
    return "No Lynch" if target == FORUM_NO_LYNCH else target


def vote_count_text(report: ForumDayReport, names: dict[str, str] | None = None) -> str:
    """The vote count as a post (M-VOTE-8): one line per target with its count, "L-n" (votes still needed for a
    hammer) and its voters, END marks starred; then the living without a vote. ``names`` maps seats to display
    names (default: the seat labels)."""
    names = names or {}
    count = report.count
    marked = set(count.end_marked)

    def name(seat: str) -> str:
        return "No Lynch" if seat == FORUM_NO_LYNCH else names.get(seat, seat)

    lines = [f"**Vote count** ({len(count.living)} alive, {count.majority} to hammer)", ""]
    for target, voters in count.votes.items():
        needed = count.threshold(target) - len(voters)
        voters_text = ", ".join(name(v) + (" (END)" if v in marked else "") for v in voters)
        lines.append(f"- **{name(target)}** ({len(voters)}, L-{max(needed, 0)}): {voters_text}")
    if count.not_voting:
        lines.append(f"- Not voting ({len(count.not_voting)}): {', '.join(name(s) for s in count.not_voting)}")
    if count.voided:
        lines.append(f"- Vote voided by a death ({len(count.voided)}): {', '.join(name(s) for s in count.voided)}")
    return "\n".join(lines) + "\n"
