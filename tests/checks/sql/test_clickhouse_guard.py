"""ClickHouse's own refusals (``checks.sql.engines.clickhouse``), each with its exact reason."""

from __future__ import annotations

import pytest
import sqlglot

from checks.errors import QueryRejected
from checks.sql.engines.clickhouse import kind_sql
from checks.sql.guard import guard

REFUSED = [
    (
        "SELECT * FROM url('http://x/a.csv', CSV)",
        "file-read",
        "function url() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT file('/etc/passwd')",
        "file-read",
        "function file() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT * FROM s3('https://b/k.parquet')",
        "file-read",
        "function s3() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT * FROM s3Cluster('c', 'https://b/k')",
        "file-read",
        "function s3cluster() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT * FROM gcs('https://b/k')",
        "file-read",
        "function gcs() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT * FROM azureBlobStorage('a', 'c', 'b')",
        "file-read",
        "function azureblobstorage() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT * FROM hdfs('hdfs://h/p', CSV)",
        "file-read",
        "function hdfs() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT * FROM iceberg('s3://b/t')",
        "file-read",
        "function iceberg() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT * FROM input('x Int32')",
        "file-read",
        "function input() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT * FROM remote('h:9000', default.orders)",
        "function",
        "function remote() is not allowed: it reads another server or database",
    ),
    (
        "SELECT * FROM remoteSecure('h', default, orders)",
        "function",
        "function remotesecure() is not allowed: it reads another server or database",
    ),
    (
        "SELECT * FROM cluster('c', default, orders)",
        "function",
        "function cluster() is not allowed: it reads another server or database",
    ),
    (
        "SELECT * FROM mysql('h:3306', 'db', 't', 'u', 'p')",
        "function",
        "function mysql() is not allowed: it reads another server or database",
    ),
    (
        "SELECT * FROM postgresql('h', 'db', 't', 'u', 'p')",
        "function",
        "function postgresql() is not allowed: it reads another server or database",
    ),
    (
        "SELECT * FROM jdbc('ds', 'db', 't')",
        "function",
        "function jdbc() is not allowed: it reads another server or database",
    ),
    (
        "SELECT * FROM odbc('dsn', 'db', 't')",
        "function",
        "function odbc() is not allowed: it reads another server or database",
    ),
    (
        "SELECT * FROM merge('default', '^ord')",
        "function",
        "function merge() is not allowed: it reads another server or database",
    ),
    (
        "SELECT dictGet('d', 'a', toUInt64(1))",
        "function",
        "function dictget() is not allowed: it reads another server or database",
    ),
    (
        "SELECT joinGet('j', 'v', 1)",
        "function",
        "function joinget() is not allowed: it reads another server or database",
    ),
    (
        "SELECT * FROM dictionary('d')",
        "unknown-table",
        'dictionary AS _t0("d") is not a data set of this source',
    ),
    (
        "SELECT * FROM executable('s.sh', CSV, 'x Int32')",
        "function",
        "function executable() is not allowed: it has side effects",
    ),
    ("SELECT sleep(3)", "function", "function sleep() is not allowed: it has side effects"),
    (
        "SELECT sleepEachRow(1) FROM orders",
        "function",
        "function sleepeachrow() is not allowed: it has side effects",
    ),
    (
        "SELECT currentUser()",
        "function",
        "function currentuser() is not allowed: it reads the database's own metadata",
    ),
    (
        "SELECT currentDatabase()",
        "function",
        "CURRENT_DATABASE() is not allowed: it reads the database's own metadata",
    ),
    (
        "SELECT getSetting('max_execution_time')",
        "function",
        "function getsetting() is not allowed: it reads the database's own metadata",
    ),
    (
        "SELECT hostName()",
        "function",
        "function hostname() is not allowed: it reads the database's own metadata",
    ),
    (
        "SELECT version()",
        "function",
        "VERSION() is not allowed: it reads the database's own metadata",
    ),
    ("SELECT * FROM system.tables", "system-catalog", "system.tables is in a system schema"),
    (
        "SELECT * FROM INFORMATION_SCHEMA.TABLES",
        "system-catalog",
        "INFORMATION_SCHEMA.TABLES is in a system schema",
    ),
    (
        "SELECT count() FROM orders SETTINGS max_execution_time = 0",
        "command",
        "SETTINGS is not allowed: each query runs with Lookout's own settings",
    ),
    (
        "SELECT * FROM (SELECT 1 SETTINGS max_execution_time = 0)",
        "command",
        "SETTINGS is not allowed: each query runs with Lookout's own settings",
    ),
    ("SELECT 1 FORMAT JSON", "command", "FORMAT is not allowed: the driver reads the result"),
    (
        "SELECT * FROM Orders",
        "unknown-table",
        "Orders is not a data set of this source (did you mean 'orders'?)",
    ),
    (
        "SELECT * FROM numbers(10)",
        "table-function",
        "table function numbers() is not allowed; only generate_series, range, unnest",
    ),
    (
        "SELECT * FROM other.orders",
        "schema",
        "other.orders: schema other is not this source's schema",
    ),
]


