"""MySQL's and MariaDB's read-only recipe, through PyMySQL or mysqlclient.

Each query runs as ``SET SESSION max_execution_time`` (MySQL's per-statement limit, in
ms), ``SET time_zone = '+00:00'``, ``START TRANSACTION READ ONLY`` … ``ROLLBACK``; the
driver's connect and read timeouts end a silent server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checks.sources.recipes.base import Recipe

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

    from checks.settings.limits import Limits
    from checks.sources.fingerprint import Finish
    from checks.sources.result import QueryResult


class MySQLRecipe(Recipe):
    """MySQL and MariaDB."""

    label = "MySQL"
    dialect = "mysql"
    extra = "mysql"

    def engine_args(self, name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
        """Connect and read timeouts, which the MySQL drivers take in seconds."""
        timeout = max(1, round(limits.kill_after_s(limits.query_timeout_s)))
        connect = {
            "connect_timeout": max(1, round(limits.connect_timeout_s)),
            "read_timeout": timeout,
        }
        return url, {"connect_args": connect, "pool_pre_ping": True}

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
        """One query in a READ ONLY transaction, with its time limit and UTC."""
        cur = conn.cursor()
        try:
            cur.execute(f"SET SESSION max_execution_time = {max(1, int(timeout_s * 1000))}")
            cur.execute("SET time_zone = '+00:00'")  # results never depend on the zone
            cur.execute("START TRANSACTION READ ONLY")
            cur.execute(sql)
            return finish(cur.fetchmany, [d[0] for d in cur.description or []])
        finally:
            conn.rollback()
