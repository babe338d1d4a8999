"""A DuckDB source's tables from Parquet, CSV and JSON-lines files and globs, written here.

Every file is real, written by DuckDB's own ``COPY … TO`` (or as text), and
read back through the source's cache file and its query processes.
"""

from __future__ import annotations

import datetime as dt
import gzip
import os
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pydantic import ValidationError

from checks.errors import ConfigError, SourceError
from checks.report import CheckOutcome
from checks.settings.config import Settings, load_settings
from checks.settings.sources import DuckDBSource, TableFile
from checks.sources import DuckDBQuerySource, Source, open_source
from tests.checks.declared.shop import one

# 6 orders: id 3 twice, two NULL customers, exact amounts, zoned times.
ORDERS = """
SELECT * FROM (VALUES
  (1::BIGINT, 'ann', 10.50::DECIMAL(18,2), TIMESTAMPTZ '2026-03-01 09:00:00+01'),
  (2, NULL,  0.01, TIMESTAMPTZ '2026-03-01 10:00:00+00'),
  (3, 'bob', 99999999.99, TIMESTAMPTZ '2026-03-02 23:30:00-05'),
  (3, 'bob', 1.00, NULL),
  (4, NULL, -2.50, TIMESTAMPTZ '2026-03-03 00:00:00+00'),
  (5, 'cy', NULL, TIMESTAMPTZ '2026-03-04 12:00:00+00')
) AS t(id, customer, amount, placed_at)
"""
UTC = dt.UTC


def write(path: Path, sql: str, options: str) -> Path:
    """Write ``sql``'s rows to ``path`` with DuckDB's ``COPY … TO`` (times in UTC)."""
    with duckdb.connect() as conn:
        conn.execute("SET TimeZone = 'UTC'")
        quoted = str(path).replace("'", "''")
        conn.execute(f"COPY ({sql}) TO '{quoted}' ({options})")
    return path


def open_files(tmp_path: Path, tables: dict[str, str | TableFile], name: str = "lake") -> Source:
    config = DuckDBSource(type="duckdb", tables=tables)
    return open_source(name, config, Settings(cache_dir=str(tmp_path / "cache")))


def cache_files(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "cache" / "sources").iterdir())


@pytest.fixture(scope="module")
def formats(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Source]:
    """The same orders as Parquet, CSV and JSON lines, one table each, in one source."""
    folder = tmp_path_factory.mktemp("formats")
    parquet = write(folder / "orders.parquet", ORDERS, "FORMAT parquet")
    csv = write(folder / "orders.csv", ORDERS, "FORMAT csv, HEADER")
    jsonl = write(folder / "orders.jsonl", ORDERS, "FORMAT json")
    tables: dict[str, str | TableFile] = {
        "orders_parquet": str(parquet),
        "orders_csv": str(csv),
        "orders_json": str(jsonl),
    }
    with open_files(folder, tables) as source:
        yield source


def test_parquet_values_and_types_come_back_exactly(formats: Source) -> None:
    columns = {c.name: c.type for c in formats.table_columns("orders_parquet")}
    assert columns == {
        "id": "BIGINT",
        "customer": "VARCHAR",
        "amount": "DECIMAL(18,2)",
        "placed_at": "TIMESTAMP WITH TIME ZONE",
    }
    rows = formats.query(
        "SELECT id, customer, amount, placed_at FROM orders_parquet ORDER BY id, amount"
    ).rows
    assert rows == [
        (1, "ann", Decimal("10.50"), dt.datetime(2026, 3, 1, 8, 0, tzinfo=UTC)),
        (2, None, Decimal("0.01"), dt.datetime(2026, 3, 1, 10, 0, tzinfo=UTC)),
        (3, "bob", Decimal("1.00"), None),
        (3, "bob", Decimal("99999999.99"), dt.datetime(2026, 3, 3, 4, 30, tzinfo=UTC)),
        (4, None, Decimal("-2.50"), dt.datetime(2026, 3, 3, 0, 0, tzinfo=UTC)),
        (5, "cy", None, dt.datetime(2026, 3, 4, 12, 0, tzinfo=UTC)),
    ]
    assert formats.query("SELECT sum(amount) FROM orders_parquet").rows == [
        (Decimal("100000009.00"),)  # 10.50 + 0.01 + 99999999.99 + 1.00 - 2.50
    ]


