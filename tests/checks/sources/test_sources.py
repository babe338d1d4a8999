"""Sources on real engines: the guarded battery, each layer alone, limits, catalog, cache."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3
import tempfile
import threading
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest

from checks.errors import QueryError, QueryFailed, QueryRejected, QueryTimeout, SourceError
from checks.fields.expectation import parse_expectation
from checks.fields.judgement import evaluate
from checks.settings.config import Settings
from checks.settings.limits import Limits
from checks.settings.sources import DuckDBSource, SQLAlchemySource, TableFile
from checks.sources import DuckDBQuerySource, QueryResult, Source, SQLQuerySource, open_source
from checks.sources.base import (
    MIN_NAME_CHARS,
    Oversized,
    check_width,
    collect,
    names_chars,
    shown_names,
)
from checks.sources.duckdb_connection import QueryLimits, open_connection
from tests.conftest import scratch_pg_database

SETUP = [
    "CREATE TABLE customers (id INTEGER, name VARCHAR, region VARCHAR)",
    "INSERT INTO customers VALUES (1, 'Ada', 'north'), (2, 'Bo', 'south'), (3, 'Cy', 'north')",
    "CREATE TABLE orders (id INTEGER, customer_id INTEGER, amount DECIMAL(10, 2), status VARCHAR,"
    ' created DATE, "delete" BOOLEAN)',
    "INSERT INTO orders VALUES"
    " (1, 1, 10.00, 'paid', '2024-01-01', false), (2, 1, 20.50, 'paid', '2024-01-15', false),"
    " (3, 2, 5.25, 'refunded', '2024-02-01', true), (4, 3, 100.00, 'paid', '2024-02-10', false),"
    " (5, 2, NULL, 'pending', '2024-03-01', false), (6, 3, 7.75, 'paid', '2024-03-05', true)",
]
ORDERS = 'SELECT id, amount, status, created, "delete" FROM orders ORDER BY id'
ENGINES = ("duckdb", "postgres")


@pytest.fixture(scope="module")
def duck_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("duck") / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        for statement in SETUP:
            conn.execute(statement)
        conn.execute("CREATE SCHEMA other")
        conn.execute("CREATE MACRO other.get_secret() AS 'topsecret'")
        conn.execute("CREATE MACRO main.twice(x) AS x * 2")
    return path


@pytest.fixture(scope="module")
def shop_pg_url() -> Iterator[str]:
    """The shop in a database of its own, made again each time the module's fixtures are:
    a group's tests (``xdist_group``) may run apart from the module's others."""
    with scratch_pg_database() as pg_url:
        yield _made_shop(pg_url)


def _made_shop(pg_url: str) -> str:
    with psycopg.connect(pg_url.replace("+psycopg", ""), autocommit=True) as conn:
        for statement in [*SETUP, "CREATE TABLE secret (a INTEGER)", "CREATE SEQUENCE orders_seq"]:
            conn.execute(statement)
        conn.execute("CREATE SCHEMA other")
        conn.execute("CREATE TABLE other.orders (a INTEGER)")
        conn.execute(
            "CREATE FUNCTION other.get_secret() RETURNS text LANGUAGE sql STABLE"
            " AS $$ SELECT 'topsecret' $$"
        )
        conn.execute(
            "CREATE FUNCTION public.twice(x numeric) RETURNS numeric LANGUAGE sql IMMUTABLE"
            " AS $$ SELECT x * 2 $$"
        )
        # A helper that reads any table named in its argument, marked STABLE.
        conn.execute(
            "CREATE FUNCTION public.rows_of(name text) RETURNS bigint LANGUAGE plpgsql STABLE"
            " AS $$ DECLARE n bigint; BEGIN EXECUTE format('SELECT count(*) FROM %s', name)"
            " INTO n; RETURN n; END $$"
        )
    return pg_url


@pytest.fixture(scope="module")
def sources(
    duck_path: Path, shop_pg_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Source]]:
    settings = Settings(cache_dir=str(tmp_path_factory.mktemp("cache")))
    duck = open_source("shop", DuckDBSource(type="duckdb", database=str(duck_path)), settings)
    pg = open_source(
        "shop",
        SQLAlchemySource(type="sqlalchemy", url=shop_pg_url, tables=["orders", "customers"]),
        settings,
    )
    yield {"duckdb": duck, "postgres": pg}
    duck.close()
    pg.close()


@dataclass(frozen=True)
class Case:
    """One statement for both engines: expected rows, or the rule that rejects it."""

    id: str
    sql: str
    rows: list[tuple[Any, ...]] | None = None
    rule: str | None = None
    pg_sql: str | None = None  # when PostgreSQL needs other text
    pg_rule: str | None = None  # when sqlglot refuses it under another rule in PostgreSQL

    def for_engine(self, engine: str) -> tuple[str, str | None]:
        if engine == "postgres":
            return self.pg_sql or self.sql, self.pg_rule or self.rule
        return self.sql, self.rule


D = Decimal
BATTERY = [
    # Analytics that must pass and give the right values.
    Case(
        "select",
        "SELECT id, amount FROM orders WHERE id <= 2 ORDER BY id",
        [(1, D("10.00")), (2, D("20.50"))],
    ),
    Case(
        "group-by",
        "SELECT status, count(*) FROM orders GROUP BY status ORDER BY status",
        [("paid", 4), ("pending", 1), ("refunded", 1)],
    ),
    Case(
        "join",
        "SELECT c.name, sum(o.amount) FROM orders AS o JOIN customers AS c ON c.id = o.customer_id"
        " GROUP BY c.name ORDER BY c.name",
        [("Ada", D("30.50")), ("Bo", D("5.25")), ("Cy", D("107.75"))],
    ),
    Case(
        "cte",
        "WITH paid AS (SELECT * FROM orders WHERE status = 'paid') SELECT count(*) FROM paid",
        [(4,)],
    ),
    Case(
        "cte-chain",
        "WITH a AS (SELECT customer_id FROM orders), b AS (SELECT DISTINCT customer_id FROM a)"
        " SELECT count(*) FROM b",
        [(3,)],
    ),
    Case(
        "cte-recursive",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5)"
        " SELECT sum(n) FROM r",
        [(15,)],
    ),
    Case(
        "window-row-number",
        "SELECT id, row_number() OVER (PARTITION BY customer_id ORDER BY created)"
        " FROM orders ORDER BY id",
        [(1, 1), (2, 2), (3, 1), (4, 1), (5, 2), (6, 2)],
    ),
    Case(
        "window-running-sum",
        "SELECT id, sum(amount) OVER (ORDER BY id) FROM orders WHERE id <= 3 ORDER BY id",
        [(1, D("10.00")), (2, D("30.50")), (3, D("35.75"))],
    ),
    Case(
        "window-lag",
        "SELECT id, lag(id) OVER (ORDER BY id) FROM orders WHERE id <= 2 ORDER BY id",
        [(1, None), (2, 1)],
    ),
    Case(
        "union",
        "SELECT id FROM customers UNION SELECT customer_id FROM orders ORDER BY 1",
        [(1,), (2,), (3,)],
    ),
    Case(
        "except",
        "SELECT id FROM customers EXCEPT SELECT customer_id FROM orders WHERE status = 'refunded'"
        " ORDER BY 1",
        [(1,), (3,)],
    ),
    Case(
        "intersect",
        "SELECT customer_id FROM orders WHERE amount > 50 INTERSECT SELECT id FROM customers",
        [(3,)],
    ),
    Case(
        "case",
        "SELECT id, CASE WHEN amount >= 20 THEN 'big' WHEN amount IS NULL THEN 'none' ELSE 'small'"
        " END FROM orders WHERE id IN (1, 2, 5) ORDER BY id",
        [(1, "small"), (2, "big"), (5, "none")],
    ),
    Case("literal-drop-table", "SELECT 'DROP TABLE orders; --' AS s", [("DROP TABLE orders; --",)]),
    Case("quoted-delete-column", 'SELECT count(*) FROM orders WHERE "delete"', [(2,)]),
    Case(
        "filter",
        "SELECT count(*) FILTER (WHERE status = 'paid'), count(*) FILTER (WHERE \"delete\")"
        " FROM orders",
        [(4, 2)],
    ),
    Case(
        "date-trunc",
        "SELECT CAST(date_trunc('month', created) AS DATE) AS m, count(*) FROM orders"
        " GROUP BY 1 ORDER BY 1",
        [(dt.date(2024, 1, 1), 2), (dt.date(2024, 2, 1), 2), (dt.date(2024, 3, 1), 2)],
    ),
    Case(
        "extract",
        "SELECT CAST(extract(month FROM created) AS INTEGER) FROM orders WHERE id = 4",
        [(2,)],
    ),
    Case(
        "subquery-in",
        "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE amount > 50)",
        [("Cy",)],
    ),
    Case(
        "exists",
        "SELECT c.name FROM customers AS c WHERE EXISTS (SELECT 1 FROM orders AS o"
        " WHERE o.customer_id = c.id AND o.status = 'refunded')",
        [("Bo",)],
    ),
    Case("limit-offset", "SELECT id FROM orders ORDER BY id LIMIT 2 OFFSET 2", [(3,), (4,)]),
    Case(
        "rollup",
        "SELECT status, count(*) FROM orders GROUP BY ROLLUP (status) ORDER BY status NULLS LAST",
        [("paid", 4), ("pending", 1), ("refunded", 1), (None, 6)],
    ),
    Case(
        "having",
        "SELECT customer_id FROM orders GROUP BY customer_id HAVING sum(amount) > 20 ORDER BY 1",
        [(1,), (3,)],
    ),
    Case("coalesce", "SELECT sum(coalesce(amount, 0)) FROM orders", [(D("143.50"),)]),
    Case(
        "values",
        "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(n, s) ORDER BY n",
        [(1, "a"), (2, "b")],
    ),
    Case("generate-series", "SELECT count(*) FROM generate_series(1, 10) AS g(x)", [(10,)]),
    Case(
        "schema-qualified",
        "SELECT count(*) FROM main.orders",
        [(6,)],
        pg_sql="SELECT count(*) FROM public.orders",
    ),
    Case("ilike", "SELECT upper(name) FROM customers WHERE name ILIKE 'a%'", [("ADA",)]),
    Case("comment", "SELECT 1 AS one -- ; DROP TABLE orders", [(1,)]),
    Case("own-schema-function", "SELECT twice(amount) FROM orders WHERE id = 1", [(D("20.00"),)]),
    Case("volatile-but-harmless", "SELECT count(*) FROM orders WHERE random() < 2", [(6,)]),
    Case(
        "casts-to-built-in-types",
        "SELECT CAST(id AS VARCHAR), amount::DOUBLE, created::TIMESTAMP FROM orders WHERE id = 1",
        [("1", 10.0, dt.datetime(2024, 1, 1))],
        pg_sql="SELECT CAST(id AS TEXT), amount::float8, created::timestamp FROM orders"
        " WHERE id = 1",
    ),
    Case(
        "method-call",
        "SELECT name.upper() FROM customers WHERE id = 1",
        [("ADA",)],
        pg_sql="SELECT upper(name) FROM customers WHERE id = 1",
    ),
    Case(
        "row-type-of-a-data-set",
        "SELECT 7 AS id",  # DuckDB has no row types
        [(7,)],
        pg_sql="""SELECT (json_populate_record(NULL::orders, '{"id": 7}')).id + 0 AS id""",
    ),
    # Escape attempts.
    Case("multi-statement", "SELECT 1; DROP TABLE orders", rule="multiple-statements"),
    Case("drop", "DROP TABLE orders", rule="ddl"),
    Case("create", "CREATE TABLE x AS SELECT * FROM orders", rule="ddl"),
    Case("insert", "INSERT INTO orders (id) VALUES (99)", rule="write"),
    Case("update", "UPDATE orders SET amount = 0", rule="write"),
    Case("delete", "DELETE FROM orders", rule="write"),
    Case("begin", "BEGIN", rule="transaction"),
    Case("commit", "COMMIT", rule="transaction"),
    Case(
        "writable-cte", "WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d", rule="write"
    ),
    Case("select-into", "SELECT * INTO orders_copy FROM orders", rule="select-into"),
    Case("explain-analyze", "EXPLAIN ANALYZE SELECT * FROM orders", rule="explain"),
    Case("copy-to", "COPY orders TO '/tmp/lookout-orders.csv'", rule="write"),
    Case("copy-from", "COPY orders FROM '/tmp/lookout-orders.csv'", rule="write"),
    Case("attach", "ATTACH '/tmp/other.db' AS other", rule="command", pg_rule="parse-error"),
    Case("install", "INSTALL httpfs", rule="command", pg_rule="not-a-query"),
    Case("load", "LOAD httpfs", rule="command"),
    Case("pragma", "PRAGMA version", rule="command"),
    Case(
        "set",
        "SET enable_external_access = true",
        rule="command",
        pg_sql="SET default_transaction_read_only = off",
    ),
    Case("for-update", "SELECT * FROM orders FOR UPDATE", rule="locking"),
    Case("read-csv", "SELECT * FROM read_csv('/etc/passwd')", rule="file-read"),
    Case("read-text", "SELECT * FROM read_text('/etc/hostname')", rule="file-read"),
    Case("string-file", "SELECT * FROM '/etc/passwd'", rule="file-read"),
    Case("getenv", "SELECT getenv('HOME')", rule="function"),
    Case("pg-sleep", "SELECT pg_sleep(5)", rule="function"),
    Case("pg-read-file", "SELECT pg_read_file('/etc/passwd')", rule="file-read"),
    Case("lo-export", "SELECT lo_export(1, '/tmp/lookout-lo')", rule="file-read"),
    Case(
        "dblink",
        "SELECT * FROM dblink('dbname=test', 'DROP TABLE orders') AS t(a TEXT)",
        rule="function",
    ),
    Case(
        "set-config",
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        rule="function",
    ),
    Case("query-fn", "SELECT * FROM query('SELECT 1')", rule="function"),
    Case("outside-table", "SELECT * FROM secret", rule="unknown-table"),
    Case("outside-schema", "SELECT * FROM other.orders", rule="schema"),
    Case("system-catalog", "SELECT * FROM information_schema.tables", rule="system-catalog"),
    Case("pg-catalog", "SELECT * FROM pg_catalog.pg_user", rule="system-catalog"),
    Case("duckdb-functions", "SELECT * FROM duckdb_tables()", rule="function"),
    # Only what the database itself marks as safe, and only of the source's schema.
    Case("other-schema-function", "SELECT other.get_secret()", rule="schema"),
    Case("procedural-helper", "SELECT rows_of('other.orders')", rule="function"),
    Case("volatile-built-in", "SELECT brin_summarize_new_values(1)", rule="function"),
    Case("brin-desummarize", "SELECT brin_desummarize_range(1, 0)", rule="function"),
    Case("gin-clean", "SELECT gin_clean_pending_list(1)", rule="function"),
    Case("currtid2", "SELECT currtid2('orders', '(0,1)')", rule="function"),
    Case("current-query", "SELECT current_query()", rule="function"),
    Case(
        "regclass",
        "SELECT i::oid::regclass::text FROM generate_series(1, 3) AS g(i)",
        rule="system-catalog",
    ),
    Case("regnamespace", "SELECT 2200::regnamespace::text", rule="system-catalog"),
    Case("regrole", "SELECT 10::regrole::text", rule="system-catalog"),
    Case("obj-description", "SELECT obj_description(1)", rule="function"),
    Case(
        "other-schema-row-type",
        "SELECT NULL::other.orders",
        rule="schema",
        pg_sql="SELECT json_populate_record(NULL::other.orders, '{}')",
    ),
    Case("unlisted-row-type", "SELECT NULL::secret", rule="type"),
    Case("version", "SELECT version()", rule="function"),
    Case("inet-server-addr", "SELECT inet_server_addr()", rule="function"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", BATTERY, ids=[c.id for c in BATTERY])
def test_battery(sources: dict[str, Source], engine: str, case: Case) -> None:
    sql, rule = case.for_engine(engine)
    source = sources[engine]
    if rule is None:
        result = source.query(sql)
        assert result.rows == case.rows
        assert result.row_count == len(case.rows or [])
        assert not result.truncated
    else:
        with pytest.raises(QueryRejected) as caught:
            source.query(sql)
        assert caught.value.rule == rule, caught.value.reason


def test_battery_is_big_enough() -> None:
    assert sum(c.rule is None for c in BATTERY) >= 20
    assert sum(c.rule is not None for c in BATTERY) >= 30


# Layer 2 alone: the guard bypassed, the connection still refuses.

DUCK_WRITES = [
    "INSERT INTO orders (id) VALUES (99)",
    "UPDATE orders SET amount = 0",
    "DELETE FROM orders",
    "CREATE TABLE x AS SELECT * FROM orders",
    "DROP TABLE orders",
    "SELECT 1; DROP TABLE orders",
    "COPY orders TO '{out}'",
    "SELECT * FROM read_csv('{csv}')",
    "SELECT * FROM '{csv}'",
    "ATTACH '{db}' AS other",
    "SET enable_external_access = true",
    "INSTALL httpfs",
    "LOAD httpfs",
    "PRAGMA version",
    "EXPORT DATABASE '{dir}'",
]
PG_WRITES = [
    "INSERT INTO orders (id) VALUES (99)",
    "UPDATE orders SET amount = 0",
    "DELETE FROM orders",
    "CREATE TABLE x AS SELECT * FROM orders",
    "DROP TABLE orders",
    "SELECT 1; DROP TABLE orders",
    "COPY orders TO '{out}'",
    "WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d",
    "SELECT * INTO orders_copy FROM orders",
    "SELECT * FROM orders FOR UPDATE",
    "COMMIT; DROP TABLE orders",
    "SET default_transaction_read_only = off",
    "SELECT nextval('orders_seq')",
]


def _bypass(source: Source, template: str, tmp_path: Path) -> None:
    csv = tmp_path / "in.csv"
    csv.write_text("a\n1\n")
    sql = template.format(
        out=tmp_path / "out.csv", csv=csv, db=tmp_path / "x.db", dir=tmp_path / "exp"
    )
    with pytest.raises(QueryFailed):
        source._execute(sql, max_rows=10, timeout_s=5)


@pytest.mark.parametrize("template", DUCK_WRITES)
def test_duckdb_connection_refuses_alone(
    sources: dict[str, Source], template: str, tmp_path: Path
) -> None:
    source = sources["duckdb"]
    before = source._execute(ORDERS, max_rows=10, timeout_s=5)
    _bypass(source, template, tmp_path)
    assert source._execute(ORDERS, max_rows=10, timeout_s=5).fingerprint == before.fingerprint
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


@pytest.fixture
def server_writable_dir() -> Iterator[Path]:
    """A directory the PostgreSQL server process could write to, if it were let."""
    path = Path(tempfile.mkdtemp(prefix="lookout-pg-", dir="/tmp"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path)


def test_postgres_server_could_write_there(shop_pg_url: str, server_writable_dir: Path) -> None:
    """Control for the next test: outside a source, COPY TO really writes the file."""
    with psycopg.connect(shop_pg_url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(f"COPY orders TO '{server_writable_dir / 'control.csv'}'")
    assert (server_writable_dir / "control.csv").exists()


@pytest.mark.parametrize("template", PG_WRITES)
def test_postgres_connection_refuses_alone(
    sources: dict[str, Source], shop_pg_url: str, template: str, server_writable_dir: Path
) -> None:
    source = sources["postgres"]
    before = source._execute(ORDERS, max_rows=10, timeout_s=5)
    _bypass(source, template, server_writable_dir)
    assert source._execute(ORDERS, max_rows=10, timeout_s=5).fingerprint == before.fingerprint
    assert sorted(p.name for p in server_writable_dir.iterdir()) == ["in.csv"]
    with psycopg.connect(shop_pg_url.replace("+psycopg", "")) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        names = {r[0] for r in tables}  # other tests' store tables may share this database
        assert {"customers", "orders", "secret"} <= names
        assert not {"x", "orders_copy"} & names
        assert conn.execute("SELECT last_value, is_called FROM orders_seq").fetchone() == (1, False)


def test_postgres_runs_in_a_read_only_transaction(sources: dict[str, Source]) -> None:
    result = sources["postgres"]._execute(
        "SELECT current_setting('transaction_read_only')", max_rows=1, timeout_s=5
    )
    assert result.rows == [("on",)]


def test_postgres_sessions_end_an_idle_open_transaction(sources: dict[str, Source]) -> None:
    result = sources["postgres"]._execute(
        "SELECT current_setting('idle_in_transaction_session_timeout')",
        max_rows=1,
        timeout_s=5,
    )
    assert result.rows == [("30s",)]  # limits.query_timeout_s, the connection's default


# Layer 3: limits.

SLOW = {
    "duckdb": "SELECT count(*) FROM range(1000000000) AS a, range(1000) AS b",
    "postgres": "SELECT count(*) FROM generate_series(1, 1000000000) AS a,"
    " generate_series(1, 1000) AS b",
}


@pytest.mark.xdist_group("alone")  # measures wall time: never beside another of its group
@pytest.mark.parametrize("engine", ENGINES)
def test_timeout_interrupts_a_long_query(sources: dict[str, Source], engine: str) -> None:
    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        sources[engine].query(SLOW[engine], timeout_s=0.5)
    assert time.monotonic() - started < 3
    assert sources[engine].query("SELECT 1 AS ok").rows == [(1,)]  # the connection still works


@pytest.mark.xdist_group("alone")  # measures wall time: never beside another of its group
def test_postgres_timeout_without_the_guard(sources: dict[str, Source]) -> None:
    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        sources["postgres"]._execute("SELECT pg_sleep(10)", max_rows=1, timeout_s=0.5)
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("engine", ENGINES)
def test_row_cap_sets_truncated(sources: dict[str, Source], engine: str) -> None:
    capped = sources[engine].query(ORDERS, max_rows=2)
    assert [r[0] for r in capped.rows] == [1, 2]
    assert (capped.row_count, capped.truncated, capped.scan_capped) == (6, True, False)
    full = sources[engine].query(ORDERS, max_rows=6)
    assert (len(full.rows), full.truncated) == (6, False)
    assert full.fingerprint == capped.fingerprint  # every row is hashed, not only those kept


def test_fingerprint_is_the_same_on_both_engines(sources: dict[str, Source]) -> None:
    duck, pg = (sources[e].query(ORDERS) for e in ENGINES)
    assert duck.rows == pg.rows
    assert duck.fingerprint == pg.fingerprint
    other = sources["duckdb"].query(ORDERS.replace("ORDER BY id", "WHERE id > 1 ORDER BY id"))
    assert other.fingerprint != duck.fingerprint


def test_scan_stops_at_fingerprint_max_rows(duck_path: Path) -> None:
    with DuckDBQuerySource("shop", duck_path, Limits(fingerprint_max_rows=3, max_rows=2)) as source:
        result = source.query("SELECT id FROM orders ORDER BY id")
    assert (result.row_count, result.scan_capped, result.truncated, len(result.rows)) == (
        4,
        True,
        True,
        2,
    )


def test_jsonable_types_and_budgets() -> None:
    row = (
        D("1.10"),
        dt.date(2024, 1, 2),
        dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        dt.timedelta(hours=1),
        b"\x00\x01",
        float("nan"),
        "x" * 50,
        [1, "a"],
        {"k": D("2")},
        None,
    )
    result = QueryResult("q", [f"c{i}" for i in range(len(row))], [row] * 3, 3, False, "f", 1.0)
    rows, cut = result.jsonable(max_cell_chars=30, max_result_chars=10_000)
    assert not cut
    assert rows[0] == [
        "1.10",
        "2024-01-02",
        "2024-01-02T03:04:05+00:00",
        "1:00:00",
        "<2 bytes>",
        "NaN",
        "x" * 29 + "…",
        [1, "a"],
        {"k": "2"},
        None,
    ]
    one_row = len(json.dumps(rows[0], ensure_ascii=False)) + 1
    names = len(json.dumps(result.columns))  # the column names count in the budget
    rows, cut = result.jsonable(max_cell_chars=30, max_result_chars=2 + names + one_row * 2)
    assert cut and len(rows) == 2
    long = QueryResult("q", ["c"], [([1, 2, 3, 4, 5, 6],)], 1, False, "f", 1.0)
    assert long.jsonable(max_cell_chars=10, max_result_chars=1000)[0] == [["[1, 2, 3,…"]]


def test_shown_names_fit_the_cell_and_result_budgets() -> None:
    assert shown_names(["a", "bb"], max_cell_chars=10, max_result_chars=100) == ["a", "bb"]
    assert shown_names(["x" * 50], max_cell_chars=10, max_result_chars=1000) == ["x" * 9 + "…"]
    long_names = [f"{i:03}" + "y" * 100 for i in range(40)]
    many = shown_names(long_names, max_cell_chars=50, max_result_chars=1000)
    assert len(many) == 40 and len(set(map(len, many))) == 1  # one shorter, shared length
    assert names_chars(many) <= 500 and len(many[0]) >= MIN_NAME_CHARS
    assert many[0].startswith("000") and many[0].endswith("…")
    with pytest.raises(QueryFailed, match="2,000 columns"):
        check_width(
            shown_names(["z" * 20] * 2000, max_cell_chars=200, max_result_chars=1000),
            max_result_chars=1000,
        )


@pytest.mark.parametrize("engine", ENGINES)
def test_long_column_names_are_cut_and_counted(sources: dict[str, Source], engine: str) -> None:
    source = sources[engine]
    limits = source.limits
    name = "n" * 60 if engine == "postgres" else "n" * 5000  # PostgreSQL cuts names at 63 bytes
    sql = f'SELECT id AS "{name}", status AS "{name}x" FROM orders ORDER BY id'
    result = source.query(sql)
    assert all(len(c) <= limits.max_cell_chars for c in result.columns)
    assert result.columns[0][:50] == name[:50]
    rows, _ = result.jsonable(
        max_cell_chars=limits.max_cell_chars, max_result_chars=limits.max_result_chars
    )
    assert len(json.dumps([result.columns, rows])) <= limits.max_result_chars + 10
    assert result.fingerprint != source.query(sql.replace(f'"{name}x"', '"other"')).fingerprint


def test_too_many_columns_to_show_is_an_error(duck_path: Path) -> None:
    with DuckDBQuerySource("shop", duck_path, Limits(max_result_chars=500)) as source:
        with pytest.raises(QueryFailed, match="columns: their names alone"):
            source.query("SELECT " + ", ".join(f"{i} AS column_{i}" for i in range(200)))
        assert source.query("SELECT 1 AS a, 2 AS b").columns == ["a", "b"]


def test_describe_cuts_long_column_names(tmp_path: Path) -> None:
    path = tmp_path / "wide.duckdb"
    with duckdb.connect(str(path)) as conn:
        columns = ", ".join(f'"{i:03}{"c" * 3000}" INTEGER' for i in range(30))
        conn.execute(f"CREATE TABLE wide ({columns})")
        conn.execute(f"INSERT INTO wide VALUES ({', '.join(['7'] * 30)})")
    limits = Limits(max_sql_chars=200_000)
    with DuckDBQuerySource("wide", path, limits) as source:
        described = source.describe("wide")
    assert len(json.dumps(described, ensure_ascii=False)) <= limits.max_result_chars
    assert [c["name"][:3] for c in described["columns"]] == [f"{i:03}" for i in range(30)]
    assert all(len(c["name"]) <= limits.max_cell_chars for c in described["columns"])
    assert described["sample_rows"] == [[7] * 30]


@pytest.mark.parametrize("engine", ENGINES)
def test_concurrent_queries_from_threads(sources: dict[str, Source], engine: str) -> None:
    source = sources[engine]
    queries = [c.for_engine(engine)[0] for c in BATTERY if c.rule is None][:8]
    expected = {sql: source.query(sql).rows for sql in queries}
    errors: list[BaseException] = []

    def run(sql: str) -> None:
        try:
            for _ in range(5):
                assert source.query(sql).rows == expected[sql]
        except BaseException as error:  # collected and re-raised below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(sql,)) for sql in queries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors


# Catalog and describe.


@pytest.mark.parametrize("engine", ENGINES)
def test_catalog_and_describe(sources: dict[str, Source], engine: str) -> None:
    catalog = sources[engine].catalog()
    assert [(d.name, d.row_count) for d in catalog] == [("customers", 3), ("orders", 6)]
    assert [c.name for c in catalog[1].columns] == [
        "id",
        "customer_id",
        "amount",
        "status",
        "created",
        "delete",
    ]
    described = sources[engine].describe("ORDERS", sample_rows=2)
    assert described["row_count"] == 6
    assert {c["name"]: c["null_count"] for c in described["columns"]}["amount"] == 1
    assert described["sample_rows"] == [[1, 1, "10.00", "paid", "2024-01-01", False],
                                        [2, 1, "20.50", "paid", "2024-01-15", False]]  # fmt: skip
    with pytest.raises(SourceError, match="no data set 'secret'"):
        sources[engine].describe("secret")


def test_flights_catalog(flights_source: Source) -> None:
    catalog = {d.name: d for d in flights_source.catalog()}
    assert {name: d.row_count for name, d in catalog.items()} == {
        "airlines": 16,
        "airports": 1458,
        "flights": 336776,
        "planes": 3322,
        "weather": 26115,
    }
    types = {c.name: c.type for c in catalog["flights"].columns}
    assert types["dep_delay"] in {"BIGINT", "INTEGER", "DOUBLE"}
    assert {c.name: c.type for c in catalog["weather"].columns}["time_hour"].startswith("TIMESTAMP")
    nulls = {c["name"]: c["null_count"] for c in flights_source.describe("flights")["columns"]}
    assert nulls["dep_delay"] == 8255
    result = flights_source.query("SELECT count(*) FROM flights WHERE dep_delay IS NULL")
    assert result.rows == [(8255,)]


def test_flights_cache_is_built_once(flights_source: Source, flights_settings: Settings) -> None:
    assert isinstance(flights_source, DuckDBQuerySource)
    built = flights_source.path
    stamp = built.stat().st_mtime_ns
    with open_source("flights", flights_settings.sources["flights"], flights_settings) as again:
        assert isinstance(again, DuckDBQuerySource)
        assert again.path == built
    assert built.stat().st_mtime_ns == stamp
    assert [p.name for p in built.parent.iterdir()] == [built.name]


# Building DuckDB caches from files.


def _csv_settings(
    tmp_path: Path, tables: dict[str, str | TableFile]
) -> tuple[DuckDBSource, Settings]:
    return DuckDBSource(type="duckdb", tables=tables), Settings(cache_dir=str(tmp_path / "cache"))


def test_csv_nulls_zip_and_rebuild(tmp_path: Path) -> None:
    csv = tmp_path / "m.csv"
    csv.write_text("k,v\na,1\nb,NA\nc,-\n")
    with zipfile.ZipFile(tmp_path / "z.zip", "w") as archive:
        archive.writestr("inner/z.csv", "n\n1\n2\n")
    config, settings = _csv_settings(
        tmp_path,
        {"m": TableFile(path=str(csv), null_strings=["NA", "-"]), "z": str(tmp_path / "z.zip")},
    )
    with open_source("files", config, settings) as source:
        assert source.query("SELECT k, v FROM m ORDER BY k").rows == [
            ("a", 1),
            ("b", None),
            ("c", None),
        ]
        assert source.query("SELECT sum(n) FROM z").rows == [(3,)]
        first = source.path if isinstance(source, DuckDBQuerySource) else None
    csv.write_text("k,v\na,5\n")
    with open_source("files", config, settings) as source:
        assert source.query("SELECT v FROM m").rows == [(5,)]
        assert isinstance(source, DuckDBQuerySource) and source.path != first


@pytest.mark.slow
def test_concurrent_builders_agree(tmp_path: Path) -> None:
    csv = tmp_path / "t.csv"
    csv.write_text("a\n" + "\n".join(str(i) for i in range(1000)) + "\n")
    config, settings = _csv_settings(tmp_path, {"t": str(csv)})
    opened: list[Source] = []
    threads = [
        threading.Thread(target=lambda: opened.append(open_source("t", config, settings)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(opened) == 4
    assert {s.path for s in opened if isinstance(s, DuckDBQuerySource)} == {
        next((tmp_path / "cache" / "sources").iterdir())
    }
    for source in opened:
        assert source.query("SELECT count(*) FROM t").rows == [(1000,)]
        source.close()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: DuckDBSource(type="duckdb", database=str(p / "none.duckdb")), "does not exist"),
        (lambda p: DuckDBSource(type="duckdb", tables={"t": str(p / "none.csv")}), "not found"),
        (
            lambda p: DuckDBSource(type="duckdb", tables={"t": "package:nope_pkg/x.csv"}),
            "no installed package",
        ),
        (lambda p: DuckDBSource(type="duckdb"), "set database, tables or both"),
        (
            lambda p: SQLAlchemySource(type="sqlalchemy", url="sqlite:///" + str(p / "none.db")),
            "does not exist",
        ),
        (
            lambda p: SQLAlchemySource(type="sqlalchemy", url="oracle://u@h/db"),
            "unsupported database",
        ),
    ],
)
def test_open_errors(tmp_path: Path, make: Callable[[Path], Any], message: str) -> None:
    with pytest.raises(SourceError, match=message):
        open_source("bad", make(tmp_path), Settings(cache_dir=str(tmp_path)))


def test_connect_error_hides_the_password(tmp_path: Path) -> None:
    url = "postgresql://lookout:hunter2secret@127.0.0.1:5432/no_such_db"
    with pytest.raises(SourceError) as caught:
        open_source(
            "pg", SQLAlchemySource(type="sqlalchemy", url=url), Settings(cache_dir=str(tmp_path))
        )
    assert "hunter2secret" not in str(caught.value)
    assert "lookout:***@127.0.0.1" in str(caught.value)


# SQLite.


@pytest.fixture
def sqlite_source(tmp_path: Path) -> Iterator[Source]:
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER, amount REAL)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", [(i, i * 1.5) for i in range(10)])
    with open_source(
        "lite", SQLAlchemySource(type="sqlalchemy", url=f"sqlite:///{path}"), Settings()
    ) as source:
        yield source


@pytest.mark.xdist_group("alone")  # measures wall time: never beside another of its group
def test_sqlite_source(sqlite_source: Source) -> None:
    assert isinstance(sqlite_source, SQLQuerySource) and sqlite_source.dialect == "sqlite"
    # SQLite keeps no row statistics: the listing counts nothing (the checks count theirs)
    assert [(d.name, d.row_count) for d in sqlite_source.catalog()] == [("orders", None)]
    assert sqlite_source.query("SELECT sum(amount) FROM orders").rows == [(67.5,)]
    refused = [
        "INSERT INTO orders VALUES (99, 0)",
        "SELECT 1; DELETE FROM orders",
        "DROP TABLE orders",
        "ATTACH 'x.db' AS x",
        "PRAGMA journal_mode = delete",
    ]
    for sql in refused:
        with pytest.raises(QueryError):
            sqlite_source._execute(sql, max_rows=5, timeout_s=5)
    assert sqlite_source.query("SELECT count(*) FROM orders").rows == [(10,)]
    slow = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        sqlite_source.query(slow, timeout_s=0.3)
    assert time.monotonic() - started < 3


def test_sqlite_authorizer_refuses_extension_loading(sqlite_source: Source) -> None:
    with pytest.raises(QueryFailed, match="not authorized"):
        sqlite_source._execute("SELECT load_extension('x')", max_rows=1, timeout_s=5)


# More configurations.


@pytest.mark.slow
def test_duckdb_database_plus_files(tmp_path: Path, duck_path: Path) -> None:
    parquet = tmp_path / "p.parquet"
    with duckdb.connect() as conn:
        conn.execute(f"COPY (SELECT 1 AS x UNION ALL SELECT 2) TO '{parquet}' (FORMAT parquet)")
    config = DuckDBSource(type="duckdb", database=str(duck_path), tables={"p": str(parquet)})
    with open_source("mixed", config, Settings(cache_dir=str(tmp_path / "cache"))) as source:
        assert [d.name for d in source.catalog()] == ["customers", "orders", "p"]
        assert source.query("SELECT sum(x) FROM p").rows == [(3,)]
        assert source.query("SELECT count(*) FROM orders").rows == [(6,)]
    clash = DuckDBSource(type="duckdb", database=str(duck_path), tables={"orders": str(parquet)})
    with pytest.raises(SourceError, match="both in"):
        open_source("clash", clash, Settings(cache_dir=str(tmp_path / "cache")))
    (tmp_path / "t.xlsx").write_text("x")
    odd = DuckDBSource(type="duckdb", tables={"t": str(tmp_path / "t.xlsx")})
    with pytest.raises(SourceError, match="not a CSV, Parquet or JSON file"):
        open_source("odd", odd, Settings(cache_dir=str(tmp_path / "cache")))
    assert [p.suffix for p in (tmp_path / "cache" / "sources").iterdir()] == [".duckdb"]


def test_postgres_schema_sets_the_search_path(shop_pg_url: str) -> None:
    config = SQLAlchemySource.model_validate(
        {"type": "sqlalchemy", "url": shop_pg_url, "schema": "other"}
    )
    with open_source("other", config, Settings()) as source:
        assert [(d.name, [c.name for c in d.columns]) for d in source.catalog()] == [
            ("orders", ["a"])
        ]
        assert source.query("SELECT * FROM orders").columns == [
            "a"
        ]  # other.orders, not public.orders
        assert source.query("SELECT * FROM other.orders").columns == ["a"]
        with pytest.raises(QueryRejected) as caught:
            source.query("SELECT * FROM public.orders")
        assert caught.value.rule == "schema"


def test_postgres_listed_table_must_exist(shop_pg_url: str) -> None:
    config = SQLAlchemySource(type="sqlalchemy", url=shop_pg_url, tables=["orders", "nope"])
    with (
        open_source("pg", config, Settings()) as source,
        pytest.raises(SourceError, match="no table nope"),
    ):
        source.catalog()


def test_invalid_url(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not a valid SQLAlchemy URL"):
        open_source("x", SQLAlchemySource(type="sqlalchemy", url="::nonsense"), Settings())


def test_fingerprint_canonical_forms() -> None:
    row = (
        None,
        b"\x01",
        [1, (2, "a")],
        {"k": D("1.5")},
        dt.timedelta(seconds=5),
        dt.datetime(2024, 1, 1, 12),
        uuid.UUID(int=1),
        frozenset({1}),
        True,
        1.5,
    )

    def fingerprint(rows: list[tuple[Any, ...]]) -> str:
        batches = [rows]

        def fetch(size: int) -> list[tuple[Any, ...]]:
            return batches.pop() if batches else []

        started = time.monotonic()
        result = collect(
            fetch, sql="q", columns=["c"], max_rows=5, scan_rows=5, started=started, timeout_s=5
        )
        return result.fingerprint

    assert fingerprint([row]) == fingerprint([row])
    assert fingerprint([row]) != fingerprint([(*row[:-1], 1.25)])
    assert fingerprint([("a", None)]) != fingerprint([("a", "\\N")])  # NULL is not the text \N
    with pytest.raises(QueryTimeout):
        endless = lambda size: [(1,)]  # noqa: E731
        collect(
            endless, sql="q", columns=["c"], max_rows=1, scan_rows=10**9, started=-10.0, timeout_s=1
        )


def test_duckdb_configuration_is_locked(duck_path: Path) -> None:
    # The connection every query process opens, below the statement check: DuckDB itself refuses.
    conn = open_connection(str(duck_path), QueryLimits.of(Limits()))
    try:
        cursor = conn.cursor()
        for setting in ("enable_external_access = true", "lock_configuration = false"):
            with pytest.raises(duckdb.InvalidInputException, match="locked"):
                cursor.execute(f"SET {setting}")
    finally:
        conn.close()
    with DuckDBQuerySource("shop", duck_path, Limits()) as source:
        time_zone = source._execute("SELECT current_setting('TimeZone')", max_rows=1, timeout_s=5)
        locked = source._execute(
            "SELECT current_setting('lock_configuration'),"
            " current_setting('enable_external_access')",
            max_rows=1,
            timeout_s=5,
        )
        assert time_zone.rows == [("UTC",)]
        assert locked.rows == [(True, False)]


# Cells too large to fetch (DuckDB): cut in SQL before they reach Python.

WRAPPED_QUERIES = [
    ORDERS,
    "SELECT status, list(id ORDER BY id) AS ids, list(status) AS s FROM orders GROUP BY status"
    " ORDER BY status",
    "SELECT id, id, {'a': status, 'b': [id]} AS st, MAP {'k': status} AS m FROM orders"
    " ORDER BY id DESC LIMIT 4",
    "SELECT NULL AS n, NULL::VARCHAR AS v, 'ab'::BLOB AS b, '{\"a\": 1}'::JSON AS j,"
    " '101'::BIT AS bit, [1, 2]::INTEGER[2] AS arr",
    "VALUES ('a', 1), ('b', 2)",
    "SELECT 'x' AS a UNION ALL SELECT 'y' ORDER BY 1 DESC",
    "WITH t AS (SELECT name FROM customers) SELECT * FROM t ORDER BY name DESC",
    "SELECT repeat('ab', 4000) AS long_text, range(600) AS r",
]


@pytest.mark.parametrize("sql", WRAPPED_QUERIES)
def test_cells_within_the_fetch_limit_are_unchanged(
    sources: dict[str, Source], sql: str, duck_path: Path
) -> None:
    source = sources["duckdb"]
    assert isinstance(source, DuckDBQuerySource)
    result = source.query(sql)
    conn = duckdb.connect(str(duck_path), read_only=True)  # the query as it is, without the wrapper
    try:
        cur = conn.execute(sql)
        expected = [tuple(r) for r in cur.fetchall()]
        names = [d[0] for d in cur.description or []]
    finally:
        conn.close()
    assert result.rows == expected
    assert result.columns == names


def test_oversized_cells_arrive_as_their_head_size_and_hash(duck_path: Path) -> None:
    limits = Limits(max_cell_chars=20)
    with DuckDBQuerySource("shop", duck_path, limits) as source:
        big = source.query("SELECT 'ab' || repeat('x', 20000) AS t, 1 AS one, range(5000) AS r")
        other = source.query("SELECT 'ab' || repeat('y', 20000) AS t, 1 AS one, range(5000) AS r")
        again = source.query("SELECT 'ab' || repeat('x', 20000) AS t, 1 AS one, range(5000) AS r")
        blob = source.query("SELECT repeat('x', 30000)::BLOB AS b, {'s': repeat('x', 30000)} AS s")
    text, one, numbers = big.rows[0]
    assert isinstance(text, Oversized) and isinstance(numbers, Oversized)
    assert (text.type, text.size, text.head) == ("VARCHAR", 20002, "ab" + "x" * 18)
    assert numbers.type == "BIGINT[]" and numbers.head == list(range(20))
    assert one == 1
    rows, _ = big.jsonable(max_cell_chars=20, max_result_chars=1000)
    assert rows == [["ab" + "x" * 17 + "…", 1, "[0, 1, 2, 3, 4, 5, …"]]
    assert big.fingerprint == again.fingerprint != other.fingerprint
    b, s = blob.rows[0]
    assert (b.type, b.size, b.head) == ("BLOB", 30000, None)
    assert s.head is None and s.size > 30000
    assert blob.jsonable(max_cell_chars=100, max_result_chars=1000)[0] == [
        ["<30000 bytes>", "<STRUCT(s VARCHAR) value of about 30,007 characters, not fetched>"]
    ]
    outcome = evaluate(parse_expectation("== 1"), ["t"], [(text,)], 1)
    assert outcome.passed is None and outcome.error and "not a number" in outcome.error


def test_an_oversized_cell_is_never_held_whole(duck_path: Path) -> None:
    import tracemalloc

    with DuckDBQuerySource("shop", duck_path, Limits()) as source:
        tracemalloc.start()
        try:
            result = source.query("SELECT repeat('x', 30000000) AS big, status FROM orders")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 5_000_000
    assert result.row_count == 6 and all(isinstance(r[0], Oversized) for r in result.rows)


@pytest.mark.parametrize(
    ("template", "error"),
    [
        ("SELECT pg_advisory_lock({key})", None),
        ("SELECT pg_advisory_lock({key}), 1 / (random() * 0)::int", QueryFailed),
        ("SELECT pg_advisory_lock({key}), pg_sleep(10)", QueryTimeout),
        ("SELECT pg_advisory_lock_shared({key}), pg_try_advisory_lock({key} + 1)", None),
    ],
    ids=["ok", "failed", "timed-out", "shared"],
)
def test_postgres_session_locks_are_released_whatever_happened(
    sources: dict[str, Source], shop_pg_url: str, template: str, error: type[Exception] | None
) -> None:
    key = uuid.uuid4().int % 1_000_000_000 + 1
    source = sources["postgres"]
    sql = template.format(key=key)
    if error is None:
        source._execute(sql, max_rows=1, timeout_s=5)
    else:
        with pytest.raises(error):
            source._execute(sql, max_rows=1, timeout_s=0.5)
    with psycopg.connect(shop_pg_url.replace("+psycopg", ""), autocommit=True) as admin:
        held = admin.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid IN (%s, %s)",
            [key, key + 1],
        ).fetchone()
    assert held == (0,)
    assert source.query("SELECT 1 AS ok").rows == [(1,)]  # the pool still works


def test_fingerprint_ignores_row_order_but_not_content(sources: dict[str, Source]) -> None:
    duck = sources["duckdb"]
    asc = duck.query("SELECT id FROM orders ORDER BY id").fingerprint
    desc = duck.query("SELECT id FROM orders ORDER BY id DESC").fingerprint
    fewer = duck.query("SELECT id FROM orders WHERE id > 1 ORDER BY id").fingerprint
    twice = duck.query("SELECT id FROM orders UNION ALL SELECT id FROM orders").fingerprint
    assert asc == desc  # ties under ORDER BY must not look like changed data
    assert len({asc, fewer, twice}) == 3
