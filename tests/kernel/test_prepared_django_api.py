"""What ``kernel.prepared`` takes from Django's private API, pinned: a Django upgrade that renames, removes or
re-shapes one of these fails here, naming the piece and what ``kernel.prepared`` does with it, instead of turning
a vote into a 500 or, worse, a wrong read. Kept because the benchmark measured its gain on the hot paths (the
vote post's policy reads): when this test fails, adapt ``kernel.prepared`` to the new Django (or drop the query
from the prepared set), re-run the benchmark, and update this test."""
from __future__ import annotations

import inspect

import pytest
from django.db import transaction
from django.db.models import Count, Model
from django.db.models.query import RelatedPopulator, get_related_populators
from django.db.models.sql import Query, UpdateQuery
from django.db.models.sql.compiler import SQLCompiler

from cities.models import Resident
from rulesets.lepra.kinds import LepraInboxKind
from kernel.prepared import PreparedQuery, PreparedUpdate
from tests.factories import CityFactory, InboxFactory, ResidentFactory

pytestmark = pytest.mark.django_db

#: (what, callable, the parameters kernel.prepared passes, by name and in order, ``self`` left out)
SIGNATURES = [
    ("django.db.models.query.get_related_populators", get_related_populators, ["klass_info", "select", "db"]),
    ("RelatedPopulator.populate", RelatedPopulator.populate, ["row", "from_obj"]),
    ("Query.get_compiler", Query.get_compiler, ["using", "connection", "elide_empty"]),
    ("Query.chain", Query.chain, ["klass"]),
    ("Query.clear_select_clause", Query.clear_select_clause, []),
    ("UpdateQuery.add_update_values", UpdateQuery.add_update_values, ["values"]),
    ("SQLCompiler.as_sql", SQLCompiler.as_sql, ["with_limits", "with_col_aliases"]),
    ("SQLCompiler.get_converters", SQLCompiler.get_converters, ["expressions"]),
    ("SQLCompiler.apply_converters", SQLCompiler.apply_converters, ["rows", "converters"]),
    ("Model.from_db", Model.from_db, ["db", "field_names", "values"]),
]


def _parameters(function) -> list[str]:
    return [name for name in inspect.signature(function).parameters if name not in ("self", "cls")]


@pytest.mark.parametrize(("what", "function", "expected"), SIGNATURES, ids=[s[0] for s in SIGNATURES])
def test_the_private_functions_kernel_prepared_calls_keep_their_signatures(what, function, expected):
    assert _parameters(function) == expected, (
        f"Django changed {what}{inspect.signature(function)}: kernel.prepared calls it with {expected}. Adapt "
        f"kernel/prepared.py (PreparedQuery._hydration / _compile, PreparedUpdate._compiler) to the new Django.")


@pytest.fixture
def world():
    city = CityFactory()
    residents = [ResidentFactory(city=city, name=name) for name in ("Anna", "Boris", "Vera")]
    InboxFactory(game=city.game, city=city, kind=LepraInboxKind.CITY, title="Square", members=residents[:2])
    return city, residents


def _build(game_id, name):
    return (Resident.objects.filter(game_id=game_id).exclude(name=name).select_related("city")
            .annotate(n=Count("memberships")).order_by("name"))


def test_a_compiled_query_has_the_compiler_state_kernel_prepared_reads(world):
    city, _residents = world
    compiler = _build(city.game_id, "x").query.get_compiler(using="default")
    sql, params = compiler.as_sql()
    problems = []
    for attribute in ("select", "klass_info", "col_count", "annotation_col_map"):
        if not hasattr(compiler, attribute):
            problems.append(f"SQLCompiler.{attribute} is gone")
    if not problems:
        info = compiler.klass_info
        for key in ("model", "select_fields", "related_klass_infos"):
            if key not in info:
                problems.append(f"SQLCompiler.klass_info has no {key!r}")
        if not all(isinstance(entry, tuple) and len(entry) == 3 for entry in compiler.select):
            problems.append("SQLCompiler.select entries are no longer (expression, (sql, params), alias)")
        else:
            own = compiler.select[info["select_fields"][0]:info["select_fields"][-1] + 1]
            attnames = [getattr(getattr(entry[0], "target", None), "attname", None) for entry in own]
            if attnames != [f.attname for f in Resident._meta.concrete_fields]:
                problems.append(f"the model's own columns are no longer Col(target=field): {attnames}")
        if set(compiler.annotation_col_map or {}) != {"n"}:
            problems.append(f"annotation_col_map is {compiler.annotation_col_map!r}, not {{'n': position}}")
    if not isinstance(getattr(_build(city.game_id, "x").select_for_update().query, "select_for_update", None), bool):
        problems.append("Query.select_for_update is gone (PreparedQuery knows a locking query by it)")
    assert not problems, ("Django's compiler changed what kernel.prepared relies on: " + "; ".join(problems)
                          + ". Adapt kernel/prepared.py to the new Django.")
    assert sql.startswith("SELECT ") and params[-1] == "x"


def test_a_round_trip_gives_the_querysets_rows_from_one_select_and_an_update_from_one_update(world):
    city, residents = world
    query = PreparedQuery(_build, ints=("game_id",), strs=("name",))
    compiled = query.compiled("default")
    assert compiled.sql.startswith("SELECT "), compiled.sql
    assert " JOIN " in compiled.sql and "ORDER BY" in compiled.sql, compiled.sql
    assert sorted(name for _pos, name, _index in compiled.slots) == ["game_id", "name"]
    got = query(game_id=city.game_id, name="Boris")
    expected = list(_build(city.game_id, "Boris"))
    assert [(r.pk, r.name, r.n, r.city.name) for r in got] == [(r.pk, r.name, r.n, r.city.name) for r in expected]
    assert [r.name for r in got] == ["Anna", "Vera"] and [r.n for r in got] == [1, 0]
    assert all(r._state.db == "default" and not r._state.adding for r in got)

    rename = PreparedUpdate(lambda pk, name: (Resident.objects.filter(pk=pk), {"name": name}),
                            ints=("pk",), strs=("name",))
    assert rename.compiled("default").sql.startswith("UPDATE "), rename.compiled("default").sql
    with transaction.atomic():
        assert rename(pk=residents[2].pk, name="Vera K.") == 1
    assert Resident.objects.get(pk=residents[2].pk).name == "Vera K."
