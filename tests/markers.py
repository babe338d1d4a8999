"""What each test needs, as markers set from its place and its fixtures (``tests/conftest.py``).

The markers (registered in ``pyproject.toml``; ``make test-fast`` leaves out
the first three):

* ``slow``: a test over ~2 s on an idle machine (``pytest --durations``),
  marked where it is written (``@pytest.mark.slow``, or ``pytestmark`` for a
  whole module); every service and browser test is slow too.
* ``service``: real service processes: Celery workers and beat, a
  ``redis-server``, or the machine's Redis.
* ``browser``: headless chromium (``tests/worker/web/test_browser.py``).
* ``postgres``: a PostgreSQL database: a test whose fixtures include one of
  ``POSTGRES_FIXTURES``, or whose parameters name the engine (``postgres``,
  ``postgresql``); else marked where it is written.

pytest-xdist groups (``--dist loadgroup``): a group's tests run on one worker,
one after the other. ``SAME_WORKER`` keeps the tests of an expensive
module-scoped fixture together (else each worker would build it); the tests
that must not run beside each other carry ``xdist_group("alone")`` where they
are written: those whose assertions measure wall time, and the one that writes
a file into ``automations/``. (Other workers still run other tests meanwhile.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.paths import ROOT

BROWSER_MODULES = frozenset({"tests/worker/web/test_browser.py"})
SERVICE_MODULES = frozenset(
    {
        "tests/worker/service/test_service.py",  # celery worker + beat, a private redis-server
        "tests/worker/service/test_broker.py",  # the machine's Redis, the CLI's broker probe
        "tests/worker/service/test_same_report.py",  # a real celery worker on the machine's Redis
    }
)
SLOW_MODULES = BROWSER_MODULES | SERVICE_MODULES
POSTGRES_FIXTURES = frozenset({"pg_url", "empty_pg_url", "shop_pg", "shop_pg_url", "pg_source"})
POSTGRES_PARAMS = frozenset({"postgres", "postgresql"})
SAME_WORKER = {
    "next_minute": "redis-restart",
    "spark_connect_url": "spark",
    "shop_spark_opener": "spark",
}
"""Fixtures whose tests share one worker: fixture name → xdist group.

Spark's: its Connect server is a JVM of about 1 GB that takes most of a minute of
CPU to start, so one worker starts it for every Spark test rather than each worker one.
"""
SAME_WORKER_PARAMS = {"spark": "spark"}
"""Engine parameters (the shop's, ``SHOP_ENGINES``) whose tests share one worker, likewise."""


def _module(item: pytest.Item) -> str:
    return Path(item.path).resolve().relative_to(ROOT).as_posix()


def _uses_postgres(item: pytest.Item) -> bool:
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & POSTGRES_FIXTURES:
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    return any(isinstance(v, str) and v in POSTGRES_PARAMS for v in callspec.params.values())


def _named(value: object, names: dict[str, str]) -> bool:
    return isinstance(value, str) and value in names


def apply(items: list[pytest.Item]) -> None:
    """Add the markers and xdist groups above to the collected ``items``, in place."""
    for item in items:
        module = _module(item)
        if module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
        if module in SERVICE_MODULES:
            item.add_marker(pytest.mark.service)
        if module in BROWSER_MODULES:
            item.add_marker(pytest.mark.browser)
        if _uses_postgres(item):
            item.add_marker(pytest.mark.postgres)
        fixtures = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        params = callspec.params.values() if callspec is not None else ()
        groups = [group for fixture, group in SAME_WORKER.items() if fixture in fixtures]
        groups += [SAME_WORKER_PARAMS[p] for p in params if _named(p, SAME_WORKER_PARAMS)]
        for group in dict.fromkeys(groups):
            item.add_marker(pytest.mark.xdist_group(group))
