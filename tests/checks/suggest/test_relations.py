"""Foreign keys: declared in a catalog (DuckDB, PostgreSQL, SQLite), else found by names, values."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest

from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import DuckDBQuerySource, Source, SQLQuerySource
from checks.sql.catalog import ForeignKeyConstraint
from checks.suggest.relations import ForeignKey
from checks.suggest.source_pass import suggest_source

NOW = dt.datetime(2026, 12, 7, tzinfo=dt.UTC)
TABLES = [
    "CREATE TABLE people (pid INTEGER PRIMARY KEY, name VARCHAR(10))",
    "CREATE TABLE orders (oid INTEGER, buyer INTEGER REFERENCES people (pid))",
    "INSERT INTO people VALUES (1, 'Ann'), (2, 'Bob'), (3, 'Cy')",
    "INSERT INTO orders VALUES (10, 1), (11, 1), (12, 2), (13, NULL)",
]


@pytest.fixture(params=["duckdb", "postgres", "sqlite"])
def shop(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Source]:
    """People and their orders, the key declared, on one engine (SQLite: one orphan too)."""
    if request.param == "duckdb":
        path = tmp_path / "fk.duckdb"
        with duckdb.connect(str(path)) as db:
            for statement in TABLES:
                db.execute(statement)
        source: Source = DuckDBQuerySource("fk", path, Limits())
    elif request.param == "sqlite":
        path = tmp_path / "fk.sqlite"
        with sqlite3.connect(path) as db:  # SQLite does not enforce the key by default
            for statement in [*TABLES, "INSERT INTO orders VALUES (14, 9)"]:
                db.execute(statement)
        url = f"sqlite:///{path}"
        source = SQLQuerySource("fk", SQLAlchemySource(type="sqlalchemy", url=url), Limits())
    else:
        url = request.getfixturevalue("empty_pg_url")
        with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as db:
            for statement in TABLES:
                db.execute(statement)
        source = SQLQuerySource("fk", SQLAlchemySource(type="sqlalchemy", url=url), Limits())
    with source:
        yield source


def test_a_declared_key_is_found_where_names_and_values_would_not(shop: Source) -> None:
    assert shop.foreign_keys() == [ForeignKeyConstraint("orders", "buyer", "people", "pid")]
    found = suggest_source(shop, now=NOW)
    orders = next(t for t in found.tables if t.profile.name == "orders")
    (relation,) = [s for s in orders.suggestions if "relationships" in s.check]
    assert relation.check == {
        "name": "buyer in people",
        "relationships": {"table": "orders", "column": "buyer", "to": "people.pid"},
    }
    orphans = 1 if shop.dialect == "sqlite" else 0
    distinct = 2 + orphans
    assert relation.observed == (
        f"{distinct} distinct values, {orphans} not in people.pid (declared) on 2026-12-07"
    )
    assert orders.problems == (
        ["1 of 3 values of orders.buyer (1 row) have no row in people.pid: rows point at nothing"]
        if orphans
        else []
    )


def test_the_flights_keys_found_by_name_and_by_values(flights_source: Source) -> None:
    from checks.suggest.profile import profile_table
    from checks.suggest.relations import foreign_keys

    profiles = [
        profile_table(flights_source, d, budget_s=60, now=NOW) for d in flights_source.catalog()
    ]
    assert flights_source.foreign_keys() == []  # the CSV files declare none
    found, skipped = foreign_keys(flights_source, profiles, budget_s=60)
    assert skipped == []
    assert found == [
        ForeignKey("flights", "carrier", "airlines", "carrier", "name", 16, 0, 0),
        ForeignKey("flights", "tailnum", "planes", "tailnum", "name", 4043, 721, 50094),
        ForeignKey("flights", "origin", "airports", "faa", "values", 3, 0, 0),
        ForeignKey("flights", "dest", "airports", "faa", "values", 105, 4, 7602),
        ForeignKey("weather", "origin", "airports", "faa", "values", 3, 0, 0),
    ]
