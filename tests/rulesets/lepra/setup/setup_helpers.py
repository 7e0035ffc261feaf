"""Helpers of the Lepra setup tests: a random generator that picks given choices."""
from __future__ import annotations


class FixedChoice:
    """A stand-in generator whose ``choice`` returns a chosen resident (to offer to a given candidate)."""

    def __init__(self, resident):
        self.resident = resident

    def choice(self, pool):
        return next(r for r in pool if r.pk == self.resident.pk)
