"""The SQL guard alone (layer 1): what passes, what is refused and under which rule."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from checks.errors import QueryRejected
from checks.sql.facts import SourceFacts
from checks.sql.guard import guard

TABLES = ("orders", "customers")
DIALECTS = ("duckdb", "postgres", "sqlite", "mysql")


@dataclass(frozen=True)
class Case:
    sql: str
    rule: str | None = None  # None: must pass
    dialects: tuple[str, ...] = DIALECTS


CASES = [
    # Normal analytics passes.
    Case("SELECT * FROM orders"),
    Case("SELECT o.id, c.name FROM orders AS o JOIN customers AS c ON c.id = o.customer_id"),
    Case("WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a) SELECT * FROM b"),
    Case(
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n<3) SELECT n FROM r"
    ),
    Case("SELECT (SELECT x FROM (WITH s AS (SELECT 1 AS x) SELECT * FROM s) AS t) FROM orders"),
    Case("SELECT id, row_number() OVER (PARTITION BY status ORDER BY id) FROM orders"),
    Case("SELECT id FROM orders UNION SELECT id FROM customers"),
    Case("SELECT id FROM orders INTERSECT SELECT id FROM customers"),
    Case("SELECT id FROM orders EXCEPT SELECT id FROM customers"),
    Case("SELECT CASE WHEN amount > 1 THEN 'big' ELSE 'small' END FROM orders"),
    Case("SELECT 'DROP TABLE orders; --' AS s"),
    Case('SELECT "delete" FROM orders', dialects=("duckdb", "postgres", "sqlite")),
    Case("SELECT count(*) FILTER (WHERE amount > 1) FROM orders", dialects=("duckdb", "postgres")),
    # PostgreSQL's functions called without parentheses read as bare columns
    Case("SELECT user", "function", dialects=("postgres",)),
    Case("SELECT current_role", "function", dialects=("postgres",)),
    Case("SELECT session_user", "function", dialects=("postgres",)),
    Case("SELECT id FROM orders WHERE current_schema = 'public'", "function", ("postgres",)),
    Case('SELECT "user" FROM orders', dialects=("postgres",)),  # a column so named: quoted
    Case("SELECT o.user FROM orders AS o", dialects=("postgres",)),
    Case(
        "SELECT status, count(*) FROM orders GROUP BY ROLLUP (status)",
        dialects=("duckdb", "postgres"),
    ),
    Case("SELECT * FROM orders ORDER BY id LIMIT 5 OFFSET 2"),
    Case("SELECT CAST(amount AS DECIMAL(10, 2)) FROM orders"),
    Case("SELECT * FROM (VALUES (1), (2)) AS v(n)", dialects=("duckdb", "postgres")),
    Case("VALUES (1), (2)", dialects=("duckdb", "postgres")),
    Case("(SELECT 1)"),
    Case("SELECT * FROM generate_series(1, 3) AS g(x)", dialects=("duckdb", "postgres")),
    Case("SELECT * FROM range(10)", dialects=("duckdb",)),
    Case("SELECT * FROM unnest([1, 2])", dialects=("duckdb",)),
    Case("SELECT * FROM orders, LATERAL generate_series(1, id) AS g(x)", dialects=("postgres",)),
    Case("SELECT * FROM ROWS FROM (generate_series(1, 2)) AS r(x)", dialects=("postgres",)),
    Case("FROM orders", dialects=("duckdb",)),
    Case("SELECT * FROM main.orders", dialects=("duckdb", "sqlite")),
    Case("SELECT * FROM public.orders", dialects=("postgres",)),
    Case("SELECT pg_typeof(1)", dialects=("postgres",)),
    Case("SELECT 'x' GLOB 'y'", dialects=("sqlite", "duckdb")),
    Case("SELECT 1;"),
    Case("SELECT temp.round(1) FROM orders", dialects=("duckdb",)),  # a method call, not a schema
    # Statement shape.
    Case("SELECT 1; SELECT 2", "multiple-statements"),
    Case("SELECT 1; DROP TABLE orders", "multiple-statements"),
    Case("SELEC 1 FROM", "parse-error"),
    Case("SELECT 'unterminated", "parse-error"),
    Case("   ", "parse-error"),
    Case(
        "SELECT JSON_EXTRACT('{}', '$.[')", "parse-error", dialects=("postgres", "mysql", "sqlite")
    ),
    Case(
        "SELECT * FROM orders TABLESAMPLE (10 PERCENT)", "parse-error", dialects=("sqlite", "mysql")
    ),
    Case("CHECKPOINT", "not-a-query"),
    Case("LISTEN x", "not-a-query", dialects=("postgres",)),
    Case("PIVOT orders ON status USING count(*)", "not-a-query", dialects=("duckdb",)),
    # Writes, DDL, transactions, commands anywhere in the tree.
    Case("INSERT INTO orders (id) VALUES (1)", "write"),
    Case("UPDATE orders SET amount = 0", "write"),
    Case("DELETE FROM orders", "write"),
    Case(
        "MERGE INTO orders USING customers ON orders.id = customers.id WHEN MATCHED THEN DELETE",
        "write",
    ),
    Case("COPY orders TO '/tmp/x.csv'", "write", dialects=("duckdb", "postgres")),
    Case("COPY orders FROM '/tmp/x.csv'", "write", dialects=("duckdb", "postgres")),
    Case(
        "WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d",
        "write",
        ("duckdb", "postgres"),
    ),
    Case("CREATE TABLE x AS SELECT * FROM orders", "ddl"),
    Case("DROP TABLE orders", "ddl"),
    Case("ALTER TABLE orders ADD COLUMN x INT", "ddl"),
    Case("TRUNCATE orders", "ddl", dialects=("duckdb", "postgres")),
    Case("GRANT SELECT ON orders TO public", "ddl", dialects=("duckdb", "postgres")),
    Case("BEGIN", "transaction"),
    Case("COMMIT", "transaction"),
    Case("ROLLBACK", "transaction"),
    Case("EXPLAIN SELECT 1", "explain"),
    Case("EXPLAIN ANALYZE SELECT * FROM orders", "explain"),
    Case("ATTACH 'x.db' AS x", "command", dialects=("duckdb", "sqlite")),
    Case("DETACH x", "command", dialects=("duckdb", "sqlite")),
    Case("INSTALL httpfs", "command", dialects=("duckdb",)),
    Case("LOAD httpfs", "command", dialects=("duckdb",)),
    Case("PRAGMA version", "command"),
    Case("SET threads = 1", "command"),
    Case("USE other", "command"),
    Case("SHOW TABLES", "command"),
    Case("DESCRIBE orders", "command"),
    Case("SUMMARIZE orders", "command", dialects=("duckdb",)),
    Case("CALL pragma_version()", "command"),
    Case("DO $$ BEGIN END $$", "command", dialects=("postgres",)),
    Case("PREPARE p AS SELECT 1", "command", dialects=("postgres",)),
    Case("VACUUM", "command", dialects=("postgres",)),
    Case("SELECT * INTO x FROM orders", "select-into", dialects=("duckdb", "postgres")),
    Case("SELECT * FROM orders FOR UPDATE", "locking", dialects=("duckdb", "postgres", "mysql")),
    Case("SELECT * FROM orders FOR SHARE", "locking", dialects=("postgres",)),
    # Files, URLs, environment, side effects, dynamic SQL.
    Case("SELECT * FROM read_csv('/etc/passwd')", "file-read"),
    Case("SELECT * FROM read_csv_auto('x.csv')", "file-read"),
    Case("SELECT * FROM read_parquet('x.parquet')", "file-read"),
    Case("SELECT * FROM read_json_auto('x.json')", "file-read"),
    Case("SELECT * FROM read_text('/etc/hostname')", "file-read"),
    Case("SELECT * FROM read_blob('/etc/hostname')", "file-read"),
    Case("SELECT * FROM glob('/etc/*')", "file-read", dialects=("duckdb",)),
    Case("SELECT * FROM parquet_scan('x')", "file-read"),
    Case("SELECT * FROM sqlite_scan('x.db', 't')", "file-read"),
    Case("SELECT * FROM iceberg_scan('s3://b/t')", "file-read"),
    Case("SELECT * FROM 'data.csv'", "file-read", dialects=("duckdb",)),
    Case("FROM 'https://example.com/x.parquet'", "file-read", dialects=("duckdb",)),
    Case('SELECT * FROM "/etc/passwd"', "file-read", dialects=("duckdb", "postgres")),
    Case("SELECT pg_read_file('/etc/passwd')", "file-read"),
    Case("SELECT pg_read_binary_file('/etc/passwd')", "file-read"),
    Case("SELECT * FROM pg_ls_dir('.')", "file-read"),
    Case("SELECT pg_stat_file('x')", "file-read"),
    Case("SELECT lo_import('/etc/passwd')", "file-read"),
    Case("SELECT lo_export(1, '/tmp/x')", "file-read"),
    Case("SELECT getenv('HOME')", "function"),
    Case("SELECT 'HOME'.getenv()", "function", dialects=("duckdb",)),
    Case("SELECT current_setting('data_directory')", "function"),
    Case("SELECT set_config('statement_timeout', '0', false)", "function"),
    Case("SELECT pg_sleep(10)", "function"),
    Case("SELECT pg_catalog.pg_sleep(10)", "function", dialects=("postgres",)),
    Case("SELECT pg_sleep_for('1 minute')", "function"),
    Case("SELECT pg_terminate_backend(1)", "function"),
    Case("SELECT pg_reload_conf()", "function"),
    Case("SELECT nextval('s')", "function"),
    Case("SELECT txid_current()", "function"),
    Case("SELECT * FROM dblink('dbname=x', 'SELECT 1') AS t(a INT)", "function", ("postgres",)),
    Case("SELECT query_to_xml('SELECT 1', true, true, '')", "function"),
    Case("SELECT * FROM query('SELECT 1')", "function"),
    Case("SELECT * FROM query_table('orders')", "function"),
    # SQL given as text, run by the database out of the guard's sight.
    Case("SELECT * FROM ts_stat('SELECT to_tsvector(x) FROM secret')", "function", ("postgres",)),
    Case("SELECT ts_stat('SELECT 1')", "function"),
    Case("SELECT ts_rewrite('a'::tsquery, 'SELECT 1')", "function", ("postgres", "duckdb")),
    Case("SELECT query_to_xmlschema('SELECT 1', true, true, '')", "function"),
    Case("SELECT cursor_to_xml('c', 1, true, true, '')", "function"),
    Case("SELECT cursor_to_xmlschema('c', true, true, '')", "function"),
    Case("SELECT table_to_xml_and_xmlschema('secret', true, true, '')", "function"),
    Case("SELECT schema_to_xml('public', true, true, '')", "function"),
    Case("SELECT database_to_xmlschema(true, true, '')", "function"),
    Case("SELECT * FROM crosstab('SELECT 1, 2, 3') AS t(a INT)", "function", ("postgres",)),
    Case(
        "SELECT * FROM connectby('secret', 'a', 'b', '1', 0) AS t(a INT)", "function", ("postgres",)
    ),
    Case("SELECT * FROM pgr_dijkstra('SELECT 1', 1, 2)", "function", ("postgres",)),
    Case("SELECT json_serialize_sql('SELECT 1')", "function", ("duckdb",)),
    Case("SELECT json_deserialize_sql('{}')", "function", ("duckdb",)),
    Case("SELECT json_serialize_plan('SELECT 1', optimize := true)", "function", ("duckdb",)),
    Case("SELECT * FROM json_execute_serialized_sql('{}')", "function", ("duckdb",)),
    Case("SELECT sleep_ms(1)", "function"),
    Case("SELECT pg_sleep_until(now())", "function", ("postgres",)),
    Case("SELECT getvariable('x')", "function", ("duckdb",)),
    Case("SELECT write_log('x')", "function", ("duckdb",)),
    Case("SELECT get_block_size('main')", "function", ("duckdb",)),
    Case("SELECT * FROM duckdb_settings()", "function"),
    Case("SELECT system('id')", "function"),
    Case("SELECT @@secure_file_priv", "function", dialects=("mysql",)),
    Case("SELECT * FROM json_each('{}')", "table-function"),
    Case("SELECT * FROM orders, LATERAL json_each('{}') AS j", "table-function", ("postgres",)),
    Case("SELECT * FROM ?", "unknown-table", dialects=("duckdb", "postgres")),
    # Tables outside the source.
    Case("SELECT * FROM secret", "unknown-table"),
    Case("SELECT * FROM orders UNION SELECT * FROM secret", "unknown-table"),
    Case("SELECT * FROM orders WHERE id IN (SELECT id FROM secret)", "unknown-table"),
    Case("WITH x AS (SELECT * FROM secret) SELECT * FROM x", "unknown-table"),
    Case("WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a", "unknown-table"),
    Case("WITH RECURSIVE secret AS (SELECT * FROM secret) SELECT * FROM secret", "unknown-table"),
    Case("SELECT * FROM other.orders", "schema"),
    Case("SELECT * FROM public.orders", "schema", dialects=("duckdb",)),
    Case("SELECT * FROM db.main.orders", "schema", dialects=("duckdb",)),
    Case("SELECT * FROM information_schema.tables", "system-catalog"),
    Case("SELECT * FROM pg_catalog.pg_user", "system-catalog", dialects=("postgres",)),
    Case("SELECT * FROM pg_shadow", "system-catalog"),
    Case("SELECT * FROM sqlite_master", "system-catalog"),
    Case("SELECT * FROM duckdb_tables", "system-catalog"),
    Case("SELECT information_schema.x()", "system-catalog", dialects=("postgres",)),
]

SCHEMA = {"duckdb": "main", "postgres": "public", "sqlite": "main", "mysql": "test"}


@pytest.mark.parametrize(
    ("dialect", "case"),
    [(d, c) for c in CASES for d in c.dialects],
    ids=[f"{d}-{c.sql[:50]}" for c in CASES for d in c.dialects],
)
def test_guard(dialect: str, case: Case) -> None:
    if case.rule is None:
        checked = guard(case.sql, dialect=dialect, allowed_tables=TABLES, schema=SCHEMA[dialect])
        assert checked  # and it still passes the guard itself
        guard(checked, dialect=dialect, allowed_tables=TABLES, schema=SCHEMA[dialect])
    else:
        with pytest.raises(QueryRejected) as caught:
            guard(case.sql, dialect=dialect, allowed_tables=TABLES, schema=SCHEMA[dialect])
        assert caught.value.rule == case.rule, caught.value.reason
        assert caught.value.reason


def test_too_long() -> None:
    with pytest.raises(QueryRejected) as caught:
        guard("SELECT 1" + " " * 200, dialect="duckdb", allowed_tables=(), max_chars=100)
    assert caught.value.rule == "too-long"
    assert "208" in caught.value.reason


def test_returns_regenerated_sql_without_comments() -> None:
    sql = "SELECT 1 AS one -- */ ; DROP TABLE orders; /*\n"
    assert guard(sql, dialect="duckdb", allowed_tables=TABLES) == "SELECT 1 AS one"
    assert guard("/* hi */ FROM orders", dialect="duckdb", allowed_tables=TABLES) == (
        "SELECT * FROM orders"
    )


def test_table_names_compare_case_insensitively() -> None:
    assert guard("SELECT * FROM ORDERS", dialect="duckdb", allowed_tables=["Orders"])
    assert guard('SELECT * FROM "ORDERS"', dialect="duckdb", allowed_tables=["orders"])
    assert guard("SELECT * FROM Orders", dialect="postgres", allowed_tables=["orders"])


def test_postgres_quoted_names_must_match_exactly() -> None:
    assert guard('SELECT * FROM "Orders"', dialect="postgres", allowed_tables=["Orders"])
    for sql in ('SELECT * FROM "ORDERS"', "SELECT * FROM Orders"):
        with pytest.raises(QueryRejected) as caught:
            guard(sql, dialect="postgres", allowed_tables=["Orders"])
        assert caught.value.rule == "unknown-table"


@pytest.mark.parametrize("dialect", ["postgres", "duckdb", "sqlite"])
def test_only_ascii_letters_fold(dialect: str) -> None:
    # The databases fold A-Z only: unquoted Ärzte is not the table ärzte.
    assert guard("SELECT * FROM ÄRZTE", dialect=dialect, allowed_tables=["Ärzte", "ärzte"])
    assert guard("SELECT * FROM äRZTE", dialect=dialect, allowed_tables=["ärzte"])
    refused = [
        "SELECT * FROM Ärzte",
        "SELECT * FROM ÄRZTE",
        "WITH ärzte AS (SELECT 1) SELECT * FROM Ärzte",
        "SELECT * FROM ΣΑΣ",
        "SELECT * FROM STRASSE",
    ]
    for sql in refused:
        with pytest.raises(QueryRejected) as caught:
            guard(sql, dialect=dialect, allowed_tables=["ärzte", "σας", "straße"])
        assert caught.value.rule == "unknown-table", sql


def test_quoted_names_fold_like_the_database() -> None:
    # DuckDB and SQLite ignore the case of A-Z in quoted names too; PostgreSQL does not.
    for dialect in ("duckdb", "sqlite"):
        assert guard('SELECT * FROM "ORDERS"', dialect=dialect, allowed_tables=["orders"])
        with pytest.raises(QueryRejected):
            guard('SELECT * FROM "Ärzte"', dialect=dialect, allowed_tables=["ärzte"])
    with pytest.raises(QueryRejected):
        guard("SELECT * FROM Orders", dialect="mysql", allowed_tables=["orders"])
    assert guard("SELECT * FROM orders", dialect="mysql", allowed_tables=["orders"])


def test_configured_schema_is_the_only_qualifier() -> None:
    assert guard(
        "SELECT * FROM sales.orders", dialect="postgres", allowed_tables=TABLES, schema="sales"
    )
    with pytest.raises(QueryRejected) as caught:
        guard(
            "SELECT * FROM public.orders", dialect="postgres", allowed_tables=TABLES, schema="sales"
        )
    assert caught.value.rule == "schema"
    # Without a configured schema, main and public are accepted.
    assert guard("SELECT * FROM public.orders", dialect="postgres", allowed_tables=TABLES)
    assert guard("SELECT * FROM main.orders", dialect="duckdb", allowed_tables=TABLES)


def test_cte_shadowing_a_source_table_is_fine() -> None:
    sql = "WITH orders AS (SELECT * FROM orders WHERE id > 1) SELECT * FROM orders"
    assert guard(sql, dialect="postgres", allowed_tables=TABLES)


def test_cte_is_not_visible_outside_its_query() -> None:
    sql = "SELECT * FROM (WITH x AS (SELECT 1) SELECT * FROM x) AS a, x"
    with pytest.raises(QueryRejected) as caught:
        guard(sql, dialect="duckdb", allowed_tables=TABLES)
    assert caught.value.rule == "unknown-table"


def test_reason_names_the_culprit() -> None:
    with pytest.raises(QueryRejected) as caught:
        guard("SELECT pg_sleep(1)", dialect="postgres", allowed_tables=TABLES)
    assert "pg_sleep" in caught.value.reason
    assert str(caught.value).startswith("rejected (function): ")
    with pytest.raises(QueryRejected) as caught:
        guard("WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d", dialect="postgres",
              allowed_tables=TABLES)  # fmt: skip
    assert "DELETE inside a WITH clause" in caught.value.reason


# Given the database's facts: only what it marks as safe, of the source's schema.

FACTS = SourceFacts(
    functions=frozenset({"upper", "twice", "json_populate_record"}),
    types=frozenset({"int4", "mood"}),
    schemas=frozenset({"main", "public", "hidden"}),
)


@pytest.mark.parametrize(
    ("dialect", "sql", "rule"),
    [
        ("postgres", "SELECT brin_summarize_new_values(1)", "function"),
        ("postgres", "SELECT hidden.get_secret()", "schema"),
        ("postgres", "SELECT a.b.c()", "schema"),
        ("duckdb", "SELECT hidden.leak()", "schema"),
        ("postgres", "SELECT NULL::hidden.secret", "schema"),
        ("postgres", "SELECT NULL::secret", "type"),
        ("postgres", "SELECT 1::regclass", "system-catalog"),
        ("duckdb", "SELECT 1::regtype", "system-catalog"),
        ("postgres", "SELECT current_user", "function"),
        ("postgres", "SELECT has_table_privilege('secret', 'select')", "function"),
        ("postgres", "SELECT to_regclass('secret')", "function"),
    ],
)
def test_guard_allows_only_what_the_facts_allow(dialect: str, sql: str, rule: str) -> None:
    with pytest.raises(QueryRejected) as caught:
        guard(sql, dialect=dialect, allowed_tables=TABLES, schema=SCHEMA[dialect], facts=FACTS)
    assert caught.value.rule == rule, caught.value.reason


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("postgres", "SELECT twice(amount), upper(status), NULL::mood FROM orders"),
        ("postgres", "SELECT public.twice(amount), 1::oid, amount::int4 FROM orders"),
        ("postgres", "SELECT json_populate_record(NULL::orders, '{}')"),
        ("duckdb", "SELECT status.upper(), sum(amount), count(*) FROM orders GROUP BY status"),
    ],
)
def test_guard_keeps_what_the_facts_allow(dialect: str, sql: str) -> None:
    guard(sql, dialect=dialect, allowed_tables=TABLES, schema=SCHEMA[dialect], facts=FACTS)
