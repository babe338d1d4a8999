"""Delta Lake and Iceberg tables of a DuckDB source, written here by their own libraries.

Delta tables are written by delta-rs (``deltalake.write_deltalake``), Iceberg
tables by pyiceberg into a local SQLite catalog; both are read back through
the source's cache file, at the version found when the source opened.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyiceberg.catalog.sql import SqlCatalog

from checks.agent.tools import ToolBox
from checks.errors import SourceError
from checks.report import CheckOutcome
from checks.settings.config import Settings
from checks.settings.limits import Limits
from checks.settings.sources import DuckDBSource, TableFile
from checks.sources import DuckDBQuerySource, Source, open_source
from tests.checks.declared.shop import one
from tests.paths import ROOT

UTC = dt.UTC
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("customer", pa.string()),
        ("amount", pa.decimal128(18, 2)),
        ("placed_at", pa.timestamp("us", tz="UTC")),
    ]
)
FIRST = {  # id 3 twice, one NULL customer
    "id": [1, 2, 3, 3],
    "customer": ["ann", None, "bob", "bob"],
    "amount": [Decimal("10.50"), Decimal("0.01"), Decimal("99999999.99"), None],
    "placed_at": [
        dt.datetime(2026, 3, 1, 8, tzinfo=UTC),
        dt.datetime(2026, 3, 1, 10, tzinfo=UTC),
        None,
        dt.datetime(2026, 3, 3, 4, 30, tzinfo=UTC),
    ],
}
SECOND = {  # another NULL customer, no new duplicate
    "id": [4, 5],
    "customer": [None, "cy"],
    "amount": [Decimal("-2.50"), Decimal("1.00")],
    "placed_at": [dt.datetime(2026, 3, 4, tzinfo=UTC), dt.datetime(2026, 3, 5, tzinfo=UTC)],
}
TYPES = {
    "id": "BIGINT",
    "customer": "VARCHAR",
    "amount": "DECIMAL(18,2)",
    "placed_at": "TIMESTAMP WITH TIME ZONE",
}


def batch(rows: dict[str, list[Any]]) -> pa.Table:
    return pa.table(rows, schema=SCHEMA)


def open_lake(tmp_path: Path, tables: dict[str, str | TableFile]) -> Source:
    config = DuckDBSource(type="duckdb", tables=tables)
    return open_source("lake", config, Settings(cache_dir=str(tmp_path / "cache")))


def assert_counts(source: Source, rows: int, missing: int, surplus: int) -> None:
    """row_count, missing (customer) and duplicates (id) on ``orders``, exactly."""
    counted = one(source, {"row_count": {"table": "orders"}, "expect": f"== {rows}"})
    assert (counted.outcome, counted.value) == (CheckOutcome.PASSED, rows)
    nulls = one(source, {"missing": {"table": "orders", "column": "customer"}})
    assert (nulls.value, nulls.metrics["rows_in_scope"]) == (missing, rows)
    twice = one(source, {"duplicates": {"table": "orders", "columns": ["id"]}})
    assert (twice.outcome, twice.value) == (CheckOutcome.FAILED, surplus)


@pytest.mark.slow
def test_a_delta_table_is_read_at_its_version_and_rebuilt_at_the_next(tmp_path: Path) -> None:
    lake = tmp_path / "lake" / "orders"
    write_deltalake(lake, batch(FIRST))
    entry = TableFile(path=str(lake), format="delta")
    with open_lake(tmp_path, {"orders": entry}) as source:
        assert {c.name: c.type for c in source.table_columns("orders")} == TYPES
        assert source.query("SELECT * FROM orders ORDER BY id, amount").rows == [
            (1, "ann", Decimal("10.50"), dt.datetime(2026, 3, 1, 8, tzinfo=UTC)),
            (2, None, Decimal("0.01"), dt.datetime(2026, 3, 1, 10, tzinfo=UTC)),
            (3, "bob", Decimal("99999999.99"), None),
            (3, "bob", None, dt.datetime(2026, 3, 3, 4, 30, tzinfo=UTC)),
        ]
        assert source.describe("orders")["origin"] == f"Delta table {lake}, version 0"
        tools = ToolBox(source, goal="orders", limits=Limits(), list_cap=5)
        assert tools.describe_data_set("orders")["origin"] == f"Delta table {lake}, version 0"
        assert_counts(source, rows=4, missing=1, surplus=1)
        assert isinstance(source, DuckDBQuerySource)
        first = source.path
    write_deltalake(lake, batch(SECOND), mode="append")
    with open_lake(tmp_path, {"orders": entry}) as source:
        assert isinstance(source, DuckDBQuerySource) and source.path != first
        assert source.origins == {"orders": f"Delta table {lake}, version 1"}
        assert_counts(source, rows=6, missing=2, surplus=1)
        assert source.query("SELECT sum(amount) FROM orders").rows == [(Decimal("100000009.00"),)]
    assert first.is_file()  # the build of version 0 is kept
    shutil.rmtree(lake)  # written again from scratch: version 0 again, other rows
    write_deltalake(lake, batch(SECOND))
    with open_lake(tmp_path, {"orders": entry}) as source:
        assert isinstance(source, DuckDBQuerySource) and source.path != first
        assert source.origins == {"orders": f"Delta table {lake}, version 0"}
        assert source.query("SELECT id FROM orders ORDER BY id").rows == [(4,), (5,)]


def test_a_delta_path_that_is_not_a_delta_table(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    for path, why in [
        (
            tmp_path / "plain",
            f"{tmp_path / 'plain'} is not a Delta table (it has no _delta_log folder)",
        ),
        (tmp_path / "nope", f"Delta table {tmp_path / 'nope'} not found"),
    ]:
        with pytest.raises(SourceError) as caught:
            open_lake(tmp_path, {"orders": TableFile(path=str(path), format="delta")})
        assert str(caught.value) == f"source lake: table orders: {why}"
    assert not (tmp_path / "cache" / "sources").exists()


def iceberg_catalog(tmp_path: Path) -> tuple[SqlCatalog, str]:
    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    (tmp_path / "warehouse").mkdir()
    catalog = SqlCatalog("default", uri=uri, warehouse=(tmp_path / "warehouse").as_uri())
    catalog.create_namespace("sales")
    return catalog, uri


@pytest.mark.slow
def test_an_iceberg_table_is_read_at_its_snapshot_and_rebuilt_at_the_next(
    tmp_path: Path,
) -> None:
    catalog, uri = iceberg_catalog(tmp_path)
    table = catalog.create_table("sales.orders", schema=SCHEMA)
    table.append(batch(FIRST))
    snapshot = table.current_snapshot()
    assert snapshot is not None
    first_metadata = table.metadata_location
    entry = TableFile(format="iceberg", catalog=uri, table="sales.orders")
    with open_lake(tmp_path, {"orders": entry}) as source:
        assert {c.name: c.type for c in source.table_columns("orders")} == TYPES
        assert source.query(
            "SELECT id, amount, placed_at FROM orders ORDER BY id, amount"
        ).rows == [
            (1, Decimal("10.50"), dt.datetime(2026, 3, 1, 8, tzinfo=UTC)),
            (2, Decimal("0.01"), dt.datetime(2026, 3, 1, 10, tzinfo=UTC)),
            (3, Decimal("99999999.99"), None),
            (3, None, dt.datetime(2026, 3, 3, 4, 30, tzinfo=UTC)),
        ]
        origin = f"Iceberg table sales.orders, snapshot {snapshot.snapshot_id}"
        assert source.describe("orders")["origin"] == origin
        assert_counts(source, rows=4, missing=1, surplus=1)
        assert isinstance(source, DuckDBQuerySource)
        first = source.path
    table.append(batch(SECOND))
    second = table.current_snapshot()
    assert second is not None and second.snapshot_id != snapshot.snapshot_id
    with open_lake(tmp_path, {"orders": entry}) as source:
        assert isinstance(source, DuckDBQuerySource) and source.path != first
        assert (
            source.origins["orders"] == f"Iceberg table sales.orders, snapshot {second.snapshot_id}"
        )
        assert_counts(source, rows=6, missing=2, surplus=1)
    # a metadata file is that snapshot, for good
    static = TableFile(format="iceberg", path=first_metadata.removeprefix("file://"))
    with open_lake(tmp_path, {"orders": static}) as source:
        assert source.query("SELECT count(*) FROM orders").rows == [(4,)]


def test_an_iceberg_table_the_catalog_does_not_have(tmp_path: Path) -> None:
    _, uri = iceberg_catalog(tmp_path)
    entry = TableFile(format="iceberg", catalog=uri, table="sales.nope")
    with pytest.raises(SourceError) as caught:
        open_lake(tmp_path, {"orders": entry})
    assert str(caught.value) == (
        f"source lake: table orders: cannot open Iceberg table sales.nope of catalog 'default'"
        f" at {uri}: Table does not exist: sales.nope"
    )
    missing = tmp_path / "other.db"
    entry = TableFile(format="iceberg", catalog=f"sqlite:///{missing}", table="sales.orders")
    with pytest.raises(SourceError) as caught:
        open_lake(tmp_path, {"orders": entry})
    assert (
        str(caught.value) == f"source lake: table orders: Iceberg catalog file {missing} not found"
    )
    assert not missing.exists()  # never created by opening it


MISSING = """
import sys
sys.modules[sys.argv[1]] = None  # as if it were not installed: its import raises ImportError
from checks.agent.tools import ToolBox
from checks.errors import SourceError
from checks.settings.config import Settings
from checks.settings.limits import Limits
from checks.settings.sources import DuckDBSource
from checks.sources import open_source
config = DuckDBSource.model_validate({"type": "duckdb", "tables": {"orders": {
    "format": sys.argv[2], "path": sys.argv[3]}}})
try:
    open_source("lake", config, Settings(cache_dir=sys.argv[4]))
except SourceError as error:
    print(error)
"""


@pytest.mark.parametrize(
    ("module", "fmt", "message"),
    [
        (
            "deltalake",
            "delta",
            "reading a Delta table needs deltalake, which is not installed:"
            " pip install 'lookout[delta]'",
        ),
        (
            "pyiceberg",
            "iceberg",
            "reading an Iceberg table needs pyiceberg, which is not installed:"
            " pip install 'lookout[iceberg]'",
        ),
        (
            "pyarrow",
            "iceberg",
            "reading an Iceberg table needs pyarrow, which is not installed:"
            " pip install 'lookout[iceberg]'",
        ),
    ],
)
def test_a_missing_library_names_the_extra(
    tmp_path: Path, module: str, fmt: str, message: str
) -> None:
    out = subprocess.run(
        [sys.executable, "-c", MISSING, module, fmt, str(tmp_path / "t"), str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert out.stdout == f"source lake: table orders: {message}\n"
