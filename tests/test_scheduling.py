"""The suite's own scheduling under pytest-xdist (tests/conftest.py) names tests that exist: a renamed module or test
would otherwise silently lose its group (its costly fixture or crawl built on both workers again) or its early
start."""
from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import CRAWL_GROUPS, LONG_FIRST, MODULE_GROUPS, PROCESS_TEST_DIRS, xdist_scope

ROOT = Path(__file__).resolve().parent.parent


def test_every_grouped_or_early_path_exists():
    for path in (*PROCESS_TEST_DIRS, *MODULE_GROUPS, *LONG_FIRST):
        assert (ROOT / path).exists(), path


def test_every_crawl_group_names_a_test_that_reads_that_crawl():
    for nodeid, kind in CRAWL_GROUPS.items():
        module, name = nodeid.split("::")
        source = (ROOT / module).read_text()
        body = re.search(rf"^def {name}\(.*?(?=^\S)", source, re.DOTALL | re.MULTILINE)
        assert body, nodeid
        assert f"demo_pages.{kind}(persona)" in body.group(0), nodeid


def test_groups_by_node_id():
    site = next(n for n, kind in CRAWL_GROUPS.items() if kind == "site")
    assert xdist_scope("tests/e2e/test_live.py::test_x") == "processes"
    assert xdist_scope("tests/integration/test_celery_clock.py::test_x[a]") == "processes"
    assert xdist_scope("tests/inboxes/test_lifecycle_leaks.py::test_x[honest]") == \
        "tests/inboxes/test_lifecycle_leaks.py"
    assert xdist_scope(f"{site}[honest]") == "crawl site [honest]"
    assert xdist_scope(f"{site}[mafioso]") != xdist_scope(f"{site}[honest]")
    assert xdist_scope("tests/inboxes/test_page_leaks.py::test_other[honest]") is None
