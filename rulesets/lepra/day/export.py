"""A Lepra voting day (or judge election) from a JSON-lines export, counted by the Lepra tallies: pure, no ORM, no
clock, no I/O.

``manage.py tally lepra-execution FILE`` prints ``lepra_execution_export``'s result and ``manage.py tally
lepra-election FILE`` prints ``lepra_election_export``'s. Examples with comments: ``rulesets/lepra/examples/README.md``.

Format: UTF-8, one JSON object per line, blank lines ignored. The first line is the header::

    {"opens_at": "2026-03-02T16:00:00+00:00",      # ISO 8601 with a UTC offset
     "closes_at": "2026-03-02T21:00:00+00:00",     # must come after opens_at
     "voters": ["ann", "ben", ...],                # the members with a vote (living residents, spirits)
     "nominees": ["cat", "dan"],                   # execution: the voting inboxes (L-VOTE-1)
     "void_inboxes": ["dan"]}                      # execution, optional: nominees who died during voting (L-VOTE-9)

An election's header names ``"candidates"`` (the precincts, L-JUDGE-4) instead of ``"nominees"`` and has no
``void_inboxes``. Every further line is a message, in any order (the tally orders them by time, then seq)::

    {"seq": 12, "at": "2026-03-02T16:05:00.000001+00:00", "author": "ann", "inbox": "cat", "text": "казнить",
     "proxy": false}

``seq`` is the message id (an integer, unique); ``inbox`` the nominee (candidate) whose inbox (precinct) the
message was posted in; ``proxy`` (optional, default false) marks a proxy vote cast by the site, counted at the
opening (L-NOM-6, L-JUDGE-6).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from rulesets.lepra.day.tally import LepraVoteMessage, tally_lepra_election, tally_lepra_execution


class LepraExportError(ValueError):
    """The export is malformed; the message names the line and what is wrong with it."""


_MESSAGE_FIELDS = {"seq", "at", "author", "inbox", "text", "proxy"}


def lepra_execution_export(lines: Iterable[str]) -> dict[str, Any]:
    """Count a Lepra execution voting export (module docstring) and return
    ``LepraExecutionResult.as_dict()``: per nominee the counted voters, who changed their mind, the latest
    counted vote time; the ranking, the leader, the tied leaders, and every refused message with its seq and
    reason. Raises ``LepraExportError`` for a malformed export."""
    header, messages, number = _read(lines, "nominees", {"void_inboxes"})
    try:
        result = tally_lepra_execution(header["opens_at"], header["closes_at"], header["voters"],
                                       header["nominees"], messages,
                                       void_inboxes=header.get("void_inboxes", ()))
    except ValueError as error:
        raise LepraExportError(f"line {number}: {error}") from error
    return result.as_dict()


def lepra_election_export(lines: Iterable[str]) -> dict[str, Any]:
    """Count a Lepra judge election export (module docstring, header with ``candidates``) and return
    ``LepraElectionResult.as_dict()``: per candidate the pros, cons, score and latest pro vote time; the ranking,
    the winner (null: the election failed) and every refused message. Raises ``LepraExportError``."""
    header, messages, number = _read(lines, "candidates", set())
    try:
        result = tally_lepra_election(header["opens_at"], header["closes_at"], header["voters"],
                                      header["candidates"], messages)
    except ValueError as error:
        raise LepraExportError(f"line {number}: {error}") from error
    return result.as_dict()


def _read(lines: Iterable[str], inboxes: str, optional: set[str]
          ) -> tuple[dict[str, Any], list[LepraVoteMessage], int]:
    """The header (times parsed, name lists checked), the messages, and the header's line number (errors the
    tally finds in the whole export, such as a duplicate seq, are reported against the header line)."""
    numbered = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    if not numbered:
        raise LepraExportError("the export is empty: the first line must be the header")
    number, line = numbered[0]
    data = _object(number, line)
    if "seq" in data:
        raise LepraExportError(f"line {number}: the first line must be the header, not a message")
    required = {"opens_at", "closes_at", "voters", inboxes}
    missing = sorted(required - set(data))
    if missing:
        raise LepraExportError(f"line {number}: missing header field(s): {', '.join(missing)}")
    unknown = sorted(set(data) - required - optional)
    if unknown:
        raise LepraExportError(f"line {number}: unknown header field(s): {', '.join(unknown)}")
    header: dict[str, Any] = {"opens_at": _time(number, data["opens_at"], "opens_at"),
                              "closes_at": _time(number, data["closes_at"], "closes_at")}
    for key in (required | optional) & set(data) - {"opens_at", "closes_at"}:
        header[key] = _names(number, data[key], key)
    seen: dict[int, int] = {}
    messages = []
    for number_, line_ in numbered[1:]:
        message = _message(number_, line_)
        if message.seq in seen:
            raise LepraExportError(f"line {number_}: seq {message.seq} already used on line {seen[message.seq]}")
        seen[message.seq] = number_
        messages.append(message)
    return header, messages, number


def _message(number: int, line: str) -> LepraVoteMessage:
    data = _object(number, line)
    unknown = sorted(set(data) - _MESSAGE_FIELDS)
    if unknown:
        raise LepraExportError(f"line {number}: unknown field(s): {', '.join(unknown)}")
    seq = data.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise LepraExportError(f"line {number}: seq must be an integer")
    for key in ("author", "inbox", "text"):
        value = data.get(key)
        if not isinstance(value, str) or (key != "text" and not value):
            raise LepraExportError(f"line {number}: {key} must be a{'' if key == 'text' else ' non-empty'} string")
    proxy = data.get("proxy", False)
    if not isinstance(proxy, bool):
        raise LepraExportError(f"line {number}: proxy must be true or false")
    return LepraVoteMessage(seq=seq, at=_time(number, data.get("at"), "at"), author=data["author"],
                            inbox=data["inbox"], text=data["text"], proxy=proxy)


def _object(number: int, line: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise LepraExportError(f"line {number}: not JSON: {error.msg}") from error
    if not isinstance(data, Mapping):
        raise LepraExportError(f"line {number}: the line must be a JSON object")
    return dict(data)


def _names(number: int, value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(name, str) and name for name in value):
        raise LepraExportError(f"line {number}: {key} must be a list of non-empty strings")
    return tuple(value)


def _time(number: int, value: Any, key: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError) as error:
        raise LepraExportError(f"line {number}: {key} must be an ISO 8601 time") from error
    if moment.tzinfo is None:
        raise LepraExportError(f"line {number}: {key} needs a UTC offset (e.g. +00:00)")
    return moment
