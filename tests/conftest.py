"""Shared fixtures: the demo Lepra game built once per test session (seeded), and its personas.

The demo game is the one ``make run`` loads (rulesets.lepra.demo), built with a fixed random seed so that the
personas are stable: a Procurator, the Tribunes of cities 1 and 2, the Arbiter, the Consigliere, a mafioso of
city 1, an honest resident of city 1, the commissar of city 1, the judge of city 1, a resident of city 2, a
logged-out visitor, an account outside the game, and a Django superuser outside the game (L-STAFF-5).

The suite runs in parallel (``make test``: pytest-xdist, ``-n auto``). What keeps the workers apart:
- each worker has its own test database, built from the models (``--no-migrations``): pytest-django suffixes
  its name per worker (``test-db-<pid>_gw0.sqlite3``, ``test_<db>_gw0`` on PostgreSQL), and loads the demo game
  into it once;
- the tests that start processes (Celery worker and beat in ``tests/integration``, the live stack of the browser
  tests in ``tests/e2e``) share one broker (the Redis of ``REDIS_URL``): with ``--dist loadgroup``
  (pyproject.toml) ``pytest_xdist_make_scheduler`` below sends all of them to one worker, one after another, as
  in a serial run; their broker folders, beat schedules and ports are per test;
- caches are per process (local memory); nothing else is shared but the source tree.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from cities.models import Alignment, Game, Resident, StaffRole
from inboxes import knowledge
from rulesets.lepra import seats
from rulesets.lepra.demo import DEMO_SLUG, demo_exists, load_demo_game
from rulesets.lepra.staff_kinds import StaffKind
from tests import lock_scope
from tests.crawl_cache import crawl_cache, demo_pages  # noqa: F401  (fixtures: the leak crawl once per persona)

DEMO_SEED = 20261129
DEMO_NOW = datetime(2026, 11, 20, 7, 0, tzinfo=UTC)  # 10:00 in Moscow, the morning of day 2


#: Folders whose tests start processes (Celery worker and beat, the browser's live stack): one xdist group.
PROCESS_TEST_DIRS = ("tests/integration/", "tests/e2e/")

#: Modules whose tests share a costly fixture of module scope (built on every worker that runs one of them): one
#: xdist group each, so that it is built once.
MODULE_GROUPS = ("tests/inboxes/test_lifecycle_leaks.py", "tests/test_demo_lively.py")

#: Tests that read the session's crawl of one persona (``tests/crawl_cache.py``, kind "site" or "staff"): one xdist
#: group per crawl kind and persona, so that each persona is crawled on one worker only.
CRAWL_GROUPS = {
    "tests/inboxes/test_page_leaks.py::test_pages_show_only_what_the_persona_may_know_L_STAFF_6": "site",
    "tests/test_opaque_ids.py::test_no_site_page_shows_a_sequential_id_of_an_inbox_message_or_resident_L_INBOX_20":
        "site",
    "tests/cities/test_staff_admin.py::test_staff_pages_leak_nothing_L_STAFF_6": "staff",
    "tests/test_opaque_ids.py::test_no_staff_console_page_shows_a_sequential_id_and_the_audit_log_names_no_id_L_INBOX_20":
        "staff",
}

#: Modules of long tests (a minute or more on the 2-core machine), run before the others so that no worker is left
#: with one of them at the end while the other has nothing to do.
LONG_FIRST = ("tests/test_bad_input_fuzz.py", "tests/simulation/", "tests/staff/test_admin_leak_suite.py",
              "tests/test_bench.py", "tests/test_project.py", "tests/inboxes/test_stall.py")


def xdist_scope(nodeid: str) -> str | None:
    """The xdist group of the test ``nodeid`` (``PROCESS_TEST_DIRS``, ``MODULE_GROUPS``, ``CRAWL_GROUPS``), or
    None for a test distributed alone."""
    if nodeid.startswith(PROCESS_TEST_DIRS):
        return "processes"
    module = nodeid.split("::", 1)[0]
    if module in MODULE_GROUPS:
        return module
    function, bracket, param = nodeid.partition("[")
    if function in CRAWL_GROUPS:
        return f"crawl {CRAWL_GROUPS[function]} [{param}" if bracket else None
    return None


def pytest_xdist_make_scheduler(config, log):
    """Under ``--dist loadgroup`` (pyproject.toml), the tests of one group (``xdist_scope``) run on one worker one
    after another; every other test is distributed alone. The process tests go out first (the longest group: the
    other worker is not left idle at the end), then the module groups, the other groups by size (pytest-xdist's
    loadscope reordering), then the single tests in collection order (``LONG_FIRST`` leading).

    The grouping goes by the node id, on the controller: pytest-xdist 3.8's own loadgroup reads the
    ``xdist_group`` mark on the workers and passes it by rewriting node ids, which pytest 9.2's structured node ids
    no longer allow (pytest-xdist issue 1386), so a mark alone would group nothing."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ProcessGroupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid) or super()._split_scope(nodeid)

        def _assign_work_unit(self, node) -> None:
            # The process tests (the longest group), then the module groups, go out first, whatever their counts.
            for scope in reversed(("processes", *MODULE_GROUPS)):
                if scope in self.workqueue:
                    self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return ProcessGroupScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """The tests of ``LONG_FIRST`` first, the rest in their usual order (a stable sort: every worker collects the
    same order, as pytest-xdist requires)."""
    items.sort(key=lambda item: not item.nodeid.startswith(LONG_FIRST))


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Load the seeded demo game once into the test database; each test runs in a rolled-back transaction. The
    benchmark's floor table (an unmanaged model, made by ``manage.py bench`` itself) is made here too, so that a
    transactional test that resets every model's sequence finds it."""
    from django.db import connection

    from bench.models import FloorRow

    with django_db_blocker.unblock():
        with connection.schema_editor() as editor:
            if FloorRow._meta.db_table not in connection.introspection.table_names():
                editor.create_model(FloorRow)
        if not demo_exists():
            load_demo_game(rng=random.Random(DEMO_SEED), now=DEMO_NOW)
    _SESSION["db_blocker"] = django_db_blocker


