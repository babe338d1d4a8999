"""What a run's declared checks keep per process: the same answers as afresh, and never stale.

A key must hold everything the SQL is made of: the check as written (values
of other types stay apart), the dialect, the sample's size, the buckets, and
the columns of the tables the check reads — a column retyped, a table added
that changes how a name resolves, is compiled again. A raw query's tables
are kept by its text; whether they are empty is asked on every run.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
import sqlglot

from checks.automation.check import Check
from checks.automation.time_buckets import Over
from checks.declared import buckets
from checks.declared import check as check_module
from checks.declared import compile as compile_module
from checks.declared.compile import Compiled, compile_check
from checks.errors import CheckDefinitionError
from checks.kinds.base import Kind
from checks.report import CheckOutcome
from checks.settings.limits import Limits
from checks.sources import DuckDBQuerySource
from checks.sources.base import Column, DataSet
from checks.sql.tables import tables_read
from tests.checks.declared.shop import one

CATALOG = [
    DataSet(
        "orders",
        (
            Column("id", "INTEGER", nullable=False),
            Column("status", "VARCHAR", nullable=True),
            Column("customer_id", "INTEGER", nullable=True),
            Column("created_at", "TIMESTAMP", nullable=True),
        ),
        5,
    ),
    DataSet("customers", (Column("id", "INTEGER"), Column("email", "VARCHAR")), 4),
]

CHECKS: list[dict[str, Any]] = [
    {"row_count": {"table": "orders"}},
    {"row_count": {"table": "ORDERS", "filter": "status = 'paid'"}},
    {"missing": {"table": "orders", "column": "status", "missing_values": ["lost", 1]}},
    {"duplicates": {"table": "orders", "columns": ["customer_id", "status"], "nulls": "equal"}},
    {"accepted_values": {"table": "orders", "column": "status", "values": ["paid", "lost"]}},
    {"relationships": {"table": "orders", "column": "customer_id", "to": "customers.id"}},
    {"freshness": {"table": "orders", "column": "created_at", "max_age": "1d"}},
    {"range": {"table": "orders", "column": "id", "min": 1, "max": 9, "null": "violation"}},
    {"schema": {"table": "orders", "columns": {"id": "integer"}}},
]


def spec(check: dict[str, Any]) -> Kind:
    """The typed kind of a check written as in a file."""
    found = Check.model_validate({"name": "c", **check}).spec
    assert found is not None
    return found


class Counting(compile_module.ScopeSql):
    """The compiler, counting how often it is asked to compile."""

    made = 0

    def __init__(self, *args: Any) -> None:
        Counting.made += 1
        super().__init__(*args)


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[Counting]]:
    """An empty cache, and a count of the compiles that were not served from it."""
    compile_module._kept.clear()
    Counting.made = 0
    monkeypatch.setattr(compile_module, "ScopeSql", Counting)
    yield Counting
    compile_module._kept.clear()


def afresh(kind: Kind, catalog: list[DataSet], dialect: str = "duckdb", **kw: Any) -> Compiled:
    """``compile_check`` with nothing kept from before."""
    compile_module._kept.clear()
    return compile_check(kind, catalog, dialect, sample_rows=kw.pop("sample_rows", 10), **kw)


@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "mysql"])
def test_a_kept_check_is_the_one_compiled_afresh(dialect: str, compiles: type[Counting]) -> None:
    expected = [afresh(spec(c), CATALOG, dialect) for c in CHECKS]
    compile_module._kept.clear()
    compiles.made = 0
    first = [compile_check(spec(c), CATALOG, dialect, sample_rows=10) for c in CHECKS]
    again = [compile_check(spec(c), list(CATALOG), dialect, sample_rows=10) for c in CHECKS]
    assert first == expected
    assert again == expected
    assert compiles.made == len(CHECKS)  # the second round was served from the cache


def test_each_part_of_the_key_compiles_again(compiles: type[Counting]) -> None:
    kind = spec({"accepted_values": {"table": "orders", "column": "id", "values": [1]}})
    base = compile_check(kind, CATALOG, "duckdb", sample_rows=10)
    assert "IN (1)" in base.counts_sql
    other_dialect = compile_check(kind, CATALOG, "mysql", sample_rows=10)
    assert "`orders`" in other_dialect.counts_sql
    fewer = compile_check(kind, CATALOG, "duckdb", sample_rows=3)
    assert fewer.sample_sql is not None and fewer.sample_sql.endswith("LIMIT 3")
    # True == 1 == 1.0 in Python, and they hash alike; the SQL differs.
    for value, written in ((True, "IN (TRUE)"), (1.0, "IN (1.0)")):
        typed = spec({"accepted_values": {"table": "orders", "column": "id", "values": [value]}})
        assert written in compile_check(typed, CATALOG, "duckdb", sample_rows=10).counts_sql
    assert compiles.made == 5
    assert compile_check(kind, CATALOG, "duckdb", sample_rows=10) is base
    assert compiles.made == 5


def test_a_retyped_column_is_compiled_again(compiles: type[Counting]) -> None:
    kind = spec({"missing": {"table": "orders", "column": "status", "missing_values": [1]}})
    text = compile_check(kind, CATALOG, "duckdb", sample_rows=10)
    retyped = [
        DataSet("orders", (Column("id", "INTEGER"), Column("status", "INTEGER")), 5),
        CATALOG[1],
    ]
    number = compile_check(kind, retyped, "duckdb", sample_rows=10)
    assert "IN ('1')" in text.counts_sql  # a text column: the value as text
    assert "IN (1)" in number.counts_sql
    assert (text.column_type, number.column_type) == ("VARCHAR", "INTEGER")
    assert number == afresh(kind, retyped)


def test_row_counts_are_not_part_of_the_key(compiles: type[Counting]) -> None:
    kind = spec({"row_count": {"table": "orders"}})
    first = compile_check(kind, CATALOG, "duckdb", sample_rows=10)
    grown = [DataSet("orders", CATALOG[0].columns, 5_000), CATALOG[1]]
    assert compile_check(kind, grown, "duckdb", sample_rows=10) is first
    assert compiles.made == 1


def test_a_table_added_that_changes_how_a_name_resolves(compiles: type[Counting]) -> None:
    kind = spec({"row_count": {"table": "ORDERS"}})
    assert compile_check(kind, CATALOG, "duckdb", sample_rows=10).table == "orders"
    unrelated = [*CATALOG, DataSet("planes", (Column("tail", "VARCHAR"),), 1)]
    assert compile_check(kind, unrelated, "duckdb", sample_rows=10).table == "orders"
    assert compiles.made == 1  # a table the check cannot name is not read
    both = [*CATALOG, DataSet("Orders", CATALOG[0].columns, 5)]
    with pytest.raises(CheckDefinitionError) as error:  # two tables differ only in case
        compile_check(kind, both, "duckdb", sample_rows=10)
    assert error.value.message == "no table 'ORDERS' in this source"


def test_a_check_that_does_not_compile_is_never_kept(compiles: type[Counting]) -> None:
    kind = spec({"missing": {"table": "ordrs", "column": "status"}})
    for _ in range(2):
        with pytest.raises(CheckDefinitionError) as error:
            compile_check(kind, CATALOG, "duckdb", sample_rows=10)
        # the hint is found in the whole catalog, as when nothing is kept
        assert error.value.message == "no table 'ordrs' in this source (did you mean 'orders'?)"
    assert compile_module._kept == {}
    column = spec({"missing": {"table": "orders", "column": "stats"}})
    with pytest.raises(CheckDefinitionError) as error:
        compile_check(column, CATALOG, "duckdb", sample_rows=10)
    assert error.value.message == "no column 'stats' in orders (did you mean 'status'?)"


def test_the_run_s_buckets_are_part_of_the_key(compiles: type[Counting]) -> None:
    kind = spec({"row_count": {"table": "orders"}})
    over = Over.model_validate({"column": "created_at", "bucket": "day", "lookback": "3d"})
    now = dt.datetime(2024, 1, 10, 3, 0, tzinfo=dt.UTC)
    today = buckets.window(over, "UTC", now)
    tomorrow = buckets.window(over, "UTC", now + dt.timedelta(days=1))
    first = compile_check(kind, CATALOG, "duckdb", sample_rows=10, over=over, buckets=today)
    same = compile_check(kind, CATALOG, "duckdb", sample_rows=10, over=over, buckets=today)
    later = compile_check(kind, CATALOG, "duckdb", sample_rows=10, over=over, buckets=tomorrow)
    assert same is first
    assert "'2024-01-06 00:00:00'" in first.counts_sql
    assert "'2024-01-06 00:00:00'" not in later.counts_sql
    assert later == afresh(kind, CATALOG, over=over, buckets=tomorrow)


def test_a_table_rebuilt_with_other_types_on_duckdb(tmp_path: Path) -> None:
    """Real DuckDB: the same check over a table retyped between two sources gets its own SQL."""
    path = tmp_path / "shop.duckdb"
    check = {"missing": {"table": "orders", "column": "status", "missing_values": [1]}}
    counts = []
    for definition in ("status VARCHAR", "status INTEGER"):
        with duckdb.connect(str(path)) as conn:
            conn.execute("DROP TABLE IF EXISTS orders")
            conn.execute(f"CREATE TABLE orders (id INTEGER, {definition})")
            conn.execute("INSERT INTO orders VALUES (1, NULL), (2, 1), (3, 2)")
        with DuckDBQuerySource("shop", path, Limits()) as source:
            result = one(source, check)
        counts.append((result.sql, result.metrics["missing"]))
    (text_sql, text_missing), (number_sql, number_missing) = counts
    assert "IN ('1')" in text_sql and "IN (1)" in number_sql
    assert (text_missing, number_missing) == (2, 2)  # the NULL, and the 1 written either way


def test_the_tables_a_raw_query_reads_are_kept_its_probes_answered_each_run(
    tmp_path: Path,
) -> None:
    """Which tables a query reads is kept per process; whether they are empty is asked each run."""
    sql = "WITH x AS (SELECT * FROM Orders) SELECT count(*) FROM x JOIN customers c ON true"
    afresh = tables_read(sqlglot.parse_one(sql, read="duckdb"), "duckdb")
    assert sorted(afresh) == ["customers", "orders"]  # folded; the CTE is no table
    check_module._tables_in.cache_clear()
    assert check_module._tables_in(sql, "duckdb") == tuple(afresh)
    assert check_module._tables_in(sql, "duckdb") == tuple(afresh)
    assert check_module._tables_in("SELECT (", "duckdb") is None  # left to the guard
    assert check_module._tables_in.cache_info().hits == 1
    assert check_module._probe("Orders", "mysql") == "SELECT 1 FROM `Orders` LIMIT 1"
    path = tmp_path / "filled.duckdb"
    check = {"sql": "SELECT count(*) FROM orders", "expect": "== 0"}
    outcomes = []
    for rows in ("", "INSERT INTO orders VALUES (1)"):
        with duckdb.connect(str(path)) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS orders (id INTEGER)")
            if rows:
                conn.execute(rows)
        with DuckDBQuerySource("shop", path, Limits()) as source:
            outcomes.append(one(source, check).outcome)
    assert outcomes == [CheckOutcome.NOT_EVALUATED, CheckOutcome.FAILED]
