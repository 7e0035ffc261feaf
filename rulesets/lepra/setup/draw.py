"""Lepra's setup draws as pure functions (RULES.md L-ASSIGN, L-COMM): the mafia count of a city (L-CITY-2), the
shuffled city lists, the Procurator's numbers and the commissar draw. No ORM, no clock: callers pass the lists and
a random generator (``roles.draw.system_rng()`` in production, L-ASSIGN-3); the lists are committed to with
``roles.draw.commitment`` before the numbers are drawn."""
from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal


def mafia_count(population: int) -> int:
    """Mafia in a city of ``population`` residents: 20% rounded half up, at least 1 (L-CITY-2 [interp]).

    Raises ``ValueError`` for a population below 2 (a city needs an honest resident and a mafioso).
    """
    if population < 2:
        raise ValueError("a city needs at least 2 residents")
    count = int((Decimal(population) * Decimal("0.2")).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return max(1, count)


def shuffled_lists(city_lists: Mapping[int, Sequence[str]], rng: random.Random) -> dict[str, list[str]]:
    """Shuffle each city's list of names with ``rng`` (L-ASSIGN-1). Returns {city number as str: names}."""
    result = {}
    for number in sorted(city_lists):
        names = list(city_lists[number])
        rng.shuffle(names)
        result[str(number)] = names
    return result


def draw_numbers(population: int, count: int, rng: random.Random) -> list[int]:
    """``count`` distinct numbers from 1..``population``, sorted (L-ASSIGN-2, the site drawing for the Procurator)."""
    if not 0 < count <= population:
        raise ValueError("count must be between 1 and the population")
    return sorted(rng.sample(range(1, population + 1), count))


def check_numbers(numbers: Sequence[int], population: int, count: int) -> list[int]:
    """Validate the Procurator's numbers for one city (L-ASSIGN-2): exactly ``count`` distinct integers in
    1..``population``. Returns them sorted; raises ``ValueError`` with the reason otherwise."""
    if len(numbers) != count:
        raise ValueError(f"exactly {count} numbers are needed, {len(numbers)} given")
    if len(set(numbers)) != len(numbers):
        raise ValueError("the numbers must be distinct")
    bad = [n for n in numbers if not 1 <= n <= population]
    if bad:
        raise ValueError(f"numbers must be between 1 and {population}: {bad}")
    return sorted(numbers)


@dataclass
class CommissarDraw:
    """The outcome of one city's commissar draw (L-COMM): the offers in order and the commissar (or None)."""

    offers: list[tuple[str, bool]] = field(default_factory=list)  # (candidate, accepted)
    commissar: str | None = None


def draw_commissar(residents: Sequence[str], is_mafia: Callable[[str], bool], accepts: Callable[[str], bool],
                   rng: random.Random, max_offers: int = 3) -> CommissarDraw:
    """Offer the commissar's post to random distinct residents, at most ``max_offers`` (L-COMM-1, L-COMM-3).

    A mafioso always declines (L-COMM-2); an honest candidate accepts when ``accepts(name)``. Returns the draw;
    ``commissar`` None means the city has no commissar (known to the Procurator only, L-STAFF-6).
    """
    draw = CommissarDraw()
    pool = list(residents)
    for _ in range(min(max_offers, len(pool))):
        candidate = pool.pop(rng.randrange(len(pool)))
        accepted = (not is_mafia(candidate)) and accepts(candidate)
        draw.offers.append((candidate, accepted))
        if accepted:
            draw.commissar = candidate
            break
    return draw
