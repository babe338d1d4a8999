"""Amazon Redshift's and SQL Server's recipes: what a connection is given and sent.

Neither engine runs here. ``Recorder`` is a DB-API connection that records every
statement, commit, rollback and attribute the recipe sets (our output), and answers
a query with fixed rows; the engine arguments are checked as SQLAlchemy's dialect
turns them into the driver's connect arguments. A missing driver names its extra.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from sqlalchemy.dialects.mssql.pyodbc import MSDialect_pyodbc
from sqlalchemy.engine import make_url
from sqlalchemy_redshift.dialect import RedshiftDialect_redshift_connector

from checks.errors import SourceError
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources.recipes import recipe_for
from checks.sources.recipes.base import Recipe
from checks.sources.sql_source import SQLQuerySource

LIMITS = Limits(query_timeout_s=12.5, connect_timeout_s=3)
SQL = "SELECT COUNT(*) AS rows_in_scope FROM orders AS t"


class Recorder:
    """A DB-API connection recording what it is told; ``timeout`` only when pyodbc-like."""

    def __init__(self, *, fail: Exception | None = None, odbc: bool = False) -> None:
        self.__dict__["log"] = []
        self.__dict__["fail"] = fail
        if odbc:
            self.__dict__["timeout"] = 0

    def __setattr__(self, name: str, value: Any) -> None:
        self.log.append(f"{name}={value!r}")
        self.__dict__[name] = value

    def cursor(self) -> Cursor:
        return Cursor(self)

    def rollback(self) -> None:
        self.log.append("ROLLBACK()")

    def commit(self) -> None:
        self.log.append("COMMIT()")


class Cursor:
    def __init__(self, conn: Recorder) -> None:
        self.conn = conn
        self.description: list[tuple[str]] | None = None

    def execute(self, sql: str) -> None:
        self.conn.log.append(sql)
        if sql == SQL:
            if self.conn.fail is not None:
                raise self.conn.fail
            self.description = [("rows_in_scope",)]

    def fetchmany(self, size: int) -> list[tuple[int]]:
        return [(3,)]

    def close(self) -> None:
        self.conn.log.append("close()")


def collect(fetch: Any, columns: list[str]) -> tuple[list[str], list[Any]]:
    return columns, fetch(10)


def recipe(backend: str, **keys: Any) -> Recipe:
    config = SQLAlchemySource.model_validate({"type": "sqlalchemy", "url": "x://", **keys})
    return recipe_for(backend).with_options("wh", config)


REDSHIFT = [
    "ROLLBACK()",
    "autocommit=True",
    "BEGIN READ ONLY",
    "SET statement_timeout TO 12500",
    "SET timezone TO 'UTC'",
    'SET search_path TO "analytics"',
    "SET query_group TO 'lookout'",
    SQL,
    "ROLLBACK()",
    "autocommit=False",
]


def test_redshift_runs_one_query_in_a_read_only_transaction() -> None:
    conn = Recorder()
    found = recipe("redshift")
    result = found.run(conn, SQL, 12.5, collect, limits=LIMITS, schema="analytics")
    assert result == (["rows_in_scope"], [(3,)])
    assert conn.log == REDSHIFT
    assert found.reset(conn) is True
    assert conn.log[-1] == "ROLLBACK()"


def test_each_new_redshift_connection_is_limited_and_in_utc() -> None:
    conn = Recorder()
    recipe("redshift").on_connect(conn, LIMITS)
    assert conn.log == [
        "SET statement_timeout TO 12500",
        "SET timezone TO 'UTC'",
        "COMMIT()",
        "close()",
    ]


def test_each_new_sql_server_connection_is_limited() -> None:
    conn = Recorder(odbc=True)
    recipe("mssql").on_connect(conn, LIMITS)
    assert conn.log == ["timeout=12", "SET LOCK_TIMEOUT 12500", "COMMIT()", "close()"]


def test_redshift_rolls_back_a_failed_query_and_knows_its_timeout() -> None:
    error = RuntimeError(
        "{'S': 'ERROR', 'C': '57014', 'M': \"Query (150) cancelled on user's request\"}"
    )
    conn = Recorder(fail=error)
    found = recipe("redshift")
    with pytest.raises(RuntimeError):
        found.run(conn, SQL, 12.5, collect, limits=LIMITS, schema="analytics")
    assert conn.log == REDSHIFT
    assert found.is_timeout(error)
    assert not found.is_timeout(RuntimeError("{'C': '42P01', 'M': 'relation does not exist'}"))


def test_redshift_connects_through_redshift_connector_with_its_socket_timeout() -> None:
    url, options = recipe("redshift").engine_args(
        "wh", make_url("redshift://reader:pw@rs.example:5439/dev"), LIMITS
    )
    assert url.drivername == "redshift+redshift_connector"
    assert options == {
        "connect_args": {"timeout": 16, "tcp_keepalive": True, "application_name": "lookout"},
        "pool_pre_ping": True,
    }
    # The connect arguments sqlalchemy-redshift's dialect builds from the URL.
    args, kwargs = RedshiftDialect_redshift_connector().create_connect_args(url)
    assert (args, {k: kwargs[k] for k in ("host", "port", "database", "user")}) == (
        [],
        {"host": "rs.example", "port": 5439, "database": "dev", "user": "reader"},
    )


def test_sql_server_sets_its_lock_timeout_isolation_and_cost_cap_then_rolls_back() -> None:
    conn = Recorder(odbc=True)
    found = recipe("mssql", cost_cap=300)
    result = found.run(conn, SQL, 12.5, collect, limits=LIMITS, schema="dbo")
    assert result == (["rows_in_scope"], [(3,)])
    assert conn.log == [
        "timeout=12",  # pyodbc's query timeout, whole seconds
        "SET LOCK_TIMEOUT 12500",
        "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
        "SET QUERY_GOVERNOR_COST_LIMIT 300",
        SQL,
        "ROLLBACK()",
    ]


def test_sql_server_without_a_cost_cap_leaves_the_servers_governor_alone() -> None:
    conn = Recorder()  # pymssql: its query timeout is set at connect
    recipe("mssql").run(conn, SQL, 12.5, collect, limits=LIMITS, schema="dbo")
    assert conn.log == [
        "SET LOCK_TIMEOUT 12500",
        "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
        SQL,
        "ROLLBACK()",
    ]


def test_sql_server_through_pyodbc_asks_for_a_read_only_replica() -> None:
    given = make_url(
        "mssql+pyodbc://reader:pw@sql.example:1433/shop?driver=ODBC+Driver+18+for+SQL+Server"
    )
    url, options = recipe("mssql").engine_args("wh", given, LIMITS)
    assert options == {"connect_args": {"timeout": 3}, "pool_pre_ping": True}
    # The ODBC connection string pyodbc's dialect builds from the URL (no driver needed).
    args, _ = MSDialect_pyodbc().create_connect_args(url)
    assert list(args) == [
        "DRIVER={ODBC Driver 18 for SQL Server};Server=sql.example,1433;Database=shop;"
        "UID=reader;PWD=pw;ApplicationIntent=ReadOnly"
    ]
    own = make_url("mssql+pyodbc://r@sql.example/shop?driver=X&applicationintent=ReadWrite")
    assert recipe("mssql").engine_args("wh", own, LIMITS)[0] == own  # the URL's own is kept


def test_sql_server_through_pymssql_sets_the_query_timeout_at_connect() -> None:
    url = make_url("mssql+pymssql://reader:pw@sql.example:1433/shop")
    assert recipe("mssql").engine_args("wh", url, LIMITS) == (
        url,
        {"connect_args": {"login_timeout": 3, "timeout": 12}, "pool_pre_ping": True},
    )


@pytest.mark.parametrize("cap", [0, -5, "300 units", 2.5])
def test_a_sql_server_cost_cap_must_be_a_whole_number_above_zero(cap: Any) -> None:
    if isinstance(cap, float):
        with pytest.raises(ValueError, match="cost_cap"):  # the settings refuse it first
            recipe("mssql", cost_cap=cap)
        return
    with pytest.raises(SourceError) as raised:
        recipe("mssql", cost_cap=cap)
    assert str(raised.value) == (
        f"source wh: cost_cap {cap!r} is not a SQL Server query governor cost: a whole"
        " number above 0, the highest estimated cost a query may have"
    )


def test_an_engine_without_a_cost_cap_refuses_one() -> None:
    with pytest.raises(SourceError) as raised:
        recipe("redshift", cost_cap="10GB")
    assert str(raised.value) == (
        "source wh: cost_cap is not supported for Amazon Redshift"
        " (docs/engines.md lists the engines with a cost cap)"
    )


def test_sql_server_timeouts() -> None:
    found = recipe("mssql")
    assert found.is_timeout(RuntimeError("('HYT00', '[HYT00] Query timeout expired (0)')"))
    assert not found.is_timeout(RuntimeError("(1222, b'Lock request time out period exceeded.')"))


@pytest.mark.parametrize(
    ("module", "url", "error", "extra"),
    [
        (
            "trino",
            "trino://reader@127.0.0.1:1/hive/sales",
            "No module named 'trino.sqlalchemy'; 'trino' is not a package",
            "trino",
        ),
        (
            "redshift_connector",
            "redshift://reader@127.0.0.1:1/dev",
            "No module named redshift_connector. Please install redshift_connector to use this"
            " sqlalchemy dialect.",
            "redshift",
        ),
        (
            "sqlalchemy_redshift",
            "redshift://reader@127.0.0.1:1/dev",
            "No module named 'sqlalchemy_redshift.dialect'; 'sqlalchemy_redshift' is not a package",
            "redshift",
        ),
        (
            "pyodbc",
            "mssql+pyodbc://reader@127.0.0.1:1/shop",
            "import of pyodbc halted; None in sys.modules",
            "sqlserver",
        ),
        (
            "pymssql",
            "mssql+pymssql://reader@127.0.0.1:1/shop",
            "import of pymssql halted; None in sys.modules",
            "sqlserver",
        ),
    ],
)
def test_a_missing_driver_names_its_extra(
    module: str, url: str, error: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # as if the package were not installed
    config = SQLAlchemySource.model_validate({"type": "sqlalchemy", "url": url})
    with pytest.raises(SourceError) as raised:
        SQLQuerySource("wh", config, LIMITS)
    assert str(raised.value) == (
        f"source wh: cannot use {url}: its database driver is not installed ({error});"
        f" pip install 'lookout[{extra}]'"
    )
