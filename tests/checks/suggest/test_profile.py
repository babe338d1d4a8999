"""Profiles on real DuckDB, PostgreSQL and SQLite: exact counts, and each engine's sample."""

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
from checks.suggest.profile import TableProfile, profile_table
from checks.suggest.rules import suggest

NOW = dt.datetime(2026, 12, 3, tzinfo=dt.UTC)
ROWS = [
    (
        i,
        ("new", "paid", "void")[i % 3],
        None if i % 10 == 0 else i * 1.5,
        f"c{i if i <= 15 else i - 15}",  # unique in the first 15 rows only
        f"2026-12-01 {i - 1:02d}:00:00" if i <= 24 else f"2026-12-02 {i - 25:02d}:00:00",
    )
    for i in range(1, 31)
]
CREATE = (
    "CREATE TABLE events (id INTEGER NOT NULL, status VARCHAR(10), amount DOUBLE PRECISION,"
    " code VARCHAR(10), created_at TIMESTAMP)"
)


def _duckdb(folder: Path) -> Source:
    path = folder / "events.duckdb"
    with duckdb.connect(str(path)) as db:
        db.execute(CREATE)
        db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, CAST(? AS TIMESTAMP))", ROWS)
    return DuckDBQuerySource("events", path, Limits())


def _sqlite(folder: Path) -> Source:
    path = folder / "events.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(CREATE)
        db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)", ROWS)
    return SQLQuerySource(
        "events", SQLAlchemySource(type="sqlalchemy", url=f"sqlite:///{path}"), Limits()
    )


@pytest.fixture(params=["duckdb", "postgres", "sqlite"])
def events(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Source]:
    """The events table on one engine."""
    if request.param == "duckdb":
        source = _duckdb(tmp_path)
    elif request.param == "sqlite":
        source = _sqlite(tmp_path)
    else:
        url = request.getfixturevalue("empty_pg_url")
        with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as db:
            db.execute(CREATE)
            with db.cursor() as cursor:
                cursor.executemany("INSERT INTO events VALUES (%s, %s, %s, %s, %s)", ROWS)
        source = SQLQuerySource("events", SQLAlchemySource(type="sqlalchemy", url=url), Limits())
    with source:
        yield source


def _profile(source: Source, **options: int) -> TableProfile:
    (events,) = source.catalog()
    return profile_table(source, events, budget_s=30, now=NOW, **options)


def test_a_whole_table_profiled_exactly(events: Source) -> None:
    found = _profile(events)
    assert (found.rows, found.read, found.sample.how, found.skipped) == (30, 30, "every row", [])
    by = {c.name: c for c in found.columns}
    assert [(c.name, c.family, c.non_null, c.distinct) for c in found.columns] == [
        ("id", "integer", 30, 30),
        ("status", "text", 30, 3),
        ("amount", "float", 27, 27),
        ("code", "text", 30, 15),
        ("created_at", "timestamp", 30, 30),
    ]
    assert (by["id"].low, by["id"].high, by["amount"].low, by["amount"].high) == (1, 30, 1.5, 43.5)
    assert by["created_at"].high == dt.datetime(2026, 12, 2, 5)
    assert by["status"].values == {"new": 10, "paid": 10, "void": 10}
    assert [c.name for c in found.keys] == ["id"]
    assert found.daily == {"created_at": {"2026-12-01": 24, "2026-12-02": 6}}


def test_a_large_table_is_read_on_a_sample_as_its_engine_samples(events: Source) -> None:
    found = _profile(events, sample_above=10)
    how = {
        "duckdb": "a 50 % BERNOULLI sample",
        "postgres": "a 50 % BERNOULLI sample",
        "sqlite": "the first 15 rows the engine returned",
    }
    assert found.rows == 30  # always counted
    assert found.sample.how == how[events.dialect]
    if events.dialect == "sqlite":  # its first rows, in insertion order
        assert found.read == 15
        code = found.column("code")
        assert (code.distinct, code.non_null, code.unique) == (15, 15, False)  # not on all 30
    else:
        assert 0 < found.read < 30
    assert found.column("id").unique == (found.column("id").distinct == found.read)


def test_the_suggested_checks_and_what_they_observed(events: Source) -> None:
    found, notes = suggest(_profile(events), [])
    assert [(s.check["name"], s.observed, s.problem) for s in found] == [
        ("columns and types", "5 columns on 2026-12-03", None),
        ("rows present", "30 rows on 2026-12-03", None),
        ("id present", "no NULL in 30 rows on 2026-12-03", None),
        ("status present", "no NULL in 30 rows on 2026-12-03", None),
        ("amount present", "10.00 % NULL (3) in 30 rows on 2026-12-03", None),
        ("code present", "no NULL in 30 rows on 2026-12-03", None),
        ("created_at present", "no NULL in 30 rows on 2026-12-03", None),
        ("id unique", "id: 30 distinct values in 30 rows, no NULL, on 2026-12-03", None),
        (
            "status values",
            "3 distinct values in 30 rows on 2026-12-03; the commonest 'new' in 10",
            None,
        ),
        ("amount range", "amount from 1.5 to 43.5 (27 values in 30 rows) on 2026-12-03", None),
        (
            "created_at fresh",
            "newest created_at 2026-12-02 05:00:00 (19h old) on 2026-12-03 00:00 UTC",
            None,
        ),
        (
            "daily volume by created_at",
            "6 rows on 2026-12-02 by created_at; 1 day of history before: too few for an anomaly",
            None,
        ),
    ]
    assert [s.check for s in found][-3:] == [
        {
            "name": "amount range",
            "range": {"table": "events", "column": "amount", "min": 0, "max": 48},
        },
        {
            "name": "created_at fresh",
            "freshness": {"table": "events", "column": "created_at", "max_age": "38h"},
        },
        {
            "name": "daily volume by created_at",
            "row_count": {"table": "events"},
            "over": {"column": "created_at", "bucket": "day", "lookback": "1d"},
            "expect": "> 0",  # its 55 days before the first row are no history
        },
    ]
    assert found[4].check["expect"] == "<= 15%"
    assert notes == [
        "events.created_at: 1 day of history before 2026-12-02 (since created_at's first full"
        " day 2026-12-01), fewer than the 7 an anomaly needs: rows every day suggested;"
        " lookout suggest on 2026-12-09 or later suggests the anomaly"
    ]