#: What the session's database fixture leaves for the hooks below (the database blocker).
_SESSION: dict[str, object] = {}


def _flushes_the_database(item) -> bool:
    """Whether the test ``item`` runs outside a rolled-back transaction, so that its teardown empties every table
    (pytest-django's ``transactional_db``, ``live_server``, ``django_db(transaction=True)``)."""
    marker = item.get_closest_marker("django_db")
    return (bool(marker and marker.kwargs.get("transaction"))
            or not {"transactional_db", "live_server"}.isdisjoint(getattr(item, "fixturenames", ())))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a test that emptied the database, put the demo game back (committed) before the next test that runs in
    a transaction: otherwise every later test of the worker that reads the demo would build it again inside its own
    rolled-back transaction. A run of such tests in a row restores it once, after the last of them."""
    result = yield
    blocker = _SESSION.get("db_blocker")
    if (blocker is not None and nextitem is not None and _flushes_the_database(item)
            and not _flushes_the_database(nextitem)):
        with blocker.unblock():
            if not demo_exists():
                load_demo_game(rng=random.Random(DEMO_SEED), now=DEMO_NOW)
    return result


@pytest.fixture(autouse=True)
def _site_language():
    """Each test starts in the site's default language (Russian) and time zone, and leaves them so: a request or a
    test that activated another (an M21 page, an English browser) never decides what the next test of the same
    worker stores or reads, whichever tests pytest-xdist gave that worker before it. A test that calls a service
    of an English game directly speaks its language as the game's pages do (``translation.override``)."""
    from django.conf import settings as django_settings
    from django.utils import timezone as django_timezone
    from django.utils import translation

    translation.activate(django_settings.LANGUAGE_CODE)
    django_timezone.deactivate()
    yield
    translation.activate(django_settings.LANGUAGE_CODE)
    django_timezone.deactivate()


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with this process's cache empty (allauth's rate limits, cached sessions), so that counts
    kept by earlier tests of the same worker never refuse this test's sign-up or login (429). With Redis only this
    process's keys (its ``KEY_PREFIX``) are deleted: the other worker and Celery's broker are left alone."""
    from django.conf import settings as django_settings
    from django.core.cache import cache

    config = django_settings.CACHES["default"]
    if "redis" in config["BACKEND"].lower():
        import redis

        client = redis.Redis.from_url(config["LOCATION"])
        keys = list(client.scan_iter(match=f"{config['KEY_PREFIX']}:*", count=1000))
        if keys:
            client.delete(*keys)
    else:
        cache.clear()


lock_scope.install()


@pytest.fixture(autouse=True)
def _locks_name_their_rows():
    """Fail the test that compiled a ``select_for_update()`` reading several tables without ``of=``
    (``tests/lock_scope.py``): its plain ``FOR UPDATE`` would lock the joined rows (a game's) too. A lock compiled
    before the test (a session fixture) is reported by the test that follows it."""
    before = lock_scope.take_recorded()
    yield
    spread = before + lock_scope.take_recorded()
    assert not spread, "locks that spread to joined rows:\n" + "\n".join(spread)


@dataclass
class Personas:
    """The demo game's personas: each attribute a User (or AnonymousUser), plus their seats."""

    game: Game
    procurator: object
    tribune1: object
    tribune2: object
    arbiter: object
    consigliere: object
    mafioso: object
    honest: object
    commissar: object
    judge: object
    resident2: object
    anonymous: object
    outsider: object
    superuser: object

    def seat(self, name: str) -> Resident:
        """The Resident of persona ``name``."""
        return Resident.objects.get(game=self.game, user=getattr(self, name))

    def all(self) -> dict[str, object]:
        """Persona name -> user, in a stable order."""
        return {name: getattr(self, name) for name in PERSONA_NAMES}


PERSONA_NAMES = ["procurator", "tribune1", "tribune2", "arbiter", "consigliere", "mafioso", "honest", "commissar",
                 "judge", "resident2", "anonymous", "outsider", "superuser"]


@pytest.fixture
def demo(db) -> Personas:
    """The demo game and its personas (rebuilt inside the test if a transactional test flushed it)."""
    return load_personas()


def load_personas() -> Personas:
    """The demo game's personas, read from the database (the demo loaded first if missing); creates the
    outsider and superuser accounts. For fixtures of wider scope that open their own transaction."""
    if not demo_exists():
        load_demo_game(rng=random.Random(DEMO_SEED), now=DEMO_NOW)
    game = Game.objects.get(slug=DEMO_SLUG)
    staff = {r.kind + (str(r.city.number) if r.city else ""): r.user
             for r in StaffRole.objects.filter(game=game).select_related("user", "city")}
    city1 = list(Resident.objects.filter(game=game, city__number=1).select_related("user", seats.SEAT)
                 .order_by("name"))
    city2 = list(Resident.objects.filter(game=game, city__number=2).select_related("user", seats.SEAT)
                 .order_by("name"))

    def plain(r: Resident) -> bool:
        return not (seats.is_commissar(r) or seats.is_judge(r) or seats.is_godfather(r))

    User = get_user_model()
    outsider = User.objects.create_user("outsider", "outsider@example.com", "x-secret-123", display_name="Outsider")
    superuser = User.objects.create_superuser("root", "root@example.com", "x-secret-123", display_name="SiteRoot")
    return Personas(
        game=game,
        procurator=staff[StaffKind.PROCURATOR],
        tribune1=staff["tribune1"],
        tribune2=staff["tribune2"],
        arbiter=staff[StaffKind.ARBITER],
        consigliere=staff[StaffKind.CONSIGLIERE],
        mafioso=next(r.user for r in city1 if r.alignment == Alignment.MAFIA and plain(r)),
        honest=next(r.user for r in city1 if r.alignment == Alignment.HONEST and plain(r)),
        commissar=next(r.user for r in city1 if seats.is_commissar(r)),
        judge=next(r.user for r in city1 if seats.is_judge(r)),
        resident2=next(r.user for r in city2 if r.alignment == Alignment.HONEST and plain(r)),
        anonymous=AnonymousUser(),
        outsider=outsider,
        superuser=superuser,
    )


def knows_rank(viewer, resident: Resident, key: str) -> bool:
    """Whether ``viewer`` may learn that ``resident`` holds the secret rank ``key`` of its game's ruleset ("commissar",
    "godfather" in Lepra), as the access policy decides it (``inboxes.knowledge.knows_seat_role``)."""
    return knowledge.knows_seat_role(viewer, resident, knowledge.seat_role(resident.game, key))


def fresh(user):
    """``user`` reloaded from the database (drops the policy's per-request caches); AnonymousUser as is."""
    if not getattr(user, "is_authenticated", False):
        return user
    return get_user_model().objects.get(pk=user.pk)