@pytest.mark.parametrize(("sql", "rule", "reason"), REFUSED, ids=[c[0][:48] for c in REFUSED])
def test_clickhouse_refuses(sql: str, rule: str, reason: str) -> None:
    with pytest.raises(QueryRejected) as refused:
        guard(sql, dialect="clickhouse", allowed_tables={"orders"}, schema="default")
    assert (refused.value.rule, refused.value.reason) == (rule, reason)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT countIf(status = 'paid'), domain('http://x.org/a') FROM orders",  # URL text
        "SELECT * FROM default.orders",
        "SELECT dateTrunc('DAY', created_at) AS day, uniqExact(status) FROM orders GROUP BY day",
    ],
)
def test_clickhouse_allows_its_own_plain_functions(sql: str) -> None:
    assert guard(sql, dialect="clickhouse", allowed_tables={"orders"}, schema="default") == sql


def test_names_are_case_sensitive_on_clickhouse_only() -> None:
    # ClickHouse keeps Orders and orders apart: an unlisted Orders is not the listed orders.
    assert guard("SELECT * FROM ORDERS", dialect="duckdb", allowed_tables={"orders"})
    with pytest.raises(QueryRejected):
        guard("SELECT * FROM ORDERS", dialect="clickhouse", allowed_tables={"orders"})


def test_a_kinds_correlated_exists_becomes_an_in_of_the_parent_keys() -> None:
    tree = sqlglot.parse_one(
        'SELECT count(CASE WHEN NOT t.c IS NULL AND NOT EXISTS(SELECT 1 FROM "p" AS p'
        " WHERE p.k = t.c) THEN 1 END) FROM t",
        read="clickhouse",
    )
    assert kind_sql(tree).sql(dialect="clickhouse") == (
        'SELECT count(CASE WHEN NOT (t.c IS NULL) AND NOT (t.c IN (SELECT p.k FROM "p" AS p))'
        " THEN 1 END) FROM t"
    )
    other = sqlglot.parse_one(
        "SELECT 1 WHERE EXISTS(SELECT 1 FROM p WHERE p.k > 1)", read="clickhouse"
    )
    assert kind_sql(other.copy()).sql(dialect="clickhouse") == other.sql(dialect="clickhouse")


def test_a_kinds_bound_a_double_cannot_hold_becomes_an_exact_decimal() -> None:
    tree = sqlglot.parse_one(
        "SELECT count(CASE WHEN a > 12345678901234567890.1234567889 OR a < 99.99 THEN 1 END)"
        " FROM t",
        read="clickhouse",
    )
    assert kind_sql(tree).sql(dialect="clickhouse") == (
        "SELECT count(CASE WHEN a > toDecimal128('12345678901234567890.1234567889', 10)"
        " OR a < 99.99 THEN 1 END) FROM t"
    )


def test_the_lint_keeps_the_null_on_the_left_and_drops_the_set_nulls_clickhouse_skips() -> None:
    from checks.sources.result import Column, DataSet
    from checks.sql.lint import lint

    columns = (Column("status", "String", True), Column("id", "Int32", False))
    catalog = [DataSet("orders", columns, 5)]

    def rules(sql: str, dialect: str = "clickhouse") -> list[str]:
        return [w.rule for w in lint(sql, dialect=dialect, catalog=catalog)]

    assert rules("SELECT count(*) FROM orders WHERE status NOT IN ('paid')") == ["not-in-null"]
    listed_null = "SELECT count(*) FROM orders WHERE id NOT IN (1, NULL)"
    assert (rules(listed_null), rules(listed_null, "duckdb")) == ([], ["not-in-null"])
    subquery = "SELECT count(*) FROM orders WHERE id NOT IN (SELECT status FROM orders)"
    assert rules(subquery) == []
    assert rules(subquery, "duckdb") == ["not-in-subquery"]  # status can be NULL
