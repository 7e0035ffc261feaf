"""A forum day from a JSON-lines thread export, counted by the forum day tally: pure, no ORM, no clock, no I/O.

A host who runs a game on a forum can export one day of the game thread and have it counted with the rules of
``voting.forum_vote``: ``manage.py tally forum-day FILE`` reads the file and prints ``forum_day_export``'s
result. Example with comments: ``voting/examples/README.md``.

Format ``forum-day/v1``: UTF-8, one JSON object per line, blank lines ignored.

The first line is the header::

    {"format": "forum-day/v1",                      # optional; if present, exactly this
     "rules": {"preset": "end_hammer", "self_votes_allowed": false},   # ForumVoteRules.from_dict; {} = defaults
     "seats": [{"seat": "Alice", "account": "alice", "names": ["Ali"]}, "bob", ...],
     "hosts": ["host"],                             # optional: accounts whose posts are never votes
     "deadline": "2026-03-03T22:00:00+00:00"}       # ISO 8601 with a UTC offset, or null

``seats`` are the living seats when the day opens: the seat's label, the account that plays it and optional
extra names (a plain string ``"bob"`` is a seat labelled and played by ``bob``). The hosts' posts are skipped,
so a host explaining ``##VOTE`` in the opening post casts nothing; commands posted by any other account that
plays no seat are refused. Every further line is a record,
in thread order, ``seq`` strictly increasing:

- a post: ``{"seq": 12, "at": "2026-03-02T08:15:00+00:00", "author": "alice", "text": "##VOTE Bob"}``;
- a death or removal during the day: ``{"seq": 13, "event": "remove", "seat": "Frank",
  "cause": "killed"}`` (``cause`` ``"removed"`` by default);
- a replacement: ``{"seq": 14, "event": "replace", "seat": "Erin", "account": "erin2",
  "names": []}``.

Events may carry an ``"at"`` too. With a deadline, the day closes at the deadline when no hammer fell before
it: the export is taken to cover the whole day, and records at or after the deadline count no
more. With ``"deadline": null`` a day without a hammer is reported as still open.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from voting.forum_tally import ForumDay
from voting.forum_vote import (
    ForumPost,
    ForumRecord,
    ForumRemoval,
    ForumRemovalCause,
    ForumReplacement,
    ForumSeat,
    ForumVoteRules,
)

FORUM_DAY_EXPORT_FORMAT = "forum-day/v1"


class ForumExportError(ValueError):
    """The export is malformed; the message names the line and what is wrong with it."""


@dataclass(frozen=True)
class ForumExportHeader:
    rules: ForumVoteRules
    seats: tuple[ForumSeat, ...]
    hosts: frozenset[str]
    deadline: datetime | None


def forum_day_export(lines: Iterable[str]) -> dict[str, Any]:
    """Count the day of a ``forum-day/v1`` export (module docstring) and return the result as JSON-ready data::

        {"rules": {...ForumVoteRules.as_dict()}, "deadline": str | None,
         "count": {...ForumCount.as_dict()},        # the standing count; once the day is over, at its end
         "ended": None | {"how", "result", "eliminated", "seq", "trigger", "tied", "at"},
         "refused": [{"seq", "author", "seat", "command", "line", "reason", "message", "candidates"}, ...],
         "voided": [{"seq", "voter", "target", "removed", "cause"}, ...],
         "offenders": [{"seat", "offences": [...]}, ...]}   # the daily minimum broken, as of the end (or of the last
         record)

    ``ended.at`` is the ``at`` of the record that ended the day, or the deadline. Raises ``ForumExportError``
    for a malformed export (including events the day cannot apply, such as removing a seat that is not alive).
    """
    numbered = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    if not numbered:
        raise ForumExportError("the export is empty: the first line must be the header")
    header = _header(*numbered[0])
    day = ForumDay(header.rules, header.seats)
    times: dict[int, str] = {}
    previous_seq = None
    for number, line in numbered[1:]:
        record, at = _record(number, line)
        if previous_seq is not None and record.seq <= previous_seq:
            raise ForumExportError(f"line {number}: seq {record.seq} does not follow seq {previous_seq}")
        previous_seq = record.seq
        if isinstance(record, ForumPost) and record.author in header.hosts:
            continue
        if at is not None:
            times[record.seq] = at.isoformat()
            if header.deadline is not None and at >= header.deadline:
                day.close_at_deadline()
        try:
            day.apply(record)
        except ValueError as error:
            raise ForumExportError(f"line {number}: {error}") from error
    if header.deadline is not None:
        day.close_at_deadline()
    report = day.report()
    ended = None
    if report.end is not None:
        at = header.deadline.isoformat() if report.end.seq is None else times.get(report.end.seq)
        ended = {**report.end.as_dict(), "at": at}
    return {
        "rules": header.rules.as_dict(),
        "deadline": header.deadline.isoformat() if header.deadline else None,
        "count": report.count.as_dict(),
        "ended": ended,
        "refused": [receipt.as_dict() for receipt in report.refused],
        "voided": [voided.as_dict() for voided in report.voided],
        "offenders": [offender.as_dict() for offender in report.offenders],
    }


def _header(number: int, line: str) -> ForumExportHeader:
    data = _object(number, line)
    if "seq" in data or "event" in data:
        raise ForumExportError(f"line {number}: the first line must be the header, not a record")
    if data.get("format", FORUM_DAY_EXPORT_FORMAT) != FORUM_DAY_EXPORT_FORMAT:
        raise ForumExportError(f"line {number}: format {data['format']!r} is not {FORUM_DAY_EXPORT_FORMAT}")
    unknown = sorted(set(data) - {"format", "rules", "seats", "hosts", "deadline"})
    if unknown:
        raise ForumExportError(f"line {number}: unknown header field(s): {', '.join(unknown)}")
    try:
        rules = ForumVoteRules.from_dict(_mapping(number, data.get("rules", {}), "rules"))
    except (TypeError, ValueError) as error:
        raise ForumExportError(f"line {number}: rules: {error}") from error
    seats = data.get("seats")
    if not isinstance(seats, list) or not seats:
        raise ForumExportError(f"line {number}: seats must be a non-empty list")
    hosts = _names(number, data, "hosts")
    deadline = data.get("deadline")
    return ForumExportHeader(rules=rules, seats=tuple(_seat(number, seat) for seat in seats),
                             hosts=frozenset(hosts),
                             deadline=None if deadline is None else _time(number, deadline, "deadline"))


def _seat(number: int, seat: Any) -> ForumSeat:
    if isinstance(seat, str):
        return ForumSeat(seat=seat, account=seat)
    seat = _mapping(number, seat, "a seat")
    return ForumSeat(seat=_text(number, seat, "seat"), account=_text(number, seat, "account"),
                     names=_names(number, seat))


def _record(number: int, line: str) -> tuple[ForumRecord, datetime | None]:
    data = _object(number, line)
    seq = data.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise ForumExportError(f"line {number}: seq must be an integer")
    at = _time(number, data["at"], "at") if data.get("at") is not None else None
    event = data.get("event")
    if event is None:
        if at is None:
            raise ForumExportError(f"line {number}: a post needs its time, at")
        return ForumPost(seq=seq, author=_text(number, data, "author"), text=_text(number, data, "text")), at
    if event == "remove":
        try:
            cause = ForumRemovalCause(data.get("cause", ForumRemovalCause.REMOVED.value))
        except ValueError as error:
            raise ForumExportError(f"line {number}: cause must be removed or killed") from error
        return ForumRemoval(seq=seq, seat=_text(number, data, "seat"), cause=cause), at
    if event == "replace":
        return ForumReplacement(seq=seq, seat=_text(number, data, "seat"), account=_text(number, data, "account"),
                                names=_names(number, data)), at
    raise ForumExportError(f"line {number}: event must be remove or replace, not {event!r}")


def _object(number: int, line: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise ForumExportError(f"line {number}: not JSON: {error.msg}") from error
    return _mapping(number, data, "the line")


def _mapping(number: int, value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ForumExportError(f"line {number}: {what} must be a JSON object")
    return dict(value)


def _text(number: int, data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or (key != "text" and not value):
        raise ForumExportError(f"line {number}: {key} must be a{'' if key == 'text' else ' non-empty'} string")
    return value


def _names(number: int, data: Mapping[str, Any], key: str = "names") -> tuple[str, ...]:
    names = data.get(key, [])
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ForumExportError(f"line {number}: {key} must be a list of strings")
    return tuple(names)


def _time(number: int, value: Any, key: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError) as error:
        raise ForumExportError(f"line {number}: {key} must be an ISO 8601 time") from error
    if moment.tzinfo is None:
        raise ForumExportError(f"line {number}: {key} needs a UTC offset (e.g. +00:00)")
    return moment
