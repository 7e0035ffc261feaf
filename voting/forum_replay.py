"""Replaying a real forum game through the forum day tally, as pure functions: no ORM, no clock, no I/O.

The input is a decoded ``real-game-replay/v1`` file (format: tests/data/real_games/README.md): real mafiascum
games with the hosts' official results. ``replay_forum_game`` replays every day the way the README's section 5
says: each vote action becomes a post in canonical syntax (VOTE → ``##VOTE P05``, UNVOTE → ``##UNVOTE``,
NO_LYNCH → ``##VOTE No Lynch``; the actions of one forum post form one multi-line post, in file order) by the
account that wrote it, through the same parser and ``voting.forum_tally.ForumDay`` as a game on this site, with the
replacements (accounts per seat by post ranges) and host removals applied where they happened. The day must end
by itself at the deciding vote, or, for a day with a ``deadline_post``, when the deadline passes after that post
(resolved by the file's ``ruleset.deadline_rule``); the result is compared with the host's (README section 4),
each of the host's counts with ours at that post (section 5, the stricter check; a count carrying a
``host_error`` is the host's documented mistake), and finally the winner. Actions marked
``expected_valid: false`` are not replayed but reported; a redundant ``##UNVOTE`` that is refused is no
difference from the host.

The files hold posts from public forum threads: they are read by tests and by ``manage.py replay_forum_game``
only, and never served by any page.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from voting.forum_tally import ForumDay
from voting.forum_vote import (
    CLASSIC_FORUM_RULES,
    ForumCount,
    ForumDayEnd,
    ForumDayEndHow,
    ForumDayResult,
    ForumDeadlineOutcome,
    ForumNoLynchThreshold,
    ForumPost,
    ForumReceipt,
    ForumRecord,
    ForumRefusal,
    ForumRemoval,
    ForumRemovalCause,
    ForumReplacement,
    ForumSeat,
    ForumVoteRules,
)

REPLAY_SCHEMA = "real-game-replay/v1"

NOT_VOTING = "NOT_VOTING"
"""The key of a host count listing the living seats without a vote; left out of comparisons (README section 4)."""

HOST_ERROR_FIELD = "host_error"
"""The optional field of a host count (``days[].host_vote_counts[]``) saying why that count is the host's mistake
(README section 6). There our count is right and the host's is not: the replay names the mistake instead of
reporting a difference. The data of real games live in the files, never here."""

DEADLINE_RULES: Mapping[str, ForumDeadlineOutcome] = {
    "plurality": ForumDeadlineOutcome.PLURALITY,
    "earliest_leader": ForumDeadlineOutcome.EARLIEST_LEADER,
    "no_lynch_without_majority": ForumDeadlineOutcome.NOBODY,
}
"""The values of a file's optional ``ruleset.deadline_rule`` (README section 4): what a day that reaches its
deadline without a hammer does. Absent: the classic preset's ``earliest_leader``."""

HARMLESS_REFUSALS = frozenset({ForumRefusal.DAY_OVER, ForumRefusal.NOT_VOTING, ForumRefusal.UNVOTE_OTHER})
"""Refusals of a replayed command that are no difference from the host: a vote after the end of the day, a
redundant ``##UNVOTE`` (nothing to withdraw, the host counted nothing either) and an ``##UNVOTE name`` naming
someone else (the forum convention leaves the vote in place)."""


class ReplayFormatError(ValueError):
    """The replay file is not a ``real-game-replay/v1`` game this module can replay; the message says why."""


# ----------------------------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------------------------


class CountCheckStatus(StrEnum):
    AGREE = "agree"
    HOST_ERROR = "host error (documented)"
    DIFF = "DIFF"


@dataclass(frozen=True)
class SkippedAction:
    """An action the file marks ``expected_valid: false`` (the host did not count it): not replayed, reported."""

    post: int
    voter: str | None
    action: str
    target: str | None
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"post": self.post, "voter": self.voter, "action": self.action, "target": self.target,
                "reason": self.reason}

    def describe(self) -> str:
        target = f" {self.target}" if self.target else ""
        return f"post {self.post}: {self.voter} {self.action}{target} ({self.reason or 'no reason given'})"


