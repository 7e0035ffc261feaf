"""The one reader of environment variables (DESIGN.md "Settings and services").

Every variable the site reads is listed in ``.env.example``. Settings modules call these helpers; no other
module reads ``os.environ``.
"""
from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str | None:
    """Return the variable ``name`` as a string, or ``default`` when it is unset or empty."""
    value = os.environ.get(name)
    return default if value in (None, "") else value


def env_required(name: str) -> str:
    """Return the variable ``name``; raise ``ImproperlyConfigured`` when it is unset or empty."""
    value = env_str(name)
    if value is None:
        raise ImproperlyConfigured(f"The environment variable {name} must be set.")
    return value


def env_bool(name: str, default: bool) -> bool:
    """Return the variable ``name`` as a bool (1/true/yes/on or 0/false/no/off); raise on anything else."""
    value = os.environ.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use 1/0, true/false, yes/no, on/off).")


def env_int(name: str, default: int) -> int:
    """Return the variable ``name`` as an int; raise ``ImproperlyConfigured`` when it is not one."""
    value = env_str(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer.") from exc


def env_float(name: str, default: float) -> float:
    """Return the variable ``name`` as a float; raise ``ImproperlyConfigured`` when it is not one."""
    value = env_str(name)
    if value is None:
        return default
    try:
        return float(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number.") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    """Return the variable ``name`` split on commas, blanks dropped, or ``default`` when unset."""
    value = env_str(name)
    if value is None:
        return list(default)
    return [part.strip() for part in value.split(",") if part.strip()]
