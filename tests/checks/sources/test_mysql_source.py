"""The MySQL/MariaDB source on a real private MariaDB server (``tests/engine_fixtures/mariadb.py``).

Read-only sessions, the time limit, UTC, the reset before reuse, the version and the
grants that write, each against the engine itself; the statements a MySQL server would
be sent, read from a DB-API stand-in that records them (no MySQL server runs here).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest
import sqlalchemy as sa

from checks.errors import QueryFailed, QueryTimeout
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import SQLQuerySource
from checks.sources.recipes.mysql import MySQLRecipe
from tests.engine_fixtures.mariadb import MariaDBServer

pytestmark = pytest.mark.mariadb

ORDERS = "SELECT order_id FROM orders ORDER BY order_id"


def source(url: str, limits: Limits | None = None) -> SQLQuerySource:
    return SQLQuerySource("shop", SQLAlchemySource(type="sqlalchemy", url=url), limits or Limits())


@pytest.fixture(scope="module")
def reader(shop_mariadb: str) -> Iterator[SQLQuerySource]:
    with source(shop_mariadb) as found:
        yield found


@pytest.fixture(scope="module")
def builder(mariadb_server: MariaDBServer, shop_mariadb: str) -> Iterator[SQLQuerySource]:
    """The shop as the role that may write there: only Lookout's session stops it."""
    with source(mariadb_server.url("builder")) as found:
        yield found


def test_the_version_names_mariadb(reader: SQLQuerySource, mariadb_server: MariaDBServer) -> None:
    numbers = mariadb_server.version.split("-")[0]  # 10.11.19-MariaDB-0+deb12u1
    assert numbers.startswith("10.11.")
    assert reader.engine_version() == f"MariaDB {numbers}"


def test_a_plain_mysql_url_reads_through_pymysql(mariadb_server: MariaDBServer) -> None:
    with source(mariadb_server.url("reader", driver="mysql")) as plain:
        assert plain.engine_version().startswith("MariaDB 10.11.")
        assert plain._execute(ORDERS, max_rows=10, timeout_s=5).rows == [
            (1,),
            (2,),
            (3,),
            (4,),
            (5,),
        ]


def test_a_query_cannot_write_even_as_a_role_that_may(builder: SQLQuerySource) -> None:
    write = "INSERT INTO orders (order_id) VALUES (99)"
    with pytest.raises(QueryFailed) as failed:
        builder._execute(write, max_rows=1, timeout_s=5)
    assert str(failed.value) == "(1792, 'Cannot execute statement in a READ ONLY transaction')"
    # The catalog's connections too: the session itself is read-only.
    with builder._engine.connect() as conn, pytest.raises(sa.exc.OperationalError) as caught:
        conn.execute(sa.text(write))
    assert "Cannot execute statement in a READ ONLY transaction" in str(caught.value)
    assert builder._execute("SELECT count(*) FROM orders", max_rows=1, timeout_s=5).rows == [(5,)]


def test_every_session_is_read_only_in_utc_and_limited(mariadb_server: MariaDBServer) -> None:
    settings = sa.text("SELECT @@tx_read_only, @@time_zone, @@max_statement_time")
    with source(mariadb_server.url("builder"), Limits(query_timeout_s=12)) as fresh:
        with fresh._engine.connect() as conn:  # what the catalog reads on
            assert tuple(conn.execute(settings).one()) == (1, "+00:00", 12.0)
        query = "SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW())"
        assert fresh._execute(query, max_rows=1, timeout_s=2.5).rows == [(0,)]
        with fresh._engine.connect() as conn:  # the same pooled session: its last query's limit
            assert tuple(conn.execute(settings).one()) == (1, "+00:00", 2.5)
    # The server's own zone is not UTC: a session nobody pinned is 5 hours off.
    raw: Any = mariadb_server.connect("builder", "shop")
    with contextlib.closing(raw), raw.cursor() as cur:
        cur.execute(query)
        assert cur.fetchone() == (18000,)


