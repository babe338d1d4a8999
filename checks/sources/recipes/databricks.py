"""Databricks SQL's read-only recipe, through databricks-sql-connector and databricks-sqlalchemy.

Databricks SQL has no read-only session or transaction. The recipe is the guard
(``checks.sql.engines.spark``: the ``databricks`` dialect), a role that holds only
``USE CATALOG``, ``USE SCHEMA`` and ``SELECT`` (``write_warnings`` names any other
grant it finds), and a session set through the connector's ``session_configuration``
with the configuration parameters Databricks SQL documents (SQL reference,
"Configuration parameters"): ``STATEMENT_TIMEOUT`` (seconds), ``TIMEZONE`` ``UTC`` and
``ANSI_MODE`` ``true``. Each query sets its own ``STATEMENT_TIMEOUT`` first, reads
its result's names and types (``LIMIT 0``), runs wrapped so that no cell above
``fetch_cell_chars`` is fetched whole (``checks.sources.cells``), and is cancelled
by the process watchdog at its limit; the connector's socket timeout ends a silent
server at the limit's kill time.

URL: ``databricks://token:${DATABRICKS_TOKEN}@HOST?http_path=/sql/1.0/warehouses/ID
&catalog=CATALOG&schema=SCHEMA``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from checks.errors import QueryFailed
from checks.sources.cells import CellFetch, spark_weight
from checks.sources.recipes.base import Recipe
from checks.sources.watchdog import after

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.engine import URL

    from checks.settings.limits import Limits
    from checks.sources.fingerprint import Finish
    from checks.sources.result import QueryResult

WRITE_PRIVILEGES = frozenset(
    {"ALL PRIVILEGES", "MODIFY", "CREATE", "CREATE TABLE", "CREATE FUNCTION",
     "CREATE MATERIALIZED VIEW", "CREATE MODEL", "CREATE VOLUME", "WRITE VOLUME", "MANAGE",
     "APPLY TAG", "REFRESH", "OWN", "OWNERSHIP"}
)  # fmt: skip
"""Unity Catalog privileges that let a principal change a schema or its tables."""


def session_configuration(timeout_s: float) -> dict[str, str]:
    """The session parameters every connection opens with (Databricks SQL's own names)."""
    return {
        "STATEMENT_TIMEOUT": str(max(1, math.ceil(timeout_s))),
        "TIMEZONE": "UTC",
        "ANSI_MODE": "true",
    }


class DatabricksRecipe(Recipe):
    """Databricks SQL warehouses (and clusters) reached by the SQL connector."""

    label = "Databricks SQL"
    dialect = "databricks"
    extra = "databricks"

    def engine_args(self, name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
        """The session configuration, and the connector's socket and retry limits."""
        connect = {
            "session_configuration": session_configuration(limits.query_timeout_s),
            # Thrift's socket timeout, in seconds: a silent server ends the read.
            "_socket_timeout": max(1, math.ceil(limits.kill_after_s(limits.query_timeout_s))),
            "_retry_stop_after_attempts_count": 3,
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
        """One query with its own ``STATEMENT_TIMEOUT``, cells measured, cancelled at its limit."""
        cur = conn.cursor()
        try:
            with after(timeout_s, cur.cancel):
                cur.execute(f"SET STATEMENT_TIMEOUT = {max(1, math.ceil(timeout_s))}")
                cur.execute(f"SELECT * FROM (\n{sql}\n) AS lookout_q LIMIT 0")
                description = cur.description or []
                columns = [str(d[0]) for d in description]
                types = [str(d[1]).lower() for d in description]
                cells = CellFetch(
                    types,
                    [spark_weight(t) for t in types],
                    fetch_chars=max(limits.fetch_cell_chars, limits.max_cell_chars),
                    head_chars=limits.max_cell_chars,
                    digest="md5(CAST({x} AS STRING))",
                    quote="`",
                )
                cur.execute(cells.wrap(sql) if cells.needed else sql)
                if cells.needed and len(cur.description or []) != cells.width:
                    raise QueryFailed("the query could not be wrapped to limit its cells")
                fetch = cells.reader(cur.fetchmany) if cells.needed else cur.fetchmany
                return finish(fetch, columns)
        finally:
            cur.close()

    def write_warnings(self, conn: sa.Connection, schema: str) -> list[str]:
        """Each write privilege on the schema held by this user or a group it is in.

        Reads ``SHOW GRANTS ON SCHEMA`` (principal, action, object type, object key);
        a principal counts when it is ``current_user()`` or a group for which
        ``is_account_group_member`` is true.
        """
        user = str(conn.exec_driver_sql("SELECT current_user()").scalar())
        rows = conn.exec_driver_sql(f"SHOW GRANTS ON SCHEMA {_quote(schema)}").fetchall()
        warnings = []
        member: dict[str, bool] = {}
        for principal, action, *_ in rows:
            if str(action).upper() not in WRITE_PRIVILEGES:
                continue
            who = str(principal)
            if who != user:
                if who not in member:
                    found = conn.exec_driver_sql(
                        "SELECT is_account_group_member(:p)", {"p": who}
                    ).scalar()
                    member[who] = bool(found)
                if not member[who]:
                    continue
            via = "" if who == user else f" through group {who}"
            warnings.append(f"{user} holds {str(action).upper()} on schema {schema}{via}")
        return warnings

    def is_timeout(self, error: BaseException) -> bool:
        """The server's statement timeout or the watchdog's cancel."""
        text = str(error).lower()
        return "timed out" in text or "timeout" in text or "cancel" in text


def _quote(name: str) -> str:
    return ".".join("`" + part.replace("`", "``") + "`" for part in name.split("."))
