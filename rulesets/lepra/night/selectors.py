"""Reads of the night pages (DESIGN.md "Layers inside every app": selectors): the cities in order, the living
residents, a commissar's own checks and targets. Viewer scoping stays with the caller, which asks
``inboxes.policies`` (``knows_night_of``) before showing a city's night business."""
from __future__ import annotations

from cities.models import City, Game, LifeStatus, Resident
from rulesets.lepra.models import CommissarCheck
from rulesets.lepra import seats


def cities_in_order(game: Game) -> list[City]:
    """The cities of ``game`` in city order (L-CITY-1)."""
    return list(City.objects.filter(game=game).order_by("number"))


def living_residents(game: Game) -> list[Resident]:
    """The living residents of ``game`` with their cities and public positions (public: who is alive is
    announced, and who the judges are)."""
    return list(Resident.objects.filter(game=game, status=LifeStatus.ALIVE).select_related("city", seats.SEAT))


def own_checks(commissar: Resident) -> list[CommissarCheck]:
    """The checks ``commissar`` made, with their targets (L-NIGHT-5): for the commissar's own page only."""
    return list(CommissarCheck.objects.filter(commissar=commissar).select_related("target"))


def check_targets(commissar: Resident) -> list[Resident]:
    """The living residents of the commissar's city but the commissar (whom a check may name, L-NIGHT-5)."""
    return list(Resident.objects.filter(city=commissar.city_id, status=LifeStatus.ALIVE).exclude(pk=commissar.pk))
