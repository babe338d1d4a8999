"""Every typed kind compiled for Trino, Amazon Redshift and SQL Server (tested by their SQL only).

No engine runs here: each kind's counts and sample queries must read back in the
dialect as the same SQL, and pass the guard there; ``missing`` and ``duplicates`` are
compared in full (T-SQL: ``TOP`` for the sample's row cap, ``[brackets]``, booleans
as ``1``/``0``, ``COUNT_BIG``: its ``COUNT`` is a 32-bit int).
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlglot

from checks.automation.check import Check
from checks.declared.compile import compile_check
from checks.kinds.base import Kind
from checks.kinds.registry import KINDS
from checks.sources.base import Column, DataSet
from checks.sql.guard import guard

DIALECTS = ("trino", "redshift", "tsql")
CATALOG = [
    DataSet(
        "orders",
        (
            Column("id", "INTEGER", nullable=False),
            Column("status", "VARCHAR", nullable=True),
            Column("customer_id", "INTEGER", nullable=True),
            Column("paid", "BOOLEAN", nullable=True),
            Column("created_at", "TIMESTAMP", nullable=True),
        ),
        5,
    ),
    DataSet("customers", (Column("id", "INTEGER"), Column("email", "VARCHAR")), 4),
]
CHECKS: list[dict[str, Any]] = [
    {"row_count": {"table": "orders", "filter": "status = 'paid'"}},
    {"missing": {"table": "orders", "column": "status", "missing_values": ["lost", 1]}},
    {"duplicates": {"table": "orders", "columns": ["customer_id", "status"]}},
    {"accepted_values": {"table": "orders", "column": "paid", "values": [True]}},
    {"relationships": {"table": "orders", "column": "customer_id", "to": "customers.id"}},
    {"freshness": {"table": "orders", "column": "created_at", "max_age": "1d"}},
    {"range": {"table": "orders", "column": "id", "min": 1, "max": 9, "null": "violation"}},
    {"schema": {"table": "orders", "columns": {"id": "integer"}}},
    {"validity": {"table": "orders", "column": "status", "format": "iso_date", "max_length": 10}},
    {
        "aggregate": {
            "table": "orders",
            "column": "id",
            "function": "percentile",
            "percentile": 0.9,
        },
        "expect": "> 0",
    },
    {"compare": {"table": "orders", "with": {"table": "customers"}, "key": ["id"]}},
]


def spec(check: dict[str, Any]) -> Kind:
    found = Check.model_validate({"name": "c", **check}).spec
    assert found is not None
    return found


def test_every_kind_is_compiled_here() -> None:
    assert {next(iter(c)) for c in CHECKS} == set(KINDS)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: next(iter(c)))
def test_each_kind_reads_back_and_passes_the_guard(dialect: str, check: dict[str, Any]) -> None:
    compiled = compile_check(spec(check), CATALOG, dialect, sample_rows=10)
    for sql in (compiled.counts_sql, compiled.sample_sql):
        if sql is None:
            continue
        assert sqlglot.parse_one(sql, read=dialect).sql(dialect=dialect) == sql
        assert guard(sql, dialect=dialect, allowed_tables=["orders", "customers"]) == sql


MISSING = {
    "trino": (
        'SELECT COUNT(*) AS rows_in_scope, COUNT(CASE WHEN "t"."status" IS NULL OR "t"."status"'
        " IN ('lost', '1') THEN 1 END) AS missing FROM \"orders\" AS t",
        'SELECT * FROM "orders" AS t WHERE ("t"."status" IS NULL OR "t"."status" IN'
        ' (\'lost\', \'1\')) ORDER BY "t"."id", "t"."status", "t"."customer_id",'
        ' "t"."paid", "t"."created_at" LIMIT 10',
    ),
    "redshift": (
        'SELECT COUNT(*) AS rows_in_scope, COUNT(CASE WHEN "t"."status" IS NULL OR "t"."status"'
        " IN ('lost', '1') THEN 1 END) AS missing FROM \"orders\" AS t",
        'SELECT * FROM "orders" AS t WHERE ("t"."status" IS NULL OR "t"."status" IN'
        ' (\'lost\', \'1\')) ORDER BY "t"."id", "t"."status", "t"."customer_id",'
        ' "t"."paid", "t"."created_at" LIMIT 10',
    ),
    "tsql": (
        "SELECT COUNT_BIG(*) AS rows_in_scope, COUNT_BIG(CASE WHEN [t].[status] IS NULL OR"
        " [t].[status] IN ('lost', '1') THEN 1 END) AS missing FROM [orders] AS t",
        "SELECT TOP 10 * FROM [orders] AS t WHERE ([t].[status] IS NULL OR [t].[status] IN"
        # TIMESTAMP is SQL Server's rowversion, not a time: not an order column; SQL Server
        # sorts NULLs first, so each key puts them last as every engine's sample does
        " ('lost', '1')) ORDER BY CASE WHEN [t].[id] IS NULL THEN 1 ELSE 0 END, [t].[id],"
        " CASE WHEN [t].[status] IS NULL THEN 1 ELSE 0 END, [t].[status],"
        " CASE WHEN [t].[customer_id] IS NULL THEN 1 ELSE 0 END, [t].[customer_id],"
        " CASE WHEN [t].[paid] IS NULL THEN 1 ELSE 0 END, [t].[paid]",
    ),
}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_missing_in_each_dialect(dialect: str) -> None:
    compiled = compile_check(spec(CHECKS[1]), CATALOG, dialect, sample_rows=10)
    assert (compiled.counts_sql, compiled.sample_sql) == MISSING[dialect]


@pytest.mark.parametrize(
    ("dialect", "q", "count"),
    [("trino", '"{}"', "COUNT"), ("redshift", '"{}"', "COUNT"), ("tsql", "[{}]", "COUNT_BIG")],
)
def test_duplicates_counts_in_each_dialect(dialect: str, q: str, count: str) -> None:
    t, cid, status = (q.format(n) for n in ("t", "customer_id", "status"))
    orders = q.format("orders")
    compiled = compile_check(spec(CHECKS[2]), CATALOG, dialect, sample_rows=10)
    assert compiled.counts_sql == (
        "SELECT COALESCE(SUM(group_rows), 0) AS rows_in_scope,"
        f" {count}(CASE WHEN group_rows > 1 AND NOT (key_1 IS NULL OR key_2 IS NULL) THEN 1 END)"
        " AS duplicate_groups,"
        " COALESCE(SUM(CASE WHEN group_rows > 1 AND NOT (key_1 IS NULL OR key_2 IS NULL)"
        " THEN group_rows - 1 END), 0) AS surplus_rows,"
        " COALESCE(SUM(CASE WHEN group_rows > 1 AND NOT (key_1 IS NULL OR key_2 IS NULL)"
        " THEN group_rows END), 0) AS rows_in_duplicate_groups,"
        " COALESCE(SUM(CASE WHEN key_1 IS NULL OR key_2 IS NULL THEN group_rows END), 0)"
        " AS rows_with_null_key"
        f" FROM (SELECT {t}.{cid} AS key_1, {t}.{status} AS key_2, {count}(*) AS group_rows"
        f" FROM {orders} AS t GROUP BY {t}.{cid}, {t}.{status}) AS keyed"
    )


def test_a_boolean_value_is_1_in_t_sql() -> None:
    compiled = compile_check(spec(CHECKS[3]), CATALOG, "tsql", sample_rows=10)
    assert "NOT [t].[paid] IN (1)" in compiled.counts_sql
    trino = compile_check(spec(CHECKS[3]), CATALOG, "trino", sample_rows=10)
    assert 'NOT "t"."paid" IN (TRUE)' in trino.counts_sql


def test_t_sql_counts_are_64_bit_and_other_dialects_unchanged() -> None:
    for check in CHECKS[:7]:
        tsql = compile_check(spec(check), CATALOG, "tsql", sample_rows=10).counts_sql
        assert "COUNT(" not in tsql and "COUNT_BIG(" in tsql, tsql
        trino = compile_check(spec(check), CATALOG, "trino", sample_rows=10).counts_sql
        assert "COUNT_BIG" not in trino and "COUNT(" in trino, trino
