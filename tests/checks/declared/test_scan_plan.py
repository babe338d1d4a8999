"""Which counts queries can share a statement, proven from their trees, and the statement."""

from __future__ import annotations

import pytest

from checks.declared.projection_names import names_probe, renamed
from checks.declared.scan_plan import shape, statement


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("SELECT count(*) AS n FROM orders GROUP BY status", "GROUP BY in a raw check"),
        ("SELECT count(*) AS n FROM orders HAVING count(*) > 1", "HAVING"),
        ("SELECT count(*) OVER () AS n FROM orders", "a window"),
        ("SELECT count(*) AS n FROM orders LIMIT 1", "LIMIT"),
        ("SELECT DISTINCT count(*) AS n FROM orders", "DISTINCT"),
        ("SELECT count(*) AS n FROM orders o JOIN customers c ON c.id = o.customer_id", "a join"),
        ("SELECT count(*) AS n FROM (SELECT * FROM orders) AS q", "a subquery in FROM"),
        ("SELECT count(*) AS n FROM orders WHERE id IN (SELECT id FROM customers)", "a subquery"),
        ("WITH o AS (SELECT * FROM orders) SELECT count(*) AS n FROM o", "WITH"),
        ("SELECT count(*) AS n FROM public.orders", "a schema"),
        ("SELECT amount AS a FROM orders", "no aggregate"),
        ("SELECT count(*) AS n, amount AS a FROM orders", "a column outside an aggregate"),
        ("SELECT max(o.amount) FROM orders AS o", "unnamed with a qualified column"),
        ("SELECT count(x.amount) AS n FROM orders", "another table's qualifier"),
        ("SELECT count(*) AS n FROM orders UNION ALL SELECT 1", "a set operation"),
        ("SELECT count(*) AS n FROM orders TABLESAMPLE (10 PERCENT)", "a sample"),
    ],
)
def test_a_query_not_proven_one_aggregate_over_one_table_is_not_shared(sql: str, why: str) -> None:
    assert shape(sql, "postgres") is None, why


def test_the_shared_statement_keeps_each_name_and_the_scope() -> None:
    typed = shape(
        'SELECT COUNT(*) AS rows_in_scope, COUNT(CASE WHEN "t"."status" IS NULL THEN 1 END)'
        " AS missing FROM \"orders\" AS t WHERE (status = 'paid')",
        "postgres",
    )
    raw = shape(
        "SELECT sum(o.amount) AS \"Total\", count(*) FROM orders AS o WHERE status = 'paid'",
        "postgres",
    )
    other = shape("SELECT count(*) AS n FROM orders WHERE status = 'lost'", "postgres")
    assert typed is not None and raw is not None and other is not None
    assert typed.key == raw.key == ("orders", "status = 'paid'", "", "")
    assert other.key != typed.key
    assert statement([(1, typed), (4, raw)], "postgres") == (
        "SELECT COUNT(*) AS lookout__rows, COUNT(*) AS c1__rows_in_scope,"
        ' COUNT(CASE WHEN t."status" IS NULL THEN 1 END) AS c1__missing,'
        ' SUM(t.amount) AS "c4__Total", COUNT(*)'
        " FROM \"orders\" AS t WHERE (status = 'paid')"
    )


def test_over_queries_share_only_the_same_buckets() -> None:
    day = (
        "SELECT COUNT(*) AS rows_in_scope, DATE_TRUNC('DAY', t.at) AS bucket FROM e AS t"
        " GROUP BY DATE_TRUNC('DAY', t.at) ORDER BY DATE_TRUNC('DAY', t.at)"
    )
    assert shape(day, "duckdb") is None  # grouped: only a typed over: query may be
    grouped = shape(day, "duckdb", grouped=True)
    hourly = shape(day.replace("'DAY'", "'HOUR'"), "duckdb", grouped=True)
    assert grouped is not None and hourly is not None and grouped.key != hourly.key
    assert statement([(2, grouped)], "duckdb") == (
        "SELECT COUNT(*) AS c2__rows_in_scope, DATE_TRUNC('DAY', t.\"at\") AS c2__bucket"
        " FROM e AS t GROUP BY DATE_TRUNC('DAY', t.\"at\") ORDER BY DATE_TRUNC('DAY', t.\"at\")"
    )


