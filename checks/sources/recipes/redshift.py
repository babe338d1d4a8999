"""Amazon Redshift's read-only recipe, through ``redshift_connector`` and ``sqlalchemy-redshift``.

Written from the Amazon Redshift Database Developer Guide ("BEGIN", "SET",
"statement_timeout", "timezone", "query_group", "WLM timeout"). Each query runs as
``BEGIN READ ONLY``; ``SET statement_timeout TO`` the query limit in ms (it counts
planning, the wait in a WLM queue and running; a queue's own WLM timeout, if lower,
still applies); ``SET timezone TO 'UTC'``; ``SET search_path TO`` the source's schema;
``SET query_group TO 'lookout'`` (the label an administrator's WLM configuration can
route Lookout's queries by, to a queue with its own limits and query monitoring
rules); the query; ``ROLLBACK``, which also undoes the settings (back to each new
connection's own, which bound the catalog's reads too: the query limit and UTC,
committed). Redshift has no
session setting that caps a query's cost: WLM's query monitoring rules are the cap
(docs/engines.md). The driver's socket timeout ends a silent server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checks.sources.recipes.base import Recipe

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

    from checks.settings.limits import Limits
    from checks.sources.fingerprint import Finish
    from checks.sources.result import QueryResult

QUERY_GROUP = "lookout"


class RedshiftRecipe(Recipe):
    """Amazon Redshift (provisioned or Serverless)."""

    label = "Amazon Redshift"
    dialect = "redshift"
    extra = "redshift"

    def engine_args(self, name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
        """``redshift_connector`` (AWS's driver), its socket timeout and TCP keepalives."""
        if url.drivername == "redshift":
            url = url.set(drivername="redshift+redshift_connector")
        connect = {
            # seconds; bounds the connect and every read on the socket
            "timeout": max(1, round(limits.kill_after_s(limits.query_timeout_s))),
            "tcp_keepalive": True,
            "application_name": "lookout",
        }
        return url, {"connect_args": connect, "pool_pre_ping": True}

    def on_connect(self, conn: Any, limits: Limits) -> None:
        """Each new connection's own limit and zone, for the catalog's reads too."""
        cur = conn.cursor()
        try:
            cur.execute(f"SET statement_timeout TO {_ms(limits.query_timeout_s)}")
            cur.execute("SET timezone TO 'UTC'")
            conn.commit()  # in the driver's own transaction: rolled back, they would not hold
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
        """One query in a READ ONLY transaction, with its limit, zone, schema and group."""
        conn.rollback()  # no-op when idle
        # The driver opens a read-write transaction of its own before a statement
        # unless autocommit is on; with it on, BEGIN READ ONLY is the transaction.
        conn.autocommit = True
        cur = conn.cursor()
        try:
            cur.execute("BEGIN READ ONLY")
            cur.execute(f"SET statement_timeout TO {_ms(timeout_s)}")
            cur.execute("SET timezone TO 'UTC'")  # results never depend on the zone
            cur.execute(f"SET search_path TO {_ident(schema or 'public')}")
            cur.execute(f"SET query_group TO '{QUERY_GROUP}'")
            cur.execute(sql)
            return finish(cur.fetchmany, [d[0] for d in cur.description or []])
        finally:
            conn.rollback()
            conn.autocommit = False

    def reset(self, conn: Any) -> bool:
        """Roll back what a failed query left; False if that failed."""
        try:
            conn.rollback()
        except Exception:
            return False
        return True

    def is_timeout(self, error: BaseException) -> bool:
        """SQLSTATE 57014: ``statement_timeout`` ended the query."""
        return "57014" in str(error)


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
