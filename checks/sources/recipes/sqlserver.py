"""SQL Server's read-only recipe, through Microsoft's ODBC driver (pyodbc) or pymssql.

Written from Microsoft's Transact-SQL reference ("SET LOCK_TIMEOUT", "SET
QUERY_GOVERNOR_COST_LIMIT", "SET TRANSACTION ISOLATION LEVEL") and the ODBC driver's
connection keywords (``ApplicationIntent``). Each query runs as ``SET LOCK_TIMEOUT``
the query limit in ms (a read waits on another session's lock that long, then
fails, error 1222); ``SET TRANSACTION ISOLATION LEVEL READ COMMITTED`` (committed
rows only; row versions instead of shared locks where the database has
``READ_COMMITTED_SNAPSHOT`` on); with ``cost_cap``, ``SET QUERY_GOVERNOR_COST_LIMIT``
(SQL Server refuses to start a query whose estimated cost is higher, error 8649,
naming the estimate and the cap: the cost cap, before anything runs); the query;
``ROLLBACK`` of the driver's transaction. The query limit itself is the driver's:
pyodbc's ``Connection.timeout`` per query, pymssql's ``timeout`` at connect. Each new
connection starts with the query limit's timeouts, so the catalog's reads are
bounded too.

Read-only: SQL Server has no read-only transaction; the guard lets only one SELECT
through, and with pyodbc the connection says ``ApplicationIntent=ReadOnly``, which an
availability group (or Azure SQL's read scale-out) routes to a read-only replica. It
has no session time zone either: the kinds never read the server's clock, and the
lint flags a query that does (``GETDATE()`` is the server's local time).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from checks.errors import SourceError
from checks.sources.recipes.base import Recipe

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

    from checks.settings.limits import Limits
    from checks.settings.sources import SQLAlchemySource
    from checks.sources.fingerprint import Finish
    from checks.sources.result import QueryResult


class SQLServerRecipe(Recipe):
    """SQL Server and Azure SQL."""

    label = "SQL Server"
    dialect = "tsql"
    extra = "sqlserver"

    cost_limit: int | None = None
    """``QUERY_GOVERNOR_COST_LIMIT`` from ``cost_cap``, or None (the server's own)."""

    def with_options(self, name: str, config: SQLAlchemySource) -> SQLServerRecipe:
        """This source's query governor cost limit (a whole number above 0).

        Raises:
            SourceError: ``cost_cap`` is not a whole number above 0.

        """
        cap = config.cost_cap
        if cap is None:
            return self
        if isinstance(cap, str) and cap.strip().isdigit():
            cap = int(cap)
        if not isinstance(cap, int) or cap <= 0:
            raise SourceError(
                f"source {name}: cost_cap {cap!r} is not a SQL Server query governor cost:"
                " a whole number above 0, the highest estimated cost a query may have"
            )
        recipe = copy.copy(self)
        recipe.cost_limit = cap
        return recipe

    def engine_args(self, name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
        """The login timeout; pyodbc's ``ApplicationIntent=ReadOnly``, pymssql's query timeout."""
        login = max(1, round(limits.connect_timeout_s))
        connect: dict[str, Any]
        if url.get_driver_name() == "pymssql":
            connect = {"login_timeout": login, "timeout": _seconds(limits.query_timeout_s)}
        else:  # pyodbc, SQLAlchemy's default: keys it does not know go to the ODBC string
            if not any(key.lower() == "applicationintent" for key in url.query):
                url = url.update_query_dict({"ApplicationIntent": "ReadOnly"})
            connect = {"timeout": login}  # pyodbc.connect(timeout=) is the login's
        return url, {"connect_args": connect, "pool_pre_ping": True}

    def on_connect(self, conn: Any, limits: Limits) -> None:
        """Each new connection's query timeout and lock timeout, for the catalog's reads too."""
        if hasattr(conn, "timeout"):  # pyodbc
            conn.timeout = _seconds(limits.query_timeout_s)
        cur = conn.cursor()
        try:
            cur.execute(f"SET LOCK_TIMEOUT {_ms(limits.query_timeout_s)}")
            conn.commit()
        finally:
            cur.close()

    def run(
        self,
        conn: Any,
        sql: str,
        timeout_s: float,
        finish: Finish,
        *,
        limits: Limits,
        schema: str | None,
    ) -> QueryResult:
        """One query with its lock timeout, isolation level and cost cap, rolled back."""
        if hasattr(conn, "timeout"):  # pyodbc: SQL_ATTR_QUERY_TIMEOUT of each statement
            conn.timeout = _seconds(timeout_s)
        cur = conn.cursor()
        try:
            cur.execute(f"SET LOCK_TIMEOUT {_ms(timeout_s)}")
            cur.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
            if self.cost_limit is not None:
                cur.execute(f"SET QUERY_GOVERNOR_COST_LIMIT {self.cost_limit}")
            cur.execute(sql)
            return finish(cur.fetchmany, [d[0] for d in cur.description or []])
        finally:
            conn.rollback()

    def reset(self, conn: Any) -> bool:
        """Roll back what a failed query left; False if that failed."""
        try:
            conn.rollback()
        except Exception:
            return False
        return True

    def is_timeout(self, error: BaseException) -> bool:
        """ODBC's HYT00 (query timeout expired), or pymssql's timeout (DB-Lib 20003)."""
        text = str(error)
        return "HYT00" in text or "20003" in text


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def _seconds(timeout_s: float) -> int:
    """Whole seconds, at least 1: both drivers take an int, and 0 means no limit."""
    return max(1, round(timeout_s))
