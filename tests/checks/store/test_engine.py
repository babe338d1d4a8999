"""The store's PostgreSQL pool pings a connection only after it sat idle, and survives a restart."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from checks.store import engine as store_engine
from checks.store.store import Store
from tests.conftest import PG_ADMIN_URL


@pytest.fixture
def store(pg_url: str) -> Iterator[Store]:
    opened = Store(pg_url)
    yield opened
    opened.close()


def pings(store: Store) -> list[int]:
    """Count the dialect's pings from now on (the real ping runs)."""
    counted: list[int] = []
    dialect = store.engine.dialect
    real = dialect.do_ping

    def counting(dbapi_connection: Any) -> bool:
        counted.append(1)
        return real(dbapi_connection)

    dialect.do_ping = counting  # type: ignore[method-assign]
    return counted


def restart(store: Store) -> None:
    """End every session of the store's database, as a server restart does."""
    database = store.engine.url.database
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            [database],
        )


def one(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(text("SELECT 1")).scalar_one())


def test_a_connection_reused_at_once_is_not_pinged(store: Store) -> None:
    counted = pings(store)
    assert [one(store) for _ in range(20)] == [1] * 20
    assert counted == []


def test_an_idle_connection_found_dead_by_its_ping_is_replaced(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert one(store) == 1
    monkeypatch.setattr(store_engine, "IDLE_PING_S", 0.0)  # every reuse counts as idle
    counted = pings(store)
    restart(store)
    assert one(store) == 1  # a read, not retried: the ping found the dead connection first
    assert len(counted) == 1


def test_a_restart_within_the_idle_window_fails_one_statement_then_the_pool_is_new(
    store: Store,
) -> None:
    assert one(store) == 1
    restart(store)
    with pytest.raises(DBAPIError) as failed:
        one(store)
    assert failed.value.connection_invalidated
    assert one(store) == 1
