"""A Spark source against a real Spark 4 (a Spark Connect server of this test session).

Layer 2 is proven without the guard (``_execute``): the session's settings hold on
their own. The shared edge-case suite runs on the same server (``SHOP_ENGINES``).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

import pyspark
import pytest

from checks.errors import QueryFailed, QueryRejected, QueryTimeout, SourceError
from checks.settings.limits import Limits
from checks.settings.sources import SparkSource
from checks.sources.cells import Oversized
from checks.sources.spark_source import SparkQuerySource, shown_url
from tests.checks.declared.shop import ShopOpener

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def spark(shop_spark_opener: ShopOpener) -> SparkQuerySource:
    source = shop_spark_opener(Limits())
    assert isinstance(source, SparkQuerySource)
    yield source  # type: ignore[misc]
    source.close()


def test_the_catalog_lists_the_shop_with_spark_types_and_counts(spark: SparkQuerySource) -> None:
    found = {d.name: (d.row_count, [(c.name, c.type) for c in d.columns]) for d in spark.catalog()}
    assert sorted(found) == [
        "contacts",
        "customers",
        "empty_t",
        "ledger",
        "loads",
        "nearly_all",
        "orders",
        "pairs",
        "refunds",
        "tiny",
    ]
    assert found["loads"] == (
        3,
        [
            ("id", "int"),
            ("loaded_at", "timestamp_ntz"),
            ("loaded_tz", "timestamp"),
            ("day", "date"),
        ],
    )
    assert found["tiny"][0] == 1_000_000 and found["empty_t"][0] == 0
    assert spark.engine_version() == f"Spark {pyspark.__version__}"  # the server is this pyspark
    assert spark.schema == "default"


def test_instants_come_back_in_utc_and_local_times_as_written(spark: SparkQuerySource) -> None:
    rows = spark.query("SELECT id, loaded_at, loaded_tz FROM loads ORDER BY id").rows
    assert rows == [
        (1, dt.datetime(2024, 1, 9, 19, 0), dt.datetime(2024, 1, 9, 21, 0, tzinfo=dt.UTC)),
        (2, dt.datetime(2024, 1, 10, 5, 0), dt.datetime(2024, 1, 10, 1, 30, tzinfo=dt.UTC)),
        (3, None, None),
    ]


def test_the_session_is_utc_ansi_and_substitutes_nothing(spark: SparkQuerySource) -> None:
    # Straight to the session (no guard): the settings hold on their own.
    assert spark._execute("SELECT current_timezone()", max_rows=1, timeout_s=30).rows == [("UTC",)]
    assert spark._execute("SELECT '${env:HOME}' AS s", max_rows=1, timeout_s=30).rows == [
        ("${env:HOME}",)
    ]
    with pytest.raises(QueryFailed, match=r"^\[CAST_INVALID_INPUT\]"):
        spark._execute("SELECT CAST('x' AS INT)", max_rows=1, timeout_s=30)
    with pytest.raises(QueryFailed, match=r"^\[TABLE_OR_VIEW_NOT_FOUND\] The table or view"):
        spark._execute("SELECT * FROM parquet.`/etc/hostname`", max_rows=1, timeout_s=30)
    with pytest.raises(QueryRejected, match="calls Java methods"):
        spark.query("SELECT reflect('java.lang.System', 'getenv', 'HOME')")


def test_rows_are_capped_and_a_huge_cell_is_measured_not_fetched(
    shop_spark_opener: ShopOpener,
) -> None:
    with shop_spark_opener(Limits(fingerprint_max_rows=100, max_cell_chars=10)) as source:
        result = source.query("SELECT id FROM range(1000) ORDER BY id", max_rows=3)
        assert (result.rows, result.truncated, result.row_count) == ([(0,), (1,), (2,)], True, 101)
        assert result.scan_capped
        cell = source.query("SELECT repeat('ab', 10000) AS s").rows[0][0]
    assert cell == Oversized("string", 20_000, "492010dde5b04a1322b0fdeab9bee7ed", "ababababab")


def test_a_query_past_its_limit_is_interrupted(spark: SparkQuerySource) -> None:
    started = time.monotonic()
    with pytest.raises(QueryTimeout, match=r"^the query ran past its time limit of 3 s$"):
        spark.query("SELECT count(*) FROM range(100000000000)", timeout_s=3)
    assert time.monotonic() - started < 30
    # The session goes on: the next query runs.
    assert spark.query("SELECT count(*) AS n FROM orders").rows == [(5,)]


def test_files_become_tables_and_bad_ones_say_where(spark_connect_url: str, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": [1, 2, 3], "v": ["a", None, "c"]}), tmp_path / "p.parquet")
    (tmp_path / "c.csv").write_text("id,city\n1,Oslo\n2,Bergen\n")
    (tmp_path / "j.jsonl").write_text("\n".join(json.dumps({"k": i}) for i in range(4)) + "\n")
    tables = {
        "p": str(tmp_path / "p.parquet"),
        "c": str(tmp_path / "c.csv"),
        "j": str(tmp_path / "j.jsonl"),
    }
    config = SparkSource(type="spark", remote=spark_connect_url, tables=tables)
    with SparkQuerySource("files", config, Limits()) as source:
        found = {d.name: (d.row_count, [c.type for c in d.columns]) for d in source.catalog()}
        assert {k: found[k] for k in ("p", "c", "j")} == {
            "p": (3, ["bigint", "string"]),
            "c": (2, ["int", "string"]),
            "j": (4, ["bigint"]),
        }
        assert source.query("SELECT count(v) AS n FROM p").rows == [(2,)]
    missing = SparkSource(
        type="spark", remote=spark_connect_url, tables={"x": "/nowhere/x.parquet"}
    )
    with pytest.raises(SourceError) as error:
        SparkQuerySource("files", missing, Limits())
    assert str(error.value) == "source files: tables.x: /nowhere/x.parquet does not exist"
    odd = SparkSource(type="spark", remote=spark_connect_url, tables={"x": "/data/x.xlsx"})
    with pytest.raises(SourceError) as error:
        SparkQuerySource("files", odd, Limits())
    assert str(error.value) == (
        "source files: tables.x: /data/x.xlsx is not a Parquet, CSV or JSON file"
        " (.parquet, .csv, .json, .jsonl)"
    )


def test_an_unknown_database_and_an_unreachable_server_are_named(spark_connect_url: str) -> None:
    config = SparkSource(type="spark", remote=spark_connect_url, database="nope")
    with pytest.raises(SourceError) as error:
        SparkQuerySource("lake", config, Limits())
    assert str(error.value) == f"source lake: no database 'nope' in {spark_connect_url}"
    gone = SparkSource(type="spark", remote="sc://127.0.0.1:9/;token=s3cret")
    with pytest.raises(SourceError) as error:
        SparkQuerySource("lake", gone, Limits(connect_timeout_s=1))
    assert str(error.value).startswith(
        "source lake: cannot connect to sc://127.0.0.1:9/;token=***: "
    )
    assert "s3cret" not in str(error.value)


def test_a_connect_token_is_never_shown() -> None:
    assert shown_url("sc://h:443/;token=abc;x-user=me") == "sc://h:443/;token=***;x-user=me"
