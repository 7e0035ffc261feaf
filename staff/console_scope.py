"""What a console list shows and accepts by the rulesets of the games it lists (``RulesetScopedList``, the base of
``staff.console.StaffScopedAdmin``): a part of some rulesets' games only (cities, an inbox kind) is a column, a
filter choice and an accepted URL lookup only where a game in the list's scope has it; elsewhere the lookup is
refused as one off the whitelist (``allowed_lookups``), with the same 400 whatever its value."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import ClassVar

from django.contrib import admin
from django.utils.translation import gettext

from kernel.rulesets import ruleset_of


class RulesetScopedList:
    """The ruleset-dependent parts of a console list and object page (a ``ModelAdmin`` mixin). The subclass
    gives ``allowed_lookups`` (the whitelist), ``staff_games(request)`` (the viewer's staff games),
    ``game_lookup`` and ``game_field``; it declares ``city_field`` and ``declared_choices`` where its model has
    them."""

    allowed_lookups: frozenset[str] = frozenset()
    #: The changelist parameter narrowing the list to one of the viewer's games by its slug: the list's scope
    #: (``games_in_scope``) is then that game alone.
    game_lookup: ClassVar[str | None] = None
    #: The field leading to the object's game.
    game_field: ClassVar[str] = "game"
    #: The field leading to the object's city, or None. Cities exist in the games of some rulesets only
    #: (``RulesetSpec.has_cities``): the field's list column, its list filter and its URL lookups are shown and
    #: accepted only when a game in the list's scope has cities.
    city_field: ClassVar[str | None] = None
    #: Choice fields whose values exist in some rulesets' games only: field name -> a function of a ruleset spec
    #: giving the values its games have (an inbox's kind: ``RulesetSpec.inbox_kinds``). Their list filter
    #: (``DeclaredChoicesFilter``) offers, and their ``<field>__exact`` lookup accepts, only the values of the
    #: games in the list's scope (``offered_choices``).
    declared_choices: ClassVar[Mapping[str, Callable]] = MappingProxyType({})

    def staff_games(self, request) -> list:
        """The viewer's staff games (``cities.models.Game``); the subclass says."""
        raise NotImplementedError

    def games_in_scope(self, request) -> list:
        """The games the list covers: the viewer's staff games (``staff_games``), or the one of them the list's
        game parameter (``game_lookup``) names. A parameter naming none of them leaves the scope whole (the list
        is then empty anyway)."""
        games = self.staff_games(request)
        slug = request.GET.get(self.game_lookup) if self.game_lookup else None
        return [game for game in games if game.slug == slug] or games

    def scope_has_cities(self, request) -> bool:
        """True when a game in the list's scope (``games_in_scope``) has cities (``RulesetSpec.has_cities``)."""
        return any(ruleset_of(game).has_cities for game in self.games_in_scope(request))

    def offered_choices(self, request, field: str) -> frozenset[str]:
        """The values of the choice field ``field`` (a key of ``declared_choices``) that the rulesets of the games
        in the list's scope declare."""
        declared = self.declared_choices[field]
        return frozenset().union(*(declared(ruleset_of(game)) for game in self.games_in_scope(request)))

    def _is_city_entry(self, entry) -> bool:
        name = entry[0] if isinstance(entry, (tuple, list)) else entry
        return self.city_field is not None and name == self.city_field

    def get_list_display(self, request):
        """The list's columns; the city column (``city_field``) only when a game in scope has cities."""
        shown = super().get_list_display(request)
        if self.city_field is None or self.scope_has_cities(request):
            return shown
        return [entry for entry in shown if not self._is_city_entry(entry)]

    def get_list_filter(self, request):
        """The list's filters; the city filter (``city_field``) only when a game in scope has cities."""
        filters = super().get_list_filter(request)
        if self.city_field is None or self.scope_has_cities(request):
            return filters
        return [entry for entry in filters if not self._is_city_entry(entry)]

    def get_fields(self, request, obj=None):
        """The object page's fields; the city (``city_field``) only when the object's game (``game_field``) has
        cities."""
        fields = super().get_fields(request, obj)
        if self.city_field is None or obj is None:
            return fields
        if ruleset_of(getattr(obj, self.game_field)).has_cities:
            return fields
        return [name for name in fields if name != self.city_field]

    def lookup_allowed(self, lookup, value, request=None) -> bool:
        """True for a lookup of ``allowed_lookups`` that the list's scope has: one through ``city_field`` only when
        a game in scope has cities, a ``<field>__exact`` of ``declared_choices`` only with an offered value.
        Anything else is refused by the admin (400). Without a request (no scope) those two are refused."""
        if lookup not in self.allowed_lookups:
            return False
        field, _sep, rest = lookup.partition("__")
        if field == self.city_field:
            return request is not None and self.scope_has_cities(request)
        if field in self.declared_choices and rest == "exact":
            return request is not None and value in self.offered_choices(request, field)
        return True


class DeclaredChoicesFilter(admin.ChoicesFieldListFilter):
    """A filter by a choice field of ``RulesetScopedList.declared_choices``: it offers only the values that the
    rulesets of the list's games declare (``offered_choices``), in the field's order, so that a page names no
    kind that exists only in another ruleset's games. A value outside them is refused by ``lookup_allowed``."""

    def __init__(self, field, request, params, model, model_admin, field_path):
        self.offered = model_admin.offered_choices(request, field_path)
        super().__init__(field, request, params, model, model_admin, field_path)

    def choices(self, changelist):
        """The choice of every value, then one choice per offered value (the field's choices are never null)."""
        yield {"selected": self.lookup_val is None,
               "query_string": changelist.get_query_string(remove=[self.lookup_kwarg, self.lookup_kwarg_isnull]),
               "display": gettext("All")}
        for value, title in self.field.flatchoices:
            if value is None or value not in self.offered:
                continue
            yield {"selected": self.lookup_val is not None and str(value) in self.lookup_val,
                   "query_string": changelist.get_query_string({self.lookup_kwarg: value}, [self.lookup_kwarg_isnull]),
                   "display": title}
