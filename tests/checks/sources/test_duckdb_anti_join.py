"""NOT EXISTS run as DuckDB's ANTI JOIN: the same rows as written, on real DuckDB."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from checks.settings.limits import Limits
from checks.sources import DuckDBQuerySource
from checks.sources.duckdb_anti_join import anti_joined

SETUP = [
    "CREATE TABLE child (id INTEGER, k VARCHAR, year INTEGER)",
    "INSERT INTO child VALUES (1, 'a', 2020), (2, 'b', 2021), (3, NULL, 2022), (4, 'z', 2023),"
    " (5, 'a', 2024), (6, 'y', NULL)",
    "CREATE TABLE parent (k VARCHAR, year INTEGER)",  # 'a' twice, a NULL key
    "INSERT INTO parent VALUES ('a', 1), ('a', 2), ('b', 3), (NULL, 4)",
]

REWRITTEN = [
    "SELECT count(*) FROM child c WHERE NOT EXISTS (SELECT 1 FROM parent p WHERE p.k = c.k)",
    "SELECT count(*) FROM child c WHERE c.k IS NOT NULL"
    " AND NOT EXISTS (SELECT 1 FROM parent p WHERE p.k = c.k)",
    "SELECT count(DISTINCT k), max(year) FROM child WHERE year > 2020"
    " AND NOT EXISTS (SELECT 1 FROM parent p WHERE p.k = child.k AND p.year < 3)",
    "SELECT count(*) FROM child c WHERE NOT EXISTS (SELECT 1 FROM parent p WHERE p.k = c.k)"
    " AND NOT EXISTS (SELECT 1 FROM parent q WHERE q.year = c.id)",
]
AS_WRITTEN = [
    "SELECT count(*) FROM child c WHERE NOT EXISTS (SELECT 1 FROM parent p WHERE k = c.k)",
    "SELECT count(*) FROM child c WHERE NOT EXISTS (SELECT count(*) FROM parent p WHERE p.k = c.k)",
    "SELECT count(*) FROM child c WHERE NOT EXISTS (SELECT 1 FROM parent p WHERE p.k = c.k)"
    " OR c.id = 1",
    "SELECT count(*) FROM child c WHERE NOT EXISTS (SELECT 1 FROM parent p WHERE p.k = c.k"
    " LIMIT 1)",
    "SELECT count(*) FROM child c JOIN parent p ON p.k = c.k"
    " WHERE NOT EXISTS (SELECT 1 FROM parent q WHERE q.k = c.k)",
    "SELECT count(*) FROM child c WHERE NOT EXISTS (SELECT 1 FROM parent c WHERE c.k = c.k)",
]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("anti") / "anti.duckdb"
    with duckdb.connect(str(path)) as con:
        for sql in SETUP:
            con.execute(sql)
    return path


@pytest.mark.parametrize("sql", REWRITTEN)
def test_a_proven_not_exists_runs_as_an_anti_join_with_the_same_rows(sql: str, db: Path) -> None:
    again = anti_joined(sql)
    assert "ANTI JOIN" in again and "EXISTS" not in again
    with duckdb.connect(str(db), read_only=True) as con:
        written = con.execute(sql)
        expected, names = written.fetchall(), [d[0] for d in written.description]
        joined = con.execute(again)
        assert (joined.fetchall(), [d[0] for d in joined.description]) == (expected, names)


@pytest.mark.parametrize("sql", AS_WRITTEN)
def test_what_is_not_proven_runs_as_written(sql: str) -> None:
    assert anti_joined(sql) == sql


def test_the_values_through_the_source(db: Path) -> None:
    source = DuckDBQuerySource("anti", db, Limits())
    try:
        found = source.query(REWRITTEN[1])
        assert found.rows == [(2,)]  # a and b have parents; the NULL key is left out
        assert "NOT EXISTS" in found.sql and "ANTI" not in found.sql  # the query as written
        assert [r[0] for r in source.query(REWRITTEN[0]).rows] == [3]  # z, y and the NULL key
    finally:
        source.close()
