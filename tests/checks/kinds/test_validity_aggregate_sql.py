"""``validity`` and ``aggregate`` as each engine's SQL, where it cannot run here, and shared scans.

Snowflake, BigQuery, Trino, Redshift, SQL Server and Databricks: the exact SQL of each
engine's regular-expression function, its end anchor and escaping, its character
length, and its exact percentile (or the ranked one where the engine has no exact
aggregate), each read back by the guard as it is.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlglot

from checks.automation.check import Check
from checks.declared.compile import compile_check
from checks.declared.scan_plan import shape
from checks.kinds.base import Kind
from checks.sources.base import Column, DataSet
from checks.sql.guard import guard

CATALOG = [
    DataSet(
        "orders",
        (
            Column("id", "INTEGER", nullable=False),
            Column("email", "VARCHAR"),
            Column("amount", "DECIMAL(10,2)"),
        ),
        5,
    )
]
VALIDITY = {
    "validity": {"table": "orders", "column": "email", "regex": r"[a-z]+\.org", "max_length": 20}
}
PERCENTILE = {
    "aggregate": {
        "table": "orders",
        "column": "amount",
        "function": "percentile",
        "percentile": 0.9,
    },
    "expect": "> 0",
}
STDDEV = {
    "aggregate": {"table": "orders", "column": "amount", "function": "stddev"},
    "expect": "> 0",
}


def spec(check: dict[str, Any]) -> Kind:
    found = Check.model_validate({"name": "c", **check}).spec
    assert found is not None
    return found


def counts(check: dict[str, Any], dialect: str) -> str:
    sql = compile_check(spec(check), CATALOG, dialect, sample_rows=10).counts_sql
    assert sqlglot.parse_one(sql, read=dialect).sql(dialect=dialect) == sql
    return sql


MATCH = {
    "snowflake": """REGEXP_LIKE("t"."email", '^([a-z]+\\\\.org)$') AND LENGTH("t"."email") <= 20""",
    "bigquery": "REGEXP_CONTAINS(`t`.`email`, '^([a-z]+\\\\.org)$') AND LENGTH(`t`.`email`) <= 20",
    "trino": """REGEXP_LIKE("t"."email", '^([a-z]+\\.org)\\z') AND LENGTH("t"."email") <= 20""",
    "redshift": """"t"."email" ~ '^([a-z]+\\\\.org)$' AND LENGTH("t"."email") <= 20""",
    "tsql": "REGEXP_LIKE([t].[email], '^([a-z]+\\.org)$') AND LEN([t].[email] + 'x') - 1 <= 20",
    "databricks": (
        "REGEXP_LIKE(`t`.`email`, '^([a-z]+\\\\.org)\\\\z') AND LENGTH(`t`.`email`) <= 20"
    ),
}


@pytest.mark.parametrize("dialect", sorted(MATCH))
def test_validity_in_each_warehouse(dialect: str) -> None:
    sql = counts(VALIDITY, dialect)
    assert f"NOT ({MATCH[dialect]})" in sql
    assert guard(sql, dialect=dialect, allowed_tables=["orders"]) == sql


EXACT = {
    "snowflake": 'PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY "t"."amount") AS percentile',
    "redshift": 'PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY "t"."amount") AS percentile',
    "databricks": "PERCENTILE(`t`.`amount`, 0.9) AS percentile",
}
RANKED = {
    "bigquery": (
        "SELECT COUNT(*) AS rows_in_scope, COUNT(`s`.`v`) AS rows_with_value,"
        " MAX(CASE WHEN s.rn = FLOOR(s.h) THEN `s`.`v` END) + MAX(s.h - FLOOR(s.h))"
        " * (COALESCE(MAX(CASE WHEN s.rn = FLOOR(s.h) + 1 THEN `s`.`v` END),"
        " MAX(CASE WHEN s.rn = FLOOR(s.h) THEN `s`.`v` END))"
        " - MAX(CASE WHEN s.rn = FLOOR(s.h) THEN `s`.`v` END)) AS percentile"
        " FROM (SELECT `t`.`amount` AS `v`, ROW_NUMBER() OVER (PARTITION BY CASE WHEN"
        " `t`.`amount` IS NULL THEN 1 ELSE 0 END ORDER BY `t`.`amount` NULLS LAST) AS rn,"
        " (COUNT(`t`.`amount`) OVER () - 1) * 0.9 + 1 AS h FROM `orders` AS t) AS s"
    ),
    "trino": 'FROM (SELECT "t"."amount" AS "v", ROW_NUMBER() OVER',
    "tsql": "(COUNT_BIG([t].[amount]) OVER () - 1) * 0.9 + 1 AS h FROM [orders] AS t) AS s",
}


@pytest.mark.parametrize("dialect", sorted(EXACT))
def test_an_exact_percentile_aggregate_where_the_engine_has_one(dialect: str) -> None:
    sql = counts(PERCENTILE, dialect)
    assert EXACT[dialect] in sql
    assert shape(sql, dialect) is not None  # one aggregate over one table: shared


@pytest.mark.parametrize("dialect", sorted(RANKED))
def test_a_ranked_percentile_where_the_engine_has_no_exact_aggregate(dialect: str) -> None:
    sql = counts(PERCENTILE, dialect)
    assert RANKED[dialect] in sql
    assert guard(sql, dialect=dialect, allowed_tables=["orders"]) == sql
    assert shape(sql, dialect) is None  # its own statement: a subquery over the rows


@pytest.mark.parametrize(
    ("dialect", "function"),
    [
        ("tsql", "STDEV([t].[amount])"),
        ("snowflake", 'STDDEV("t"."amount")'),
        ("bigquery", "STDDEV_SAMP(`t`.`amount`)"),
        ("trino", 'STDDEV_SAMP("t"."amount")'),
        ("redshift", 'STDDEV_SAMP("t"."amount")'),
        ("databricks", "STDDEV_SAMP(`t`.`amount`)"),
    ],
)
def test_the_sample_standard_deviation_in_each_warehouse(dialect: str, function: str) -> None:
    assert f"{function} AS stddev" in counts(STDDEV, dialect)


@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "clickhouse", "spark", "snowflake"])
def test_validity_and_aggregates_share_the_scan_of_their_table(dialect: str) -> None:
    missing = {"missing": {"table": "orders", "column": "email"}}
    shapes = [shape(counts(c, dialect), dialect) for c in (missing, VALIDITY, PERCENTILE, STDDEV)]
    assert all(s is not None for s in shapes)
    assert len({s.key for s in shapes if s is not None}) == 1
