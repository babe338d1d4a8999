"""Fixtures of the service's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from checks.store.store import Store


@pytest.fixture(scope="module")
def store(pg_url: str) -> Iterator[Store]:
    """The session's PostgreSQL database as a store, one per test module (clean it per test)."""
    opened = Store(pg_url)
    yield opened
    opened.close()
