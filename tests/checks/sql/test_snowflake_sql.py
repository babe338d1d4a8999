"""Snowflake's SQL: what the guard refuses of it (exact messages), and what Lookout reads in it.

The refusals are Snowflake's own readers and side effects (stages, ``SYSTEM$`` functions,
context functions, Cortex); the lint finds ``NOT IN`` over a subquery, which sqlglot reads
as ``<> ALL`` in Snowflake; ``NUMBER(38, 0)`` is Snowflake's integer.
"""

from __future__ import annotations

import pytest

from checks.errors import QueryRejected
from checks.sql.guard import guard
from checks.sql.lint import lint
from checks.sql.types import family, matches

REFUSED = [
    ("SELECT $1 FROM @my_stage/path/file.csv", "unknown-table",
     "unsupported table reference @my_stage/path/file.csv"),
    ("SELECT * FROM @%orders", "unknown-table", "unsupported table reference @%orders"),
    ("GET @my_stage file:///tmp", "command", "GET is not allowed in a read-only query"),
    ("PUT file:///tmp/x @my_stage", "command", "PUT is not allowed in a read-only query"),
    ("LIST @my_stage", "not-a-query",
     "'LIST @my_stage' is not a query (SELECT, UNION, VALUES, …)"),
    ("COPY INTO orders FROM @s", "write", "COPY is not allowed in a read-only query"),
    ("COPY INTO @s FROM orders", "write", "COPY is not allowed in a read-only query"),
    ("CALL my_proc()", "command", "CALL is not allowed in a read-only query"),
    ("EXECUTE IMMEDIATE 'SELECT 1'", "command", "EXECUTE is not allowed in a read-only query"),
    ("SELECT SYSTEM$CANCEL_ALL_QUERIES(1)", "function",
     "function system$cancel_all_queries() is not allowed: it is a Snowflake system function"
     " (SYSTEM$…: it acts on the account, its queries or its settings)"),
    ("SELECT GET_PRESIGNED_URL(@s, 'x.csv')", "file-read",
     "function get_presigned_url() is not allowed: it reads staged files or hands out their"
     " URLs"),
    ("SELECT * FROM TABLE(INFER_SCHEMA(LOCATION => '@s'))", "file-read",
     "function infer_schema() is not allowed: it reads staged files or hands out their URLs"),
    ("SELECT * FROM TABLE(RESULT_SCAN(LAST_QUERY_ID()))", "file-read",
     "function result_scan() is not allowed: it reads files or URLs"),
    ("SELECT LAST_QUERY_ID()", "function",
     "function last_query_id() is not allowed: it reads the database's own metadata"),
    ("SELECT CURRENT_ACCOUNT(), CURRENT_WAREHOUSE()", "function",
     "function current_account() is not allowed: it reads the database's own metadata"),
    ("SELECT GET_DDL('table', 'orders')", "function",
     "function get_ddl() is not allowed: it reads the database's own metadata"),
    ("SELECT seq4() FROM TABLE(GENERATOR(ROWCOUNT => 1000000000000))", "table-function",
     "TABLE(…) table functions are not allowed"),
    ("SELECT * FROM SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY", "schema",
     "SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY: catalog-qualified names are not allowed"),
    ("SELECT snowflake.cortex.complete('m', name) FROM orders", "system-catalog",
     "snowflake.… refers to a system schema"),
    ("SELECT AI_COMPLETE('m', name) FROM orders", "function",
     "function ai_complete() is not allowed: it calls a paid AI model (Snowflake Cortex)"),
    ("SELECT CURRENT_VERSION()", "function",
     "CURRENT_VERSION() is not allowed: it reads the database's own metadata"),
]  # fmt: skip


@pytest.mark.parametrize(("sql", "rule", "reason"), REFUSED, ids=[r[0][:40] for r in REFUSED])
def test_snowflakes_own_readers_and_side_effects_are_refused(
    sql: str, rule: str, reason: str
) -> None:
    with pytest.raises(QueryRejected) as refused:
        guard(sql, dialect="snowflake", allowed_tables={"orders"})
    assert (refused.value.rule, refused.value.reason) == (rule, reason)


def test_snowflakes_own_functions_of_the_data_pass() -> None:
    sql = (
        "SELECT COUNT_IF(amount > 1), IFF(amount > 1, 1, 0), TRANSLATE(name, 'a', 'b') FROM orders"
    )
    assert guard(sql, dialect="snowflake", allowed_tables={"orders"}) == sql


def test_not_in_a_subquery_is_linted_though_sqlglot_reads_it_as_not_equal_all() -> None:
    found = lint(
        "SELECT count(*) FROM orders WHERE customer_id NOT IN (SELECT id FROM customers)",
        dialect="snowflake",
        catalog=None,
        timezone="UTC",
    )
    assert [(w.rule, w.line, w.column) for w in found] == [("not-in-subquery", 1, 35)]
    assert found[0].message.startswith("customer_id NOT IN (SELECT id FROM customers ...)")


def test_number_with_scale_zero_is_snowflakes_integer() -> None:
    assert [family(t, "snowflake") for t in ("DECIMAL(38, 0)", "NUMBER(10,2)", "FLOAT")] == [
        "integer",
        "decimal",
        "float",
    ]
    assert family("DECIMAL(38, 0)", "postgres") == "decimal"
    assert matches("DECIMAL(38, 0)", "integer", "snowflake")
