"""Give a game and its cities database ids no page could show by chance, so that a crawl can look for the ids
themselves (anywhere in a page: a link, a filter, a form value, a data attribute) rather than for their shape.

The demo game is loaded first, so its ids are 1, 2, 3: numbers every page shows for other reasons (a day, a city's
number, a count). ``move_to_large_ids`` moves the game and its cities to seven-digit ids inside the test's
transaction (the foreign keys are checked at commit on SQLite and PostgreSQL alike, and the test rolls back), and
every row that points at them follows (and the ids the audit log's events hold).
"""
from __future__ import annotations

import re

from cities.models import City, Game, GameEvent

#: The first id a moved game takes; its cities take the next ones. Seven digits holding a 0 and a 1: never part of
#: a public id (whose alphabet has neither), a day, a count or a time a page shows.
FIRST_LARGE_ID = 9_100_401


def _move_row(model, old: int, new: int) -> None:
    """Move the row ``old`` of ``model`` to the id ``new``, and every foreign key that points at it."""
    model._base_manager.filter(pk=old).update(**{model._meta.pk.attname: new})
    for relation in model._meta.get_fields(include_hidden=True):
        if not (relation.auto_created and not relation.concrete and (relation.one_to_many or relation.one_to_one)):
            continue
        field = relation.field
        if field.target_field != model._meta.pk:  # a key to another column (a slug) does not move
            continue
        field.model._base_manager.filter(**{field.attname: old}).update(**{field.attname: new})


def move_to_large_ids(game: Game) -> dict[str, int]:
    """Move ``game`` and its cities to large database ids (``FIRST_LARGE_ID`` on); returns ``{"game": id,
    "city<number>": id}``. Objects read before the move hold the old ids: read them again."""
    moved, cities = {"game": FIRST_LARGE_ID}, {}
    _move_row(Game, game.pk, FIRST_LARGE_ID)
    for offset, city in enumerate(City.objects.filter(game_id=FIRST_LARGE_ID).order_by("number"), start=1):
        moved[f"city{city.number}"] = cities[city.pk] = FIRST_LARGE_ID + offset
        _move_row(City, city.pk, FIRST_LARGE_ID + offset)
    # The audit log's events name cities by id in their payloads ("city", "cities"): they follow too.
    for event in GameEvent.objects.filter(game_id=FIRST_LARGE_ID):
        payload = event.payload or {}
        if isinstance(payload.get("city"), int):
            payload["city"] = cities.get(payload["city"], payload["city"])
        if isinstance(payload.get("cities"), list):
            payload["cities"] = [cities.get(pk, pk) for pk in payload["cities"]]
        GameEvent.objects.filter(pk=event.pk).update(payload=payload)
    return moved


def large_ids_in(body: str, moved: dict[str, int]) -> list[str]:
    """The places of ``body`` that show one of the ``moved`` ids (as a whole number), with their context."""
    numbers = "|".join(str(i) for i in moved.values())
    return [body[max(0, m.start() - 60):m.end() + 20] for m in re.finditer(rf"(?<!\w)(?:{numbers})(?!\w)", body)]