def test_csv_and_json_lines_read_the_same_rows(formats: Source) -> None:
    parquet = "SELECT id, customer, amount, placed_at FROM orders_parquet"
    for table in ("orders_csv", "orders_json"):
        same = formats.query(
            f"SELECT count(*) FROM ({parquet} EXCEPT ALL"
            f" SELECT id, customer, amount::DECIMAL(18,2), placed_at::TIMESTAMPTZ FROM {table})"
        ).rows
        assert same == [(0,)], table
        assert formats.query(f"SELECT count(*) FROM {table}").rows == [(6,)]
    json_types = {c.name: c.type for c in formats.table_columns("orders_json")}
    assert json_types["id"] == "BIGINT" and json_types["customer"] == "VARCHAR"


@pytest.mark.parametrize("table", ["orders_parquet", "orders_csv", "orders_json"])
def test_typed_checks_give_exact_counts_on_each_format(formats: Source, table: str) -> None:
    rows = one(formats, {"row_count": {"table": table}, "expect": "== 6"})
    assert (rows.outcome, rows.value) == (CheckOutcome.PASSED, 6)
    missing = one(formats, {"missing": {"table": table, "column": "customer"}})
    assert missing.metrics == {
        "rows_in_scope": 6,
        "missing": 2,
        "missing_percent": 100 * 2 / 6,
        "compared": "missing",
    }
    assert (missing.outcome, missing.value) == (CheckOutcome.FAILED, 2)
    twice = one(formats, {"duplicates": {"table": table, "columns": ["id"]}})
    assert (twice.outcome, twice.value) == (CheckOutcome.FAILED, 1)  # id 3's second row
    assert twice.metrics["rows_in_scope"] == 6


def test_a_glob_of_three_files_is_one_table_and_a_new_file_is_seen(tmp_path: Path) -> None:
    events = tmp_path / "events"
    events.mkdir()
    for day, rows in ((1, 2), (2, 3), (3, 4)):
        write(
            events / f"2026-01-0{day}.parquet",
            f"SELECT range AS n, DATE '2026-01-0{day}' AS day FROM range({rows})",
            "FORMAT parquet",
        )
    (events / "notes.txt").write_text("not matched\n")
    pattern = str(events / "*.parquet")
    with open_files(tmp_path, {"events": pattern}) as source:
        assert source.query("SELECT count(*), count(DISTINCT day) FROM events").rows == [(9, 3)]
        assert isinstance(source, DuckDBQuerySource)
        assert source.origins == {"events": f"3 Parquet files matching {pattern}"}
        first = source.path
        assert "origin" not in source.describe("events")  # files have no version to show
    # a fourth file with a column the others lack: columns are matched by name
    write(
        events / "2026-01-04.parquet",
        "SELECT 7 AS n, DATE '2026-01-04' AS day, 'late' AS note",
        "FORMAT parquet",
    )
    with open_files(tmp_path, {"events": pattern}) as source:
        assert isinstance(source, DuckDBQuerySource) and source.path != first
        assert source.query("SELECT count(*), count(note) FROM events").rows == [(10, 1)]
        assert source.query("SELECT n, note FROM events WHERE day = '2026-01-04'").rows == [
            (7, "late")
        ]
        assert source.origins["events"] == f"4 Parquet files matching {pattern}"
    assert cache_files(tmp_path) == sorted([first.name, source.path.name])


