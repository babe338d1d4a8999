"""MySQL's and MariaDB's read-only recipe, through PyMySQL (or mysqlclient).

Every new connection starts with ``SET SESSION TRANSACTION READ ONLY`` (every later
transaction of the session is read-only), the zone pinned to UTC (``time_zone =
'+00:00'``: ``NOW()``, ``CURRENT_DATE`` and ``TIMESTAMP`` columns are read in UTC, as in
DuckDB) and the engine's own statement time limit, so the catalog's reads are bounded on
the server as the queries are: MySQL's ``max_execution_time`` (milliseconds, SELECT
statements only) or MariaDB's ``max_statement_time`` (seconds); which engine answers is
read from the server's handshake (``MariaDB`` in its version). The driver's connect,
read and write timeouts end a silent server. Each query then runs as its own limit,
``START TRANSACTION READ ONLY`` … ``ROLLBACK``, through an unbuffered cursor (rows
stream in as they are fetched); before the connection goes back to the pool the
transaction is rolled back and any ``GET_LOCK`` lock released (a session that held one
is closed, never reused).

Sources: MySQL 8.0 reference, "SET TRANSACTION Statement", "START TRANSACTION",
"Server System Variables" (``max_execution_time``, ``time_zone``), "Locking Functions"
(``RELEASE_ALL_LOCKS``); MariaDB knowledge base, "Aborting Statements that Exceed a
Certain Time to Execute" (``max_statement_time``), "SET TRANSACTION".
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from checks.sources.mysql_grants import mysql_write_warnings
from checks.sources.recipes.base import Recipe

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.engine import URL

    from checks.settings.limits import Limits
    from checks.sources.fingerprint import Finish
    from checks.sources.result import QueryResult

TIMEOUT_ERRORS = frozenset({1969, 3024})
"""The server ending a statement at its limit: MariaDB's ER_STATEMENT_TIMEOUT (1969, "Query
execution was interrupted (max_statement_time exceeded)") and MySQL's ER_QUERY_TIMEOUT
(3024, "… maximum statement execution time exceeded")."""

LOST_CONNECTION = 2013
"""CR_SERVER_LOST: the driver's read timeout ended a read on a silent server."""


def is_mariadb(conn: Any) -> bool:
    """Whether a DB-API connection's server is MariaDB (its handshake's version says so).

    MariaDB announces itself as ``5.5.5-10.11.19-MariaDB-…`` (or ``11.4.2-MariaDB``).
    """
    return "mariadb" in str(conn.get_server_info()).lower()


def time_limit(conn: Any, timeout_s: float) -> str:
    """The session's statement time limit for ``timeout_s``, in the engine's own variable.

    ``max_statement_time = 2.5`` (MariaDB, seconds, microsecond precision) or
    ``max_execution_time = 2500`` (MySQL, whole milliseconds; 0 would mean no limit).
    """
    if is_mariadb(conn):
        return f"max_statement_time = {max(0.001, round(timeout_s, 3)):g}"
    return f"max_execution_time = {max(1, int(timeout_s * 1000))}"


class MySQLRecipe(Recipe):
    """MySQL and MariaDB."""

    label = "MySQL"
    dialect = "mysql"
    read_only = "sessions are read-only (SET SESSION TRANSACTION READ ONLY, READ ONLY transactions)"
    extra = "mysql"

    def engine_args(self, name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
        """PyMySQL unless the URL names a driver; connect, read and write timeouts (seconds)."""
        if url.drivername in ("mysql", "mariadb"):
            url = url.set(drivername=f"{url.drivername}+pymysql")
        kill_s = max(1, round(limits.kill_after_s(limits.query_timeout_s)))
        connect = {
            "connect_timeout": max(1, round(limits.connect_timeout_s)),
            "read_timeout": kill_s,
            "write_timeout": kill_s,
        }
        return url, {
            "connect_args": connect,
            "pool_pre_ping": True,
            "pool_timeout": limits.connect_timeout_s,
        }

    def on_connect(self, conn: Any, limits: Limits) -> None:
        """A new connection's session: read-only, in UTC, every statement limited in time."""
        cur = conn.cursor()
        try:
            cur.execute("SET SESSION TRANSACTION READ ONLY")
            cur.execute(
                f"SET SESSION time_zone = '+00:00', {time_limit(conn, limits.query_timeout_s)}"
            )
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
        """One query in a READ ONLY transaction, with its own time limit and UTC."""
        if schema:  # unqualified names resolve in the source's schema (a MySQL database)
            conn.select_db(schema)
        setup = conn.cursor()
        try:
            # Set again for each query (a pooled session may hold another query's limit).
            setup.execute(f"SET SESSION time_zone = '+00:00', {time_limit(conn, timeout_s)}")
            setup.execute("START TRANSACTION READ ONLY")
        finally:
            setup.close()
        unbuffered = _unbuffered(conn)
        cur = conn.cursor(unbuffered) if unbuffered else conn.cursor()
        try:
            cur.execute(sql)
            return finish(cur.fetchmany, [d[0] for d in cur.description or []])
        finally:
            cur.close()
            conn.rollback()

    def reset(self, conn: Any) -> bool:
        """Roll back and release every ``GET_LOCK`` lock; False (close it) if one was held.

        ``ROLLBACK`` does not release a named lock: it lives as long as the session
        (MySQL, "Locking Functions"). The guard refuses ``GET_LOCK``; a session that
        holds one anyway ran something it should not have, and is not reused.
        """
        try:
            conn.rollback()
            cur = conn.cursor()
            try:
                cur.execute("SELECT RELEASE_ALL_LOCKS()")
                row = cur.fetchone()
            finally:
                cur.close()
        except Exception:
            return False
        return not (row and row[0])

    def version(self, conn: sa.Connection) -> str:
        """``MariaDB 10.11.19`` or ``MySQL 8.0.36``: the engine and its numbered version."""
        info = conn.dialect.server_version_info or ()
        numbers = ".".join(str(part) for part in info if isinstance(part, int))
        label = "MariaDB" if getattr(conn.dialect, "is_mariadb", False) else "MySQL"
        return f"{label} {numbers}" if numbers else label

    def write_warnings(self, conn: sa.Connection, schema: str) -> list[str]:
        """Each privilege the role holds beyond reading, with where (``mysql_write_warnings``)."""
        return mysql_write_warnings(conn)

    def is_timeout(self, error: BaseException) -> bool:
        """The server's statement limit (1969, 3024), or the driver's read timeout (2013)."""
        args = getattr(error, "args", ())
        code = args[0] if args else None
        if code in TIMEOUT_ERRORS:
            return True
        return code == LOST_CONNECTION and "timed out" in str(error)


def _unbuffered(conn: Any) -> Any:
    """The driver's ``SSCursor`` class (None for another driver): rows read as fetched.

    PyMySQL's and mysqlclient's default cursors read the whole result into memory
    before the first ``fetchmany``; the result's limits could then not bound it.
    """
    package = type(conn).__module__.split(".", 1)[0]
    if package not in ("pymysql", "MySQLdb"):
        return None
    return importlib.import_module(f"{package}.cursors").SSCursor
