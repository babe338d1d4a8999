"""What a statement would read, estimated before it runs, on real DuckDB and PostgreSQL files.

DuckDB: the tables' row counts × the widths of the columns named, against the
table's own Arrow size (the uncompressed data). PostgreSQL: the plan's scans,
against ``pg_relation_size`` and the rows loaded. SQLite gives none.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest

from checks.errors import QueryRejected
from checks.settings.config import Settings
from checks.settings.limits import Limits
from checks.settings.sources import DuckDBSource, SQLAlchemySource
from checks.sources import Source, open_source
from checks.sources.duckdb_scan import HOW as DUCKDB_HOW
from checks.sources.duckdb_scan import type_width
from checks.sources.postgres_scan import HOW as POSTGRES_HOW

ROWS = 20_000  # under ANALYZE's sample of 30 000 rows: PostgreSQL's reltuples is exact


def settings(tmp_path: Path) -> Settings:
    return Settings(
        store_url=f"sqlite:///{tmp_path}/lookout.db",
        cache_dir=str(tmp_path / "cache"),
        limits=Limits(),
    )


@pytest.fixture
def duck(tmp_path: Path) -> Iterator[tuple[Source, Path]]:
    path = tmp_path / "wide.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute(
            "CREATE TABLE t AS SELECT i::BIGINT AS id, random() AS amount,"
            f" 'item-' || i AS label, (i % 7)::INTEGER AS bucket FROM range({ROWS}) r(i)"
        )
        conn.execute("CREATE TABLE other AS SELECT i::SMALLINT AS code FROM range(300) r(i)")
    config = DuckDBSource(type="duckdb", database=str(path))
    with open_source("duck", config, settings(tmp_path)) as source:
        yield source, path


def test_duckdb_counts_only_the_columns_a_statement_names(duck: tuple[Source, Path]) -> None:
    source, _ = duck
    found = source.estimate_scan("SELECT count(*) FROM t WHERE amount > 0.5")
    assert found is not None
    assert (found.bytes, found.rows, found.how) == (ROWS * 8, ROWS, DUCKDB_HOW)
    both = source.estimate_scan("SELECT sum(bucket) FROM t WHERE id < 10")
    assert both is not None and (both.bytes, both.rows) == (ROWS * (4 + 8), ROWS)
    rows_only = source.estimate_scan("SELECT count(*) FROM t")
    assert rows_only is not None and (rows_only.bytes, rows_only.rows) == (0, ROWS)
    joined = source.estimate_scan("SELECT count(*) FROM t JOIN other ON other.code = t.bucket")
    assert joined is not None
    assert (joined.bytes, joined.rows) == (ROWS * 4 + 300 * 2, ROWS + 300)


def test_duckdb_whole_table_is_within_a_quarter_of_its_arrow_size(
    duck: tuple[Source, Path],
) -> None:
    source, path = duck
    found = source.estimate_scan("SELECT * FROM t")
    assert found is not None
    assert found.bytes == ROWS * (8 + 8 + 16 + 4)
    with duckdb.connect(str(path), read_only=True) as conn:
        real = conn.sql("SELECT * FROM t").to_arrow_table().nbytes
    # Arrow: 8 + 8 + 4 (offset) + ~9.4 characters + 4 per row; the estimate counts 16 per text
    assert 0.8 < found.bytes / real < 1.25, (found.bytes, real)


def test_duckdb_type_widths() -> None:
    assert [type_width(t) for t in ("DECIMAL(4,1)", "DECIMAL(18,2)", "DECIMAL(38,0)")] == [
        2,
        8,
        16,
    ]
    assert [type_width(t) for t in ("VARCHAR", "INTEGER[]", "BOOLEAN", "DATE")] == [16, 16, 1, 4]


def test_a_statement_the_guard_refuses_is_not_estimated(duck: tuple[Source, Path]) -> None:
    source, _ = duck
    with pytest.raises(QueryRejected) as caught:
        source.estimate_scan("DELETE FROM t")
    assert caught.value.rule == "write"


def test_a_runs_statements_estimated_together_a_refused_one_gives_none(
    duck: tuple[Source, Path],
) -> None:
    source, _ = duck
    found = source.estimate_scans(
        ["SELECT count(*) FROM t WHERE amount > 0.5", "DELETE FROM t", "SELECT * FROM nowhere"]
    )
    assert [None if f is None else f.bytes for f in found] == [ROWS * 8, None, None]


@pytest.fixture
def warehouse(empty_pg_url: str) -> Iterator[str]:
    with psycopg.connect(empty_pg_url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE t AS SELECT i::bigint AS id, random() AS amount,"
            " 'item-' || i AS label FROM generate_series(1, %s) i",
            [ROWS],
        )
        conn.execute("CREATE TABLE other AS SELECT i AS code FROM generate_series(1, 300) i")
        conn.execute("CREATE INDEX t_id ON t (id)")
        conn.execute("ANALYZE")
    yield empty_pg_url


def sizes(url: str) -> dict[str, int]:
    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        found = conn.execute(
            "SELECT relname::text, pg_relation_size(oid) FROM pg_class"
            " WHERE relname IN ('t', 'other')"
        ).fetchall()
    return {str(name): int(size) for name, size in found}


def test_postgres_a_full_scan_reads_the_tables_pages(tmp_path: Path, warehouse: str) -> None:
    size = sizes(warehouse)
    config = SQLAlchemySource(type="sqlalchemy", url=warehouse)
    with open_source("pg", config, settings(tmp_path)) as source:
        found = source.estimate_scan("SELECT count(*) FROM t WHERE amount > 0.5")
        assert found is not None
        assert (found.bytes, found.rows, found.how) == (size["t"], ROWS, POSTGRES_HOW)
        # the table's pages hold its rows: about 45 bytes of data and 28 of header each
        assert 40 * ROWS < found.bytes < 120 * ROWS
        joined = source.estimate_scan(
            "SELECT count(*) FROM t JOIN other ON other.code = t.id WHERE t.amount > 0.1"
        )
        assert joined is not None
        # a merge join: other read whole, t through its index (the rows the plan keeps)
        assert ROWS * 0.8 + 300 < joined.rows <= ROWS + 300
        per_row = size["t"] / ROWS
        assert joined.bytes == size["other"] + round((joined.rows - 300) * per_row)
        # an index scan reads the row it finds (its share of the table's pages), not the table
        one = source.estimate_scan("SELECT amount FROM t WHERE id = 5")
        assert one is not None and (one.rows, one.bytes) == (1, round(per_row))
        # together on one connection: one the planner fails (1/0 is folded) gives None
        together = source.estimate_scans(
            ["SELECT count(*) FROM t WHERE id = 1/0", "SELECT count(*) FROM t WHERE amount > 0.5"]
        )
        assert [None if f is None else f.bytes for f in together] == [None, size["t"]]
        # the pooled connection is left clean: a query runs after the estimates
        assert source.query("SELECT count(*) FROM t").rows == [(ROWS,)]


def test_sqlite_gives_no_estimate(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER)")
        conn.execute("INSERT INTO t VALUES (1)")
    config = SQLAlchemySource(type="sqlalchemy", url=f"sqlite:///{path}")
    with open_source("lite", config, settings(tmp_path)) as source:
        assert source.estimate_scan("SELECT count(*) FROM t") is None