def test_a_recursive_glob_of_json_lines_and_an_explicit_format(tmp_path: Path) -> None:
    for month in ("01", "02"):
        (tmp_path / "logs" / month).mkdir(parents=True)
        (tmp_path / "logs" / month / f"2026-{month}.jsonl").write_text(
            f'{{"status": 200, "month": "{month}"}}\n{{"status": 500, "month": "{month}"}}\n'
        )
    (tmp_path / "export.data").write_text("k;v\na;1\nb;-\n")
    (tmp_path / "array.json").write_text('[{"x": 1.5}, {"x": null}, {"x": 2}]')
    with gzip.open(tmp_path / "zipped.jsonl.gz", "wt") as zipped:
        zipped.write('{"x": "a"}\n{"x": "b"}\n')
    tables: dict[str, str | TableFile] = {
        "requests": str(tmp_path / "logs" / "**" / "*.jsonl"),
        "export": TableFile(path=str(tmp_path / "export.data"), format="csv", null_strings=["-"]),
        "array": str(tmp_path / "array.json"),
        "zipped": str(tmp_path / "zipped.jsonl.gz"),
    }
    with open_files(tmp_path, tables) as source:
        assert source.query(
            "SELECT month, count(*), sum(status) FROM requests GROUP BY month ORDER BY month"
        ).rows == [("01", 2, 700), ("02", 2, 700)]
        assert source.query("SELECT k, v FROM export ORDER BY k").rows == [("a", 1), ("b", None)]
        assert source.query("SELECT sum(x), count(*) FROM array").rows == [(3.5, 3)]
        assert source.query("SELECT string_agg(x, '' ORDER BY x) FROM zipped").rows == [("ab",)]


def test_a_glob_matching_nothing_names_the_source_the_table_and_the_pattern(
    tmp_path: Path,
) -> None:
    pattern = str(tmp_path / "events" / "*.parquet")
    with pytest.raises(SourceError) as caught:
        open_files(tmp_path, {"events": pattern})
    assert str(caught.value) == f"source lake: table events: no file matches {pattern}"


def test_a_corrupt_parquet_file_fails_the_build_and_keeps_the_cache_built_before(
    tmp_path: Path,
) -> None:
    write(tmp_path / "a.parquet", "SELECT 1 AS n", "FORMAT parquet")
    pattern = str(tmp_path / "*.parquet")
    with open_files(tmp_path, {"events": pattern}) as source:
        assert source.query("SELECT sum(n) FROM events").rows == [(1,)]
        assert isinstance(source, DuckDBQuerySource)
        good = source.path
    stamp = good.stat().st_mtime_ns
    (tmp_path / "b.parquet").write_bytes(b"PAR1 this is not a Parquet file")
    with pytest.raises(SourceError) as caught:
        open_files(tmp_path, {"events": pattern})
    bad = tmp_path / "b.parquet"
    assert str(caught.value) == (
        f"source lake: table events: cannot read 2 Parquet files matching {pattern}:"
        f" Invalid Input Error: No magic bytes found at end of file '{bad}'"
    )
    assert cache_files(tmp_path) == [good.name]  # no partial file left, the good one kept
    assert good.stat().st_mtime_ns == stamp
    bad.unlink()
    with open_files(tmp_path, {"events": pattern}) as source:
        assert isinstance(source, DuckDBQuerySource) and source.path == good
        assert source.query("SELECT sum(n) FROM events").rows == [(1,)]


def test_a_glob_of_two_formats_and_an_unknown_name_are_errors(tmp_path: Path) -> None:
    write(tmp_path / "a.parquet", "SELECT 1 AS n", "FORMAT parquet")
    write(tmp_path / "b.csv", "SELECT 2 AS n", "FORMAT csv, HEADER")
    with pytest.raises(SourceError) as caught:
        open_files(tmp_path, {"mixed": str(tmp_path / "*")})
    assert str(caught.value) == (
        "source lake: table mixed: its files are not of one format"
        " (b.csv is CSV, a.parquet is Parquet)"
    )
    (tmp_path / "t.xlsx").write_text("x")
    with pytest.raises(SourceError) as caught:
        open_files(tmp_path, {"odd": str(tmp_path / "t.xlsx")})
    assert str(caught.value) == (
        "source lake: table odd: t.xlsx is not a CSV, Parquet or JSON file"
        " (set format: parquet, csv or json)"
    )
    assert cache_files(tmp_path) == []