def test_a_timestamp_column_reads_in_utc(reader: SQLQuerySource) -> None:
    result = reader._execute(
        "SELECT CAST(loaded_tz AS CHAR) FROM loads ORDER BY id", max_rows=5, timeout_s=5
    )
    assert result.rows == [("2024-01-09 21:00:00",), ("2024-01-10 01:30:00",), (None,)]


def test_a_query_past_its_limit_is_ended_by_the_server(reader: SQLQuerySource) -> None:
    started = time.monotonic()
    with pytest.raises(QueryTimeout) as timed_out:
        reader._execute(
            "SELECT count(*) FROM tiny AS a CROSS JOIN tiny AS b", max_rows=1, timeout_s=1
        )
    assert str(timed_out.value) == "the query ran past its time limit of 1 s"
    assert time.monotonic() - started < 5
    # the connection is clean and usable again, with its own limit
    assert reader._execute("SELECT count(*) FROM orders", max_rows=1, timeout_s=5).rows == [(5,)]


def test_a_session_holding_a_named_lock_is_not_reused(mariadb_server: MariaDBServer) -> None:
    recipe = MySQLRecipe()
    holder: Any = mariadb_server.connect("reader", "shop")
    other: Any = mariadb_server.connect("reader", "shop")
    with contextlib.closing(holder), contextlib.closing(other):
        with holder.cursor() as cur:
            cur.execute("SELECT GET_LOCK('lookout-test', 1)")
        assert recipe.reset(holder) is False  # it held one: close it
        with other.cursor() as cur:
            cur.execute("SELECT IS_FREE_LOCK('lookout-test')")
            assert cur.fetchone() == (1,)  # released by the reset
        assert recipe.reset(holder) is True  # nothing held now


def test_the_read_only_role_holds_no_write_grant(reader: SQLQuerySource) -> None:
    assert reader.write_warnings() == []


def test_a_role_that_may_write_is_named_with_its_grant(builder: SQLQuerySource) -> None:
    assert builder.write_warnings() == ["role builder@127.0.0.1 holds ALL PRIVILEGES on shop.*"]


def test_grants_through_a_role_a_column_and_the_server_are_each_named(
    mariadb_server: MariaDBServer, shop_mariadb: str
) -> None:
    admin: Any = mariadb_server.connect()
    with contextlib.closing(admin), admin.cursor() as cur:
        for statement in (
            "CREATE ROLE loader",
            "GRANT INSERT ON shop.orders TO loader",
            "CREATE USER 'mixed'@'127.0.0.1'",
            "GRANT SELECT ON shop.* TO 'mixed'@'127.0.0.1'",
            "GRANT UPDATE (email) ON shop.customers TO 'mixed'@'127.0.0.1'",
            "GRANT FILE ON *.* TO 'mixed'@'127.0.0.1'",
            "GRANT loader TO 'mixed'@'127.0.0.1'",
            "SET DEFAULT ROLE loader FOR 'mixed'@'127.0.0.1'",
        ):
            cur.execute(statement)
    with source(mariadb_server.url("mixed")) as mixed:
        assert mixed.write_warnings() == [
            "role mixed@127.0.0.1 holds FILE on *.*",
            "role mixed@127.0.0.1 holds UPDATE on shop.customers",
            "role mixed@127.0.0.1 holds INSERT on shop.orders (through loader)",
        ]


def test_the_catalog_lists_tables_and_views_without_counting_them(reader: SQLQuerySource) -> None:
    # Listing never counts a table; MySQL's recipe reads no statistics yet (a check counts).
    found = {d.name: d.row_count for d in reader.catalog()}
    names = ["Refunds", "contacts", "customers", "empty_t", "ledger", "loads", "nearly_all"]
    assert found == dict.fromkeys([*names, "orders", "pairs", "tiny"])


