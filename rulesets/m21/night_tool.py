"""The host's night tool without a database (RULES.md M-NIGHT-1): read a night file, resolve it, return the
outcome as JSON. ``manage.py resolve_night m21 FILE.json`` is its command; tests and audits call ``run_night_file``.
"""
from __future__ import annotations

import json
from pathlib import Path

from .night import resolve_m21_night
from .night_file import NightFileError, parse_night_file


def resolve_night_json(data: object) -> dict:
    """Resolve one decoded night file; returns the outcome's JSON (``M21NightOutcome.as_json``) with the players'
    names for their seat keys. Raises
    ``NightFileError`` naming the offending field of a malformed file."""
    state, actions = parse_night_file(data)
    return resolve_m21_night(state, actions).as_json(names={s.key: s.name for s in state.seats})


def run_night_file(path: str | Path) -> dict:
    """Read ``path`` (UTF-8 JSON) and resolve it. Raises ``NightFileError`` for an unreadable file, invalid JSON
    (with line and column) or a malformed field."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise NightFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise NightFileError(f"{path}: is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NightFileError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    return resolve_night_json(data)