def test_a_delta_folder_written_as_a_file_path_says_what_to_write(tmp_path: Path) -> None:
    (tmp_path / "orders" / "_delta_log").mkdir(parents=True)
    path = str(tmp_path / "orders")
    with pytest.raises(SourceError) as caught:
        open_files(tmp_path, {"orders": path})
    assert str(caught.value) == (
        f"source lake: table orders: file {path} is a Delta table: write {{path: …, format: delta}}"
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"path": "a.parquet", "null_strings": ["-"], "format": "parquet"}, "CSV files only"),
        ({"path": "a.csv", "table": "ns.t"}, "table applies to format: iceberg only"),
        ({"format": "csv"}, "path is required"),
        ({"format": "iceberg", "catalog": "sqlite:///c.db"}, "needs catalog"),
        (
            {"format": "iceberg", "path": "m.metadata.json", "table": "ns.t"},
            "path (its metadata file) or catalog and table, not both",
        ),
        ({"path": "a.csv", "format": "xlsx"}, "'parquet', 'csv', 'json', 'delta' or 'iceberg'"),
    ],
)
def test_a_table_entry_of_the_wrong_shape_is_refused_at_load(
    entry: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        DuckDBSource.model_validate({"type": "duckdb", "tables": {"t": entry}})
    assert message in str(caught.value)


@pytest.mark.slow
def test_the_cache_key_covers_each_file_of_a_glob(tmp_path: Path) -> None:
    write(tmp_path / "a.csv", "SELECT 1 AS n", "FORMAT csv, HEADER")
    write(tmp_path / "b.csv", "SELECT 2 AS n", "FORMAT csv, HEADER")
    pattern = str(tmp_path / "*.csv")
    with open_files(tmp_path, {"t": pattern}) as source:
        assert source.query("SELECT sum(n) FROM t").rows == [(3,)]
    (tmp_path / "b.csv").write_text("n\n5\n")
    os.utime(tmp_path / "b.csv", ns=(1, 1))  # a changed file, whatever the clock did
    with open_files(tmp_path, {"t": pattern}) as source:
        assert source.query("SELECT sum(n) FROM t").rows == [(6,)]
    (tmp_path / "b.csv").unlink()
    with open_files(tmp_path, {"t": pattern}) as source:
        assert source.query("SELECT sum(n) FROM t").rows == [(1,)]
    assert len(cache_files(tmp_path)) == 3


def test_an_iceberg_catalog_password_is_a_secret_of_the_settings() -> None:
    entry = {"format": "iceberg", "catalog": "postgresql://ice:s3cr3t@db/cat", "table": "ns.t"}
    settings = Settings.model_validate(
        {"sources": {"lake": {"type": "duckdb", "tables": {"t": entry}}}}
    )
    assert "s3cr3t" in settings.secrets()


@pytest.mark.parametrize(
    ("entry", "where", "message"),
    [
        (
            '{path: "e/*.parquet", format: parquet, null_strings: ["-"]}',
            "sources.lake.tables.events.null_strings:5:68",
            "null_strings applies to CSV files only",
        ),
        (
            "{format: csv}",
            "sources.lake.tables.events.path:5:15",
            "path is required (a file, a glob or a Delta table's folder)",
        ),
        (
            '{format: iceberg, catalog: "sqlite:///c.db"}',
            "sources.lake.tables.events.table:5:15",
            "an Iceberg table needs catalog (a SQL catalog URI) and table (namespace.name),"
            " or path (its metadata file)",
        ),
    ],
)
def test_a_wrong_table_entry_in_the_config_file_is_shown_at_its_key(
    tmp_path: Path, entry: str, where: str, message: str
) -> None:
    config = tmp_path / "lookout.yaml"
    config.write_text(f"sources:\n  lake:\n    type: duckdb\n    tables:\n      events: {entry}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(config, env={})
    error = caught.value
    assert (f"{error.field}:{error.line}:{error.column}", error.message) == (where, message)