def test_a_wrong_password_is_a_source_error_without_it(mariadb_server: MariaDBServer) -> None:
    url = f"mariadb+pymysql://reader:s3cret@127.0.0.1:{mariadb_server.port}/shop"
    with pytest.raises(Exception) as failed:
        source(url)
    assert str(failed.value) == (
        f"source shop: cannot connect to mariadb+pymysql://reader:***@127.0.0.1:"
        f"{mariadb_server.port}/shop: (1045, \"Access denied for user 'reader'@'127.0.0.1'"
        ' (using password: YES)")'
    )
    assert "s3cret" not in str(failed.value)


def test_the_driver_errors_the_recipe_reads_as_timeouts() -> None:
    recipe = MySQLRecipe()
    assert recipe.is_timeout(pymysql.err.OperationalError(1969, "max_statement_time exceeded"))
    assert recipe.is_timeout(pymysql.err.OperationalError(3024, "maximum statement time"))
    lost = "Lost connection to MySQL server during query (timed out)"
    assert recipe.is_timeout(pymysql.err.OperationalError(2013, lost))
    assert not recipe.is_timeout(pymysql.err.OperationalError(2013, "Lost connection"))
    assert not recipe.is_timeout(pymysql.err.ProgrammingError(1064, "syntax"))


class RecordingConnection:
    """A DB-API stand-in that records each statement, as a MySQL 8 or MariaDB server is sent."""

    def __init__(self, server_info: str) -> None:
        self.server_info = server_info
        self.sent: list[str] = []

    def get_server_info(self) -> str:
        return self.server_info

    def cursor(self, *_: Any) -> RecordingConnection:
        return self

    def execute(self, sql: str) -> None:
        self.sent.append(sql)

    def select_db(self, name: str) -> None:
        self.sent.append(f"(select database {name})")

    @property
    def description(self) -> list[tuple[str]]:
        return [("n",)]

    def fetchmany(self, size: int = 1) -> list[tuple[int]]:
        return []

    def fetchone(self) -> tuple[int]:
        return (0,)

    def close(self) -> None:
        self.sent.append("(close)")

    def rollback(self) -> None:
        self.sent.append("(rollback)")


@pytest.mark.parametrize(
    ("server", "limit", "query_limit"),
    [
        ("8.0.36", "max_execution_time = 30000", "max_execution_time = 2500"),
        ("5.5.5-10.11.19-MariaDB-0+deb12u1", "max_statement_time = 30", "max_statement_time = 2.5"),
        ("11.4.2-MariaDB", "max_statement_time = 30", "max_statement_time = 2.5"),
    ],
)
def test_the_session_each_engine_is_sent(server: str, limit: str, query_limit: str) -> None:
    recipe, conn = MySQLRecipe(), RecordingConnection(server)
    recipe.on_connect(conn, Limits())
    assert conn.sent == [
        "SET SESSION TRANSACTION READ ONLY",
        f"SET SESSION time_zone = '+00:00', {limit}",
        "(close)",
    ]
    conn.sent.clear()
    result = recipe.run(
        conn, "SELECT 1", 2.5, lambda fetch, columns: columns, limits=Limits(), schema="shop"
    )
    assert result == ["n"]
    assert conn.sent == [
        "(select database shop)",
        f"SET SESSION time_zone = '+00:00', {query_limit}",
        "START TRANSACTION READ ONLY",
        "(close)",
        "SELECT 1",
        "(close)",
        "(rollback)",
    ]


def test_buckets_in_another_zone_are_an_error_not_utc_counts(reader: SQLQuerySource) -> None:
    from tests.checks.declared.shop import run

    check = {
        "name": "daily loads",
        "row_count": {"table": "loads"},
        "over": {"column": "loaded_tz", "bucket": "day", "lookback": "2d"},
        "expect": "> 0",
    }
    results, _ = run(reader, check, timezone="America/New_York")
    assert (results[0].outcome.value, results[0].error) == (
        "error",
        "row_count cannot be written in this source's SQL (mysql): AT TIME ZONE is not"
        " supported by MySQL",
    )