@dataclass(frozen=True)
class CountCheck:
    """One of the host's counts during a day beside ours after every action before its post (README section 5).
    Counts map a target (a seat or ``NO_LYNCH``) to its voters, sorted; ``note`` explains a documented error."""

    post: int
    status: CountCheckStatus
    ours: Mapping[str, tuple[str, ...]]
    host: Mapping[str, tuple[str, ...]]
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"post": self.post, "status": self.status.value, "ours": _json_count(self.ours),
                "host": _json_count(self.host), "note": self.note}


@dataclass(frozen=True)
class DayReplay:
    """One day replayed. ``ended_at`` is the post whose vote ended the day in our count, or for a day that
    reached its deadline the file's ``deadline_post`` (None if it never ended); ``how`` how it ended
    (``"majority"``, ``"end_hammer"``, ``"deadline"``); ``result`` / ``eliminated`` ours, ``host_result`` /
    ``host_eliminated`` the host's; ``our_count`` our count when the day ended, ``host_count`` the host's final
    count (post ``host_count_post``; both None/empty when the file has no final count), without ``NOT_VOTING``;
    ``checks`` every host count of the day against ours; ``skipped`` the actions marked ``expected_valid: false``;
    ``problems`` every way the day differs from the host's official outcome (empty: MATCH)."""

    day: int
    start_post: int
    ended_at: int | None
    result: str | None
    eliminated: str | None
    host_result: str
    host_eliminated: str | None
    host_count_post: int | None
    announced_in_post: int
    our_count: Mapping[str, tuple[str, ...]]
    host_count: Mapping[str, tuple[str, ...]]
    checks: tuple[CountCheck, ...]
    problems: tuple[str, ...]
    how: str | None = None
    deadline_post: int | None = None
    skipped: tuple[SkippedAction, ...] = ()

    @property
    def matches(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {
            "day": self.day, "verdict": "MATCH" if self.matches else "DIFF", "start_post": self.start_post,
            "ended_at_post": self.ended_at, "how": self.how, "deadline_post": self.deadline_post,
            "result": self.result, "eliminated": self.eliminated,
            "host_result": self.host_result, "host_eliminated": self.host_eliminated,
            "host_final_count_post": self.host_count_post, "announced_in_post": self.announced_in_post,
            "our_count": _json_count(self.our_count), "host_final_count": _json_count(self.host_count),
            "count_checks": [check.as_dict() for check in self.checks],
            "skipped_actions": [action.as_dict() for action in self.skipped], "problems": list(self.problems),
        }


@dataclass(frozen=True)
class GameReplay:
    """A whole game replayed: its days, our winner (and after which phase the game was decided, e.g. ``"D5"``)
    beside the host's, and ``problems`` beyond single days (a winner that differs, a game decided too early)."""

    game_key: str
    seats: int
    rules: ForumVoteRules
    days: tuple[DayReplay, ...]
    winner: str | None
    decided_after: str | None
    host_winner: str
    problems: tuple[str, ...]

    @property
    def winner_matches(self) -> bool:
        return not self.problems

    @property
    def matches(self) -> bool:
        return self.winner_matches and all(day.matches for day in self.days)

    def as_dict(self) -> dict[str, Any]:
        return {
            "game_key": self.game_key, "seats": self.seats, "rules": self.rules.as_dict(),
            "days": [day.as_dict() for day in self.days],
            "winner": self.winner, "decided_after": self.decided_after, "host_winner": self.host_winner,
            "winner_verdict": "MATCH" if self.winner_matches else "DIFF", "problems": list(self.problems),
            "verdict": "MATCH" if self.matches else "DIFF",
        }


# ----------------------------------------------------------------------------------------------------------------
# Replay
# ----------------------------------------------------------------------------------------------------------------


def replay_rules(ruleset: Mapping[str, str]) -> ForumVoteRules:
    """The forum rules of a file's ``ruleset``: the classic forum rule (a plain majority ends the day at once, no
    END marks, self-votes count), with No Lynch needing one vote fewer when ``no_lynch_threshold`` starts with
    "one less", else the same majority as a lynch, and the day's deadline resolved by the optional
    ``deadline_rule`` (a key of ``DEADLINE_RULES``; absent: earliest leader) (README sections 1 and 4).
    Raises ``ReplayFormatError`` for an unknown ``deadline_rule``."""
    rules = CLASSIC_FORUM_RULES
    threshold = ruleset.get("no_lynch_threshold", "")
    if threshold.lower().startswith("one less"):
        rules = replace(rules, no_lynch_threshold=ForumNoLynchThreshold.ONE_FEWER)
    deadline_rule = ruleset.get("deadline_rule")
    if deadline_rule is not None:
        if deadline_rule not in DEADLINE_RULES:
            raise ReplayFormatError(f"unknown deadline_rule {deadline_rule!r}; known: {', '.join(DEADLINE_RULES)}")
        rules = replace(rules, deadline_outcome=DEADLINE_RULES[deadline_rule])
    return rules


def forum_winner(living_alignments: Iterable[str]) -> str | None:
    """The winner given the alignments of the living: ``"town"`` when no mafia is left,
    ``"mafia"`` when the mafia are at least half of the living, else None (the game goes on)."""
    alignments = list(living_alignments)
    mafia = alignments.count("mafia")
    if mafia == 0:
        return "town"
    if 2 * mafia >= len(alignments):
        return "mafia"
    return None


def replay_forum_game(game: Mapping[str, Any]) -> GameReplay:
    """Replay every day of a decoded ``real-game-replay/v1`` file (see the module docstring).

    Between days the day's eliminated seat, then the seats killed in the night of the same number, leave the
    game; each day starts with what is left, which must equal the file's ``alive_at_start``. Raises
    ``ReplayFormatError`` for a file of another schema or missing fields.
    """
    if game.get("schema") != REPLAY_SCHEMA:
        raise ReplayFormatError(f"not a {REPLAY_SCHEMA} file (schema: {game.get('schema')!r})")
    try:
        return _replay(game)
    except (KeyError, TypeError) as error:
        raise ReplayFormatError(f"malformed replay file: {error!r}") from error


def _replay(game: Mapping[str, Any]) -> GameReplay:
    game_key = game["game_key"]
    rules = replay_rules(game["ruleset"])
    players = {player["id"]: player for player in game["players"]}
    living = list(players)
    kills = {night["night"]: list(night["killed"]) for night in game["nights"]}
    days, problems = [], []
    winner = decided_after = None

    def settle(phase: str) -> None:
        nonlocal winner, decided_after
        outcome = forum_winner(players[seat]["alignment"] for seat in living)
        if outcome is not None and winner is None:
            winner, decided_after = outcome, phase

    for day in game["days"]:
        number = day["day"]
        if winner is not None:
            problems.append(f"the game was already decided ({winner}) after {decided_after}, before D{number}")
        replay = _replay_day(game_key, day, rules, players, living)
        days.append(replay)
        eliminated = replay.eliminated if replay.ended_at is not None else day["official"]["eliminated"]
        removed_during_day = {r.seat for r in _removals(day)}
        living = [seat for seat in living if seat not in removed_during_day and seat != eliminated]
        settle(f"D{number}")
        killed = kills.get(number, [])
        if killed:
            living = [seat for seat in living if seat not in killed]
            settle(f"N{number}")
    if winner != game["winner"]:
        problems.append(f"winner {winner or 'undecided'}, host: {game['winner']}")
    return GameReplay(game_key=game_key, seats=len(players), rules=rules, days=tuple(days), winner=winner,
                      decided_after=decided_after, host_winner=game["winner"], problems=tuple(problems))


def _replay_day(game_key: str, day: Mapping[str, Any], rules: ForumVoteRules,
                players: Mapping[str, Mapping[str, Any]], living: Sequence[str]) -> DayReplay:
    number, start = day["day"], day["start_post"]
    official = day["official"]
    final = official.get("host_final_vote_count")
    deadline_post = day.get("deadline_post")
    problems = []
    if sorted(living) != sorted(day["alive_at_start"]):
        problems.append(f"alive at start: ours {sorted(living)}, file {sorted(day['alive_at_start'])}")

    forum_day = ForumDay(rules, [ForumSeat(seat=seat, account=_account_at(players[seat], start)) for seat in living])
    voters_by_post = {(a["post"], a["voter_account"]): a["voter"] for a in day["actions"] if a.get("voter_account")}
    host_counts = sorted(day["host_vote_counts"], key=lambda count: count["post"])
    checks: list[CountCheck] = []

    def check_counts_before(post: int | None) -> None:
        while len(checks) < len(host_counts) and (post is None or host_counts[len(checks)]["post"] <= post):
            checks.append(_check_count(game_key, number, host_counts[len(checks)], forum_day.count()))

    records, skipped = _day_records(day, players, living)
    for record in records:
        if deadline_post is not None and record.seq > deadline_post:
            forum_day.close_at_deadline()  # the deadline passed after post deadline_post: later posts count nothing
        check_counts_before(record.seq)
        if isinstance(record, ForumPost):
            problems.extend(_refusal_problems(forum_day.post(record), record, voters_by_post))
        else:
            forum_day.apply(record)
    if deadline_post is not None:
        forum_day.close_at_deadline()
    check_counts_before(None)

    end = forum_day.end
    ended_at = None if end is None else (deadline_post if end.how is ForumDayEndHow.DEADLINE else end.seq)
    our_count = _sorted_count(forum_day.count())
    host_count = _host_count(final["count"]) if final is not None else {}
    final_post = final["post"] if final is not None else None
    problems.extend(_outcome_problems(end, ended_at, official, start, final_post))
    if end is not None and final is not None and our_count != host_count:
        problems.append(f"our count at post {ended_at} differs from the host's final count (post {final_post})")
    problems.extend(f"host count at post {check.post} differs from ours" for check in checks
                    if check.status is CountCheckStatus.DIFF)
    return DayReplay(
        day=number, start_post=start, ended_at=ended_at,
        result=end.result.value if end else None, eliminated=end.eliminated if end else None,
        host_result=official["result"], host_eliminated=official["eliminated"], host_count_post=final_post,
        announced_in_post=official["announced_in_post"], our_count=our_count, host_count=host_count,
        checks=tuple(checks), problems=tuple(problems), how=end.how.value if end else None,
        deadline_post=deadline_post, skipped=tuple(skipped),
    )


def _day_records(day: Mapping[str, Any], players: Mapping[str, Mapping[str, Any]],
                 living: Sequence[str]) -> tuple[list[ForumRecord], list[SkippedAction]]:
    """The day as ordered records: replacements (at the host post announcing them) and host removals before the
    posts of the same number, then one post per forum post and author with its actions as canonical lines; and
    the actions marked ``expected_valid: false``, which are left out."""
    start, end = day["start_post"], day["end_post"]
    events: list[ForumRecord] = []
    for seat in living:
        for account in players[seat]["accounts"]:
            if start < account["from_post"] <= end:
                events.append(ForumReplacement(seq=account["from_post"], seat=seat, account=account["id"]))
    events.extend(_removals(day))
    posts: list[ForumPost] = []
    skipped: list[SkippedAction] = []
    for action in day["actions"]:
        if action.get("expected_valid", True) is False:
            skipped.append(SkippedAction(post=action["post"], voter=action.get("voter"), action=action["action"],
                                         target=action.get("target"), reason=action.get("reason") or ""))
            continue
        line = _canonical_line(action)
        if line is None:
            continue
        previous = posts[-1] if posts else None
        if previous is not None and (previous.seq, previous.author) == (action["post"], action["voter_account"]):
            posts[-1] = ForumPost(seq=previous.seq, author=previous.author, text=f"{previous.text}\n{line}")
        else:
            posts.append(ForumPost(seq=action["post"], author=action["voter_account"], text=line))
    records = sorted([*events, *posts], key=lambda record: (record.seq, isinstance(record, ForumPost)))
    return records, skipped


def _canonical_line(action: Mapping[str, Any]) -> str | None:
    """An action as the line a player would post here (README section 5); None for actions that are not posts."""
    match action["action"]:
        case "VOTE":
            return f"##VOTE {action['target']}"
        case "UNVOTE":
            return "##UNVOTE"
        case "NO_LYNCH":
            return "##VOTE No Lynch"
        case "END" | "HOST_REMOVES_PLAYER":
            return None
        case other:
            raise ReplayFormatError(f"unknown action {other!r} in post {action['post']}")


def _removals(day: Mapping[str, Any]) -> list[ForumRemoval]:
    """Host removals during the day, from ``HOST_REMOVES_PLAYER`` actions and ``events``, once each."""
    found = {(a["post"], a["target"]) for a in day["actions"] if a["action"] == "HOST_REMOVES_PLAYER"}
    found |= {(e["post"], e["player"]) for e in day.get("events", []) if e["event"] == "removed_from_game"}
    return [ForumRemoval(seq=post, seat=seat, cause=ForumRemovalCause.REMOVED) for post, seat in sorted(found)]


def _account_at(player: Mapping[str, Any], post: int) -> str:
    for account in player["accounts"]:
        until = account["until_post"]
        if account["from_post"] <= post and (until is None or post < until):
            return account["id"]
    raise ReplayFormatError(f"no account plays {player['id']} at post {post}")


def _refusal_problems(receipts: Iterable[ForumReceipt], post: ForumPost,
                      voters_by_post: Mapping[tuple[int, str], str]) -> list[str]:
    """Every canonical command is valid, so any refusal other than the ``HARMLESS_REFUSALS`` means the replay and
    the file disagree (a replacement applied at the wrong post, a target that is not alive)."""
    problems = []
    for receipt in receipts:
        if receipt.seat != voters_by_post[(post.seq, post.author)]:
            problems.append(f"post {post.seq}: {post.author} plays {receipt.seat}, the file says "
                            f"{voters_by_post[(post.seq, post.author)]}")
        if receipt.refusal is not None and receipt.refusal not in HARMLESS_REFUSALS:
            problems.append(f"post {post.seq}: {receipt.command.written!r} refused: {receipt.message}")
    return list(dict.fromkeys(problems))


def _outcome_problems(end: ForumDayEnd | None, ended_at: int | None, official: Mapping[str, Any], start: int,
                      host_count_post: int | None) -> list[str]:
    """How our end differs from the host's: the result, and where it fell. A hammer must fall before the host's
    final count (which shows it) or, without one, before the closing post; a deadline must have passed before the
    closing post."""
    if end is None:
        return [f"our count never ended the day; the host: {official['result']} {official['eliminated'] or ''}"]
    problems = []
    host_result = ForumDayResult(official["result"])
    if (end.result, end.eliminated) != (host_result, official["eliminated"]):
        problems.append(f"ours: {_describe(end.result.value, end.eliminated)}, "
                        f"host: {_describe(official['result'], official['eliminated'])}")
    announced = official["announced_in_post"]
    limit = host_count_post if host_count_post is not None and end.how is not ForumDayEndHow.DEADLINE else announced
    if ended_at is None or not start <= ended_at < limit:
        where = (f"the host's final count is in post {limit}" if limit == host_count_post
                 else f"the host closed the day in post {limit}")
        problems.append(f"our count ended the day at post {ended_at}, outside posts {start}..{limit - 1} ({where})")
    return problems


def _check_count(game_key: str, day: int, host: Mapping[str, Any], ours: ForumCount) -> CountCheck:
    """One host count against ours; a difference the file documents (``HOST_ERROR_FIELD``) is the host's error."""
    ours_sorted, host_sorted = _sorted_count(ours), _host_count(host["count"])
    if ours_sorted == host_sorted:
        return CountCheck(post=host["post"], status=CountCheckStatus.AGREE, ours=ours_sorted, host=host_sorted)
    documented = host.get(HOST_ERROR_FIELD)
    if documented:
        return CountCheck(post=host["post"], status=CountCheckStatus.HOST_ERROR, ours=ours_sorted,
                          host=host_sorted, note=documented)
    return CountCheck(post=host["post"], status=CountCheckStatus.DIFF, ours=ours_sorted, host=host_sorted)


def _sorted_count(count: ForumCount) -> dict[str, tuple[str, ...]]:
    """Our count as sets (sorted tuples) per target, in the count's order of targets."""
    return {target: tuple(sorted(voters)) for target, voters in count.votes.items()}


def _host_count(count: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """A host count as sets per target, ``NOT_VOTING`` left out; an entry listing a voter twice stays a set."""
    return {target: tuple(sorted(set(voters))) for target, voters in count.items() if target != NOT_VOTING}


def _describe(result: str, eliminated: str | None) -> str:
    return f"lynch {eliminated}" if result == "lynch" else result.replace("_", " ")


def _json_count(count: Mapping[str, tuple[str, ...]]) -> dict[str, list[str]]:
    return {target: list(voters) for target, voters in count.items()}

