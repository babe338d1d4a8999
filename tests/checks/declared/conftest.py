"""Fixtures of ``tests/checks/declared``: the shop on both engines.

``shop`` is parametrized over DuckDB and PostgreSQL: every test that takes it
runs on each (see ``tests.checks.declared.shop``; the files and the database
are built once per session in ``tests/conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from checks.sources import Source
from tests.checks.declared.shop import open_shop


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def shop(request: pytest.FixtureRequest) -> Iterator[Source]:
    """The shop tables on each engine in turn."""
    with open_shop(request.param, request) as source:
        yield source
