"""BigQuery's SQL: what the guard refuses of it (exact messages) and what the typed kinds write.

BigQuery cannot run here: its SQL is tested as text, in sqlglot's ``bigquery`` dialect.
"""

from __future__ import annotations

from typing import Any

import pytest

from checks.declared.compile import compile_check
from checks.errors import QueryRejected
from checks.sources.base import Column, DataSet
from checks.sql.guard import guard
from tests.checks.declared.test_kept_per_process import spec

REFUSED = [
    (
        "SELECT * FROM EXTERNAL_QUERY('conn', 'SELECT 1')",
        "function",
        "function external_query() is not allowed: it runs SQL on another database through a"
        " connection (a federated query)",
    ),
    (
        "SELECT AI.GENERATE(name) FROM orders",
        "function",
        "function ai_generate() is not allowed: it calls a paid model (BigQuery ML, Vertex AI)",
    ),
    (
        "SELECT ML.GENERATE_TEXT(MODEL m, (SELECT 1))",
        "system-catalog",
        "ML.… refers to a system schema",
    ),
    (
        "SELECT * FROM ML.PREDICT(MODEL `m`, TABLE orders)",
        "table-function",
        "table function predict() is not allowed; only generate_series, range, unnest",
    ),
    (
        "SELECT * FROM VECTOR_SEARCH(TABLE orders, 'e', (SELECT 1))",
        "function",
        "function vector_search() is not allowed: it searches a vector index over whole tables",
    ),
    (
        "SELECT * FROM `region-us`.INFORMATION_SCHEMA.JOBS",
        "schema",
        "`region-us`.`INFORMATION_SCHEMA.JOBS` AS JOBS: schema region-us is not this source's"
        " schema",
    ),
    (
        "EXPORT DATA OPTIONS(uri='gs://b/*.csv', format='CSV') AS SELECT * FROM orders",
        "command",
        "EXPORT is not allowed in a read-only query",
    ),
    (
        "LOAD DATA INTO orders FROM FILES(format='CSV', uris=['gs://b/x'])",
        "write",
        "LOADDATA is not allowed in a read-only query",
    ),
    ("DECLARE x INT64 DEFAULT 1", "command", "DECLARE is not allowed in a read-only query"),
    ("BEGIN SELECT 1; END", "multiple-statements", "found 2 statements; send one"),
    (
        "SELECT SESSION_USER()",
        "function",
        "SESSION_USER() is not allowed: it reads the database's own metadata",
    ),
    (
        "SELECT @@project_id",
        "function",
        "system variable @@project_id is not allowed: it reads the session's own metadata",
    ),
    (
        "SELECT * FROM `other-project.ds.t`",
        "schema",
        "`other-project.ds.t`: catalog-qualified names are not allowed",
    ),
]


@pytest.mark.parametrize(("sql", "rule", "reason"), REFUSED, ids=[r[0][:40] for r in REFUSED])
def test_bigquerys_own_readers_and_side_effects_are_refused(
    sql: str, rule: str, reason: str
) -> None:
    with pytest.raises(QueryRejected) as refused:
        guard(sql, dialect="bigquery", allowed_tables={"orders"})
    assert (refused.value.rule, refused.value.reason) == (rule, reason)


def test_bigquerys_own_functions_of_the_data_pass() -> None:
    sql = "SELECT COUNTIF(amount > 1), SAFE_DIVIDE(SUM(amount), COUNT(*)) FROM orders"
    assert guard(sql, dialect="bigquery", allowed_tables={"orders"}) == sql


CATALOG = [
    DataSet(
        "orders",
        (
            Column("id", "INT64", nullable=False),
            Column("status", "STRING", nullable=True),
            Column("created_at", "TIMESTAMP", nullable=True),
        ),
        row_count=5,
    )
]


@pytest.mark.parametrize(
    ("check", "counts_sql"),
    [
        (
            {"accepted_values": {"table": "orders", "column": "status", "values": ["paid"]}},
            "SELECT COUNT(*) AS rows_in_scope, COUNT(CASE WHEN NOT `t`.`status` IS NULL AND NOT"
            " `t`.`status` IN ('paid') THEN 1 END) AS invalid_values, COUNT(CASE WHEN"
            " `t`.`status` IS NULL THEN 1 END) AS null_values, COUNT(DISTINCT CASE WHEN NOT"
            " `t`.`status` IS NULL AND NOT `t`.`status` IN ('paid') THEN `t`.`status` END) AS"
            " distinct_invalid_values FROM `orders` AS t",
        ),
        (
            {"freshness": {"table": "orders", "column": "created_at"}, "expect": "<= 1d"},
            "SELECT COUNT(*) AS rows_in_scope, COUNT(`t`.`created_at`) AS rows_with_value,"
            " MAX(`t`.`created_at`) AS latest FROM `orders` AS t",
        ),
        (
            {"range": {"table": "orders", "column": "id", "min": 0}},
            "SELECT COUNT(*) AS rows_in_scope, COUNT(CASE WHEN `t`.`id` < 0 THEN 1 END) AS"
            " below_min, 0 AS above_max, COUNT(CASE WHEN `t`.`id` IS NULL THEN 1 END) AS"
            " null_values FROM `orders` AS t",
        ),
    ],
    ids=["accepted_values", "freshness", "range"],
)
def test_typed_kinds_compile_to_bigquery_sql_the_guard_passes(
    check: dict[str, Any], counts_sql: str
) -> None:
    compiled = compile_check(spec(check), CATALOG, "bigquery", sample_rows=3)
    assert compiled.counts_sql == counts_sql
    for sql in (compiled.counts_sql, compiled.sample_sql):
        if sql is not None:
            assert guard(sql, dialect="bigquery", allowed_tables={"orders"}) == sql