def test_queries_whose_wheres_differ_filter_each_aggregate_in_one_statement() -> None:
    paid = "SELECT count(*), max(o.amount) AS top FROM orders o WHERE o.status = 'paid'"
    members = [shape(paid, dialect) for dialect in ("duckdb", "mysql")] + [
        shape("SELECT count(DISTINCT status) AS kinds FROM orders", "mysql")
    ]
    duck, mysql, whole = members
    assert duck is not None and mysql is not None and whole is not None
    assert duck.group_key == mysql.group_key == whole.group_key == ("orders", "*", "", "")
    assert statement([(1, duck), (2, whole)], "duckdb") == (
        "SELECT COUNT(*) AS lookout__rows, COUNT(*) FILTER(WHERE t.status = 'paid') AS \"c1__0\","
        " MAX(t.amount) FILTER(WHERE t.status = 'paid') AS c1__top,"
        " COUNT(DISTINCT status) AS c2__kinds FROM orders AS t"
    )
    assert renamed([(1, duck), (2, whole)], "duckdb") == [(0, 0)]
    assert (
        names_probe([(1, duck), (2, whole)], "duckdb") == "SELECT COUNT(*) FROM orders AS t LIMIT 0"
    )
    # MySQL has no FILTER: the aggregates that skip NULLs take a CASE
    assert statement([(1, mysql), (2, whole)], "mysql") == (
        "SELECT COUNT(*) AS lookout__rows, COUNT(CASE WHEN t.status = 'paid' THEN 1 END)"
        " AS `c1__0`, MAX(CASE WHEN t.status = 'paid' THEN t.amount END) AS c1__top,"
        " COUNT(DISTINCT status) AS c2__kinds FROM orders AS t"
    )
    # PostgreSQL names count(*) "count" with its filter or without: nothing to ask
    pg = shape(paid, "postgres")
    assert pg is not None and renamed([(1, pg), (2, whole)], "postgres") == []
    assert names_probe([(1, pg)], "postgres") is None


def test_an_aggregate_that_keeps_nulls_shares_across_wheres_only_with_filter() -> None:
    listed = "SELECT group_concat(name) AS names FROM orders WHERE status = 'paid'"
    mysql = shape(listed, "mysql")
    sqlite = shape(listed, "sqlite")
    assert mysql is not None and not mysql.filterable
    assert mysql.group_key == ("orders", "status = 'paid'", "", "")  # its own WHERE only
    assert sqlite is not None and sqlite.filterable


def test_the_same_where_stays_the_statements_own() -> None:
    a = shape("SELECT count(*) AS n FROM orders WHERE status = 'paid'", "duckdb")
    b = shape("SELECT sum(amount) AS s FROM orders o WHERE (o.status = 'paid')", "duckdb")
    assert a is not None and b is not None
    assert statement([(1, a), (2, b)], "duckdb") == (
        "SELECT COUNT(*) AS lookout__rows, COUNT(*) AS c1__n, SUM(amount) AS c2__s"
        " FROM orders AS t WHERE status = 'paid'"
    )


def test_a_star_over_one_aggregate_query_is_that_query() -> None:
    wrapped = shape(
        "SELECT * FROM (SELECT count(*) FROM orders o WHERE o.id > 1) AS copy_3", "duckdb"
    )
    assert wrapped is not None and wrapped.key == ("orders", "id > 1", "", "")
    for sql in (
        "SELECT * FROM (SELECT count(*) FROM orders) AS c WHERE 1 = 1",
        "SELECT * EXCLUDE (a) FROM (SELECT count(*) AS a, count(*) AS b FROM orders) AS c",
        "SELECT * FROM (SELECT count(*) FROM (SELECT id FROM orders GROUP BY id) AS g) AS c",
    ):
        assert shape(sql, "duckdb") is None, sql
