"""PostgreSQL's read-only recipe, through psycopg 3.

Every connection starts with ``default_transaction_read_only=on``, a server-side
``statement_timeout`` and ``idle_in_transaction_session_timeout`` (a session left in an
open transaction ends by itself), a connect timeout and TCP keepalives; each query runs
in its own ``READ ONLY`` transaction with its own limit and the zone pinned to UTC
(``checks.sources.postgres_query``), and the session is reset (``DISCARD ALL``) before the
connection goes back to the pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from checks.sources.postgres_query import (
    postgres_facts,
    postgres_row_estimates,
    reset_postgres,
    run_postgres,
)
from checks.sources.recipes.base import Recipe

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.engine import URL

    from checks.settings.limits import Limits
    from checks.sources.definitions import Kind
    from checks.sources.fingerprint import Finish
    from checks.sources.result import QueryResult
    from checks.sources.scan import ScanEstimate
    from checks.sql.facts import SourceFacts


WRITE_GRANTS_SQL = """
SELECT p.privilege, n.nspname || '.' || c.relname
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN (VALUES ('INSERT'), ('UPDATE'), ('DELETE'), ('TRUNCATE')) AS p(privilege)
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
  AND has_table_privilege(c.oid, p.privilege)
UNION ALL
SELECT 'CREATE', 'schema ' || n.nspname FROM pg_namespace n
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
  AND has_schema_privilege(n.oid, 'CREATE')
UNION ALL
SELECT 'CREATE', 'database ' || current_database()
WHERE has_database_privilege(current_database(), 'CREATE')
ORDER BY 1, 2
"""
"""Each (privilege, object) the session's role may write with: tables (their owner's and
granted privileges alike, ``has_table_privilege``), schemas and the database it may create
in. PostgreSQL's privileges: https://www.postgresql.org/docs/current/ddl-priv.html."""

SHOWN_OBJECTS = 5
"""Objects named per privilege in a write warning; the rest are counted."""


class PostgresRecipe(Recipe):
    """PostgreSQL (and engines speaking its SQL through psycopg)."""

    label = "PostgreSQL"
    dialect = "postgres"
    read_only = "sessions are read-only (default_transaction_read_only, READ ONLY transactions)"
    definitions: ClassVar[tuple[tuple[Kind, str], ...]] = (
        (
            "function",
            "SELECT p.proname, p.prosrc FROM pg_proc p"
            " JOIN pg_namespace n ON n.oid = p.pronamespace"
            " JOIN pg_language l ON l.oid = p.prolang"
            " WHERE n.nspname = :schema AND l.lanname = 'sql'",
        ),
        ("view", "SELECT viewname, definition FROM pg_views WHERE schemaname = :schema"),
    )

    def engine_args(self, name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
        """Psycopg 3, with the session's read-only settings and limits as libpq options."""
        if url.drivername == "postgresql":
            url = url.set(drivername="postgresql+psycopg")
        # Server-side defaults for every statement on these connections, catalog
        # queries included; each query also sets its own limit in its transaction.
        timeout_ms = max(1, int(limits.query_timeout_s * 1000))
        options = (
            f"-c default_transaction_read_only=on -c statement_timeout={timeout_ms}"
            f" -c idle_in_transaction_session_timeout={timeout_ms}"
        )
        connect = {
            "options": options,
            # libpq's own: a server that accepts and never answers fails the
            # connect; a peer gone silent mid-query is noticed by keepalives.
            "connect_timeout": max(2, round(limits.connect_timeout_s)),
            "keepalives": 1,
            "keepalives_idle": 30,
            "keepalives_interval": 10,
            "keepalives_count": 3,
            "tcp_user_timeout": int(limits.kill_after_s(limits.query_timeout_s) * 1000),
        }
        return url, {
            "connect_args": connect,
            "pool_pre_ping": True,
            "pool_timeout": limits.connect_timeout_s,
        }

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
        """One query in its own READ ONLY transaction (``run_postgres``)."""
        return run_postgres(conn, sql, timeout_s, finish, limits=limits, schema=schema)

    def estimate_scan(
        self, conn: Any, sql: str, timeout_s: float, *, schema: str | None
    ) -> ScanEstimate | None:
        """The plan's scans and the relations' sizes (``checks.sources.postgres_scan``)."""
        from checks.sources.postgres_scan import estimate_postgres

        return estimate_postgres(conn, sql, timeout_s, schema=schema)

    def reset(self, conn: Any) -> bool:
        """``DISCARD ALL`` (``reset_postgres``): an advisory lock survives ROLLBACK."""
        return reset_postgres(conn)

    def facts(self, conn: sa.Connection, schema: str) -> SourceFacts | None:
        """The functions and types ``pg_proc`` and ``pg_type`` mark as safe."""
        return postgres_facts(conn, schema)

    def write_warnings(self, conn: sa.Connection, schema: str) -> list[str]:
        """A superuser role, else each privilege it holds that writes, with what it is on.

        ``role reader holds INSERT on 2 tables: public.orders, public.refunds``; a
        superuser is one sentence (it may do anything). Every schema counts, not only the
        source's: the role is what a leaked session could use.
        """
        import sqlalchemy as sa

        role, superuser = conn.execute(
            sa.text("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")
        ).one()
        if superuser:
            return [
                f"role {role} is a superuser: it may write anything (connect as a role"
                " holding only SELECT)"
            ]
        held: dict[str, list[str]] = {}
        for privilege, target in conn.execute(sa.text(WRITE_GRANTS_SQL)):
            held.setdefault(str(privilege), []).append(str(target))
        return [_warning(str(role), privilege, targets) for privilege, targets in held.items()]

    def row_estimates(self, conn: sa.Connection, schema: str) -> dict[str, int] | None:
        """``pg_class.reltuples``, else ``n_live_tup`` for a table never analysed."""
        return postgres_row_estimates(conn, schema)

    def is_timeout(self, error: BaseException) -> bool:
        """Psycopg's ``QueryCanceled``: the statement timeout or the watchdog's cancel."""
        return type(error).__name__ == "QueryCanceled"


def _warning(role: str, privilege: str, targets: list[str]) -> str:
    """``role r holds INSERT on 2 tables: public.a, public.b`` (at most ``SHOWN_OBJECTS`` named)."""
    tables = [t for t in targets if not t.startswith(("schema ", "database "))]
    shown = ", ".join(targets[:SHOWN_OBJECTS])
    more = f" and {len(targets) - SHOWN_OBJECTS} more" if len(targets) > SHOWN_OBJECTS else ""
    if len(tables) == len(targets):
        noun = "table" if len(targets) == 1 else "tables"
        return f"role {role} holds {privilege} on {len(targets)} {noun}: {shown}{more}"
    return f"role {role} holds {privilege} on {shown}{more}"
