"""``schema: {changes: …}`` on ClickHouse (chdb) and Spark: their own type names, for real.

Each engine's catalog spells types its own way (ClickHouse ``Nullable(Int32)``,
``LowCardinality(String)``; Spark ``int``, ``string``, ``decimal(10,2)``): an
unchanged table is no change, and an added or removed column or a retyped one is
named exactly, in the catalog's words. On ClickHouse ``Nullable`` is part of the
type (whether the column takes NULL): ``Nullable(Int32) → Int32`` is a change;
``LowCardinality`` is only how the values are stored (a dictionary): no change.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks.settings.config import Settings
from checks.settings.sources import ClickHouseSource, SparkSource
from checks.store.store import Store
from tests.checks.declared.test_schema_changes import Engine, automation
from tests.engine_fixtures.clickhouse import run_chdb

pytestmark = pytest.mark.slow

FORBID = automation({"table": "orders", "changes": "forbid"})


@pytest.fixture
def clickhouse(tmp_path: Path) -> Iterator[Engine]:
    folder = tmp_path / "chdb"
    run_chdb(
        folder,
        [
            "CREATE TABLE orders (id Int32, amount Nullable(Int32), name LowCardinality(String),"
            " tag LowCardinality(Nullable(String)), price Nullable(Decimal(10, 2)),"
            " at DateTime64(6, 'UTC'), seen Array(Nullable(Int32)))"
            " ENGINE = MergeTree ORDER BY tuple()",
            "INSERT INTO orders VALUES (1, 10, 'a', NULL, 1.50, '2026-11-02 06:00:00', [1, NULL])",
        ],
    )
    settings = Settings(
        store_url="sqlite://",
        cache_dir=str(tmp_path / "cache"),
        sources={"shop": ClickHouseSource(type="clickhouse", path=str(folder))},
    )
    store = Store(f"sqlite:///{tmp_path}/lookout.db")
    yield Engine("clickhouse", settings, lambda sql: run_chdb(folder, [sql]), store)
    store.close()


def test_clickhouse_unchanged_wrappers_are_no_change(clickhouse: Engine) -> None:
    (first,) = clickhouse.run(FORBID).checks
    assert first.outcome == "not_evaluated"
    assert first.recorded_schema is not None
    assert first.recorded_schema["columns"] == [
        ["id", "Int32"],
        ["amount", "Nullable(Int32)"],
        ["name", "String"],
        ["tag", "Nullable(String)"],
        ["price", "Nullable(Decimal(10, 2))"],
        ["at", "DateTime64(6, 'UTC')"],
        ["seen", "Array(Nullable(Int32))"],
    ]
    for _ in range(2):
        (same,) = clickhouse.run(FORBID).checks
        assert (same.outcome, same.reason, same.value) == ("passed", None, 0)
        assert same.metrics["changes"] == 0 and same.metrics["columns"] == 7


def test_clickhouse_added_removed_and_retyped_are_named(clickhouse: Engine) -> None:
    clickhouse.run(FORBID)
    clickhouse.execute("ALTER TABLE orders ADD COLUMN surprise Nullable(Int64)")
    clickhouse.execute("ALTER TABLE orders DROP COLUMN tag")
    clickhouse.execute("ALTER TABLE orders MODIFY COLUMN price Nullable(Decimal(12, 2))")
    clickhouse.execute("ALTER TABLE orders MODIFY COLUMN seen Array(Nullable(Int64))")
    (check,) = clickhouse.run(FORBID).checks
    assert (check.outcome, check.value) == ("failed", 4)
    assert check.reason == (
        "column surprise added; column tag removed;"
        " price: Nullable(Decimal(10, 2)) → Nullable(Decimal(12, 2));"
        " seen: Array(Nullable(Int32)) → Array(Nullable(Int64))"
    )
    (again,) = clickhouse.run(FORBID).checks
    assert (again.outcome, again.reason) == ("passed", None)


def test_clickhouse_nullable_is_a_change_low_cardinality_is_not(clickhouse: Engine) -> None:
    clickhouse.run(FORBID)
    clickhouse.execute("ALTER TABLE orders MODIFY COLUMN name String")
    clickhouse.execute("ALTER TABLE orders MODIFY COLUMN tag Nullable(String)")
    (check,) = clickhouse.run(FORBID).checks  # only the values' storage changed
    assert (check.outcome, check.reason) == ("passed", None)
    clickhouse.execute("ALTER TABLE orders MODIFY COLUMN amount Int32 DEFAULT 0")
    (check,) = clickhouse.run(FORBID).checks
    assert (check.outcome, check.reason) == ("failed", "amount: Nullable(Int32) → Int32")
    clickhouse.execute("ALTER TABLE orders MODIFY COLUMN id Nullable(Int32)")
    (check,) = clickhouse.run(FORBID).checks
    assert (check.outcome, check.reason) == ("failed", "id: Int32 → Nullable(Int32)")


@pytest.fixture
def spark(tmp_path: Path, spark_connect_url: str) -> Iterator[Engine]:
    from pyspark.sql import SparkSession

    from checks.sources.spark_source import release

    database = f"schema_{uuid.uuid4().hex[:10]}"
    session = SparkSession.builder.remote(spark_connect_url).create()

    def on_spark(sql: str) -> None:
        for statement in filter(str.strip, sql.split(";")):
            session.sql(statement).collect()

    session.sql(f"CREATE DATABASE {database}").collect()
    session.sql(f"USE {database}").collect()
    on_spark(SPARK_ORDERS)
    settings = Settings(
        store_url="sqlite://",
        cache_dir=str(tmp_path / "cache"),
        sources={"shop": SparkSource(type="spark", remote=spark_connect_url, database=database)},
    )
    store = Store(f"sqlite:///{tmp_path}/lookout.db")
    try:
        yield Engine("spark", settings, on_spark, store)
    finally:
        store.close()
        session.sql(f"DROP DATABASE {database} CASCADE").collect()
        release(session)


SPARK_ORDERS = (
    "CREATE TABLE orders (id INT, amount INTEGER, name VARCHAR(20), note STRING,"
    " price DECIMAL(10,2), at TIMESTAMP, tags ARRAY<STRING>, extra STRUCT<a: INT, b: STRING>)"
    " USING parquet;"
    " INSERT INTO orders VALUES (1, 10, 'a', 'n', 1.50, TIMESTAMP '2026-11-02 06:00:00',"
    " array('x'), named_struct('a', 1, 'b', 'y'))"
)


def test_spark_spellings_are_no_change_and_each_change_is_named(spark: Engine) -> None:
    (first,) = spark.run(FORBID).checks
    assert first.outcome == "not_evaluated"
    assert first.recorded_schema is not None
    assert first.recorded_schema["columns"] == [
        ["id", "int"],
        ["amount", "int"],
        ["name", "string"],
        ["note", "string"],
        ["price", "decimal(10,2)"],
        ["at", "timestamp"],
        ["tags", "array<string>"],
        ["extra", "struct<a:int,b:string>"],
    ]
    (same,) = spark.run(FORBID).checks
    assert (same.outcome, same.reason, same.value) == ("passed", None, 0)
    # the same table, rebuilt under other spellings of its types (Spark's tables show
    # VARCHAR(n) as string: a change between the two cannot be seen)
    spark.execute(
        "DROP TABLE orders; CREATE TABLE orders (id integer, amount int, name string,"
        " note varchar(20), price numeric(10, 2), at timestamp, tags array<varchar(3)>,"
        " extra struct<a: integer, b: string>) USING parquet"
    )
    (same,) = spark.run(FORBID).checks
    assert (same.outcome, same.reason, same.value) == ("passed", None, 0)
    spark.execute("ALTER TABLE orders ADD COLUMNS (surprise BIGINT)")
    (added,) = spark.run(FORBID).checks
    assert (added.outcome, added.reason) == ("failed", "column surprise added")
    spark.execute(
        "DROP TABLE orders; CREATE TABLE orders (id BIGINT, amount INT, name STRING,"
        " price DECIMAL(12,2), at TIMESTAMP_NTZ, tags ARRAY<STRING>, extra STRUCT<a: INT>,"
        " surprise BIGINT) USING parquet"
    )
    (check,) = spark.run(FORBID).checks
    assert (check.outcome, check.value) == ("failed", 5)
    assert check.reason == (
        "column note removed; id: int → bigint; price: decimal(10,2) → decimal(12,2);"
        " at: timestamp → timestamp_ntz; extra: struct<a:int,b:string> → struct<a:int>"
    )
