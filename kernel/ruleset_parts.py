"""The value types a ruleset's spec (``kernel.rulesets.RulesetSpec``) is made of: an archive section it renders, the
defaults of its clock, and a secret rank of its seats with who may learn it."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import time
from typing import Any


@dataclass(frozen=True)
class ArchiveSection:
    """One section of a game's archive page, made by its ruleset: ``key`` (of ``archive_sections``), a ``title``
    and ``html``, safe HTML the ruleset rendered from its own templates (every value escaped there)."""

    key: str
    title: str
    html: str


@dataclass(frozen=True)
class PhasePlan:
    """Defaults of a ruleset's day/night clock. ``day_start``: wall-clock start of a day in the game's zone (a
    game day is a calendar day there); ``extra``: further ruleset-specific defaults (names documented by the
    ruleset)."""

    day_start: time = time(10, 0)
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SeatRole:
    """A secret rank a seat may hold in a ruleset's games (``RulesetSpec.seat_roles``) and who may learn it: one
    row of the knowledge matrix, evaluated by the access policy (``inboxes.knowledge.knows_seat_role``).

    ``key`` names it (``data-fact`` on pages, keys of exports); ``heading`` and ``label`` are how pages show it
    (lazily translated). Besides everyone once the game is over, it is known to: ``staff_kinds`` (holders of these
    staff roles anywhere in the game), ``city_staff_kinds`` (those of the seat's city), every seat once an announced
    death disclosed the seat's alignment when ``disclosed_by_announcement``; ``peers``: a seat that holds the rank
    knows the others who held it at its knowledge cutoff; ``city_alignment``: a seat of that alignment in the same
    city knows who held it at its knowledge cutoff (knowledge is dated: a dead seat knows the moment of its death).
    ``roster_heading``: when set, the game page lists the living holders a viewer may know under it.
    """

    key: str
    heading: Any
    label: Any
    staff_kinds: tuple[str, ...] = ()
    city_staff_kinds: tuple[str, ...] = ()
    disclosed_by_announcement: bool = False
    peers: bool = False
    city_alignment: str | None = None
    roster_heading: Any = None
