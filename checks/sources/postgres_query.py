"""PostgreSQL queries through psycopg 3: read-only, limited in time, their session left clean.

``run_postgres`` runs one checked query in its own ``READ ONLY`` transaction
(``checks.sources.sql_source`` says what each setting is for);
``reset_postgres`` drops what a query could leave on the session before the
connection goes back to the pool; ``postgres_facts`` reads what the guard may
allow from ``pg_proc`` and ``pg_type``.
"""

from __future__ import annotations

import os
import socket
import uuid
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from checks.errors import QueryFailed
from checks.sources.cells import CellFetch, pg_weight
from checks.sources.fingerprint import Finish
from checks.sources.result import QueryResult
from checks.sources.small_result import is_small
from checks.sources.watchdog import after
from checks.sql.facts import HARMLESS_VOLATILE, SourceFacts

if TYPE_CHECKING:
    from checks.settings.limits import Limits


def run_postgres(
    conn: Any,
    sql: str,
    timeout_s: float,
    finish: Finish,
    *,
    limits: Limits,
    schema: str | None,
) -> QueryResult:
    """Run checked ``sql`` on a psycopg connection, read-only, within ``timeout_s``.

    One ``READ ONLY`` transaction, rolled back: its statement timeout, search
    path (``schema``, default ``public``) and time zone (UTC) set locally, in
    one statement; the result's names and types read first (``LIMIT 0``), then
    the query sent, wrapped when its cells need measuring: as a plain statement
    when its result is provably small (``checks.sources.small_result``: one
    aggregate row or a ``LIMIT``, so PostgreSQL may plan it in parallel), else
    as a server-side cursor; ``finish`` streams the rows. The process's
    watchdog cancels it at ``timeout_s`` and shuts the socket at
    ``limits.kill_after_s(timeout_s)``.

    Raises:
        QueryFailed: the wrapped query has another width than planned.
        psycopg.Error: the server refused, failed or cancelled the query.

    """
    conn.rollback()  # no-op when idle; read_only can only change between transactions
    conn.read_only = True  # psycopg opens the next transaction with BEGIN READ ONLY
    try:
        with (
            after(timeout_s, conn.cancel_safe),
            after(limits.kill_after_s(timeout_s), lambda: shut(conn)),
        ):
            # One round trip for the three settings. Results never depend on the
            # client's or server's zone (PGTZ, the role's default): now(), current_date
            # and timestamptz casts are in UTC, as in DuckDB.
            conn.execute(
                "SELECT set_config('statement_timeout', %s, true),"
                " set_config('search_path', %s, true), set_config('TimeZone', 'UTC', true)",
                [str(max(1, int(timeout_s * 1000))), _pg_ident(schema or "public")],
            )
            with conn.cursor() as probe:  # names and types only: LIMIT 0 runs nothing
                probe.execute(f"SELECT * FROM (\n{sql}\n) AS lookout_q LIMIT 0")
                oids = [d.type_code for d in probe.description or []]
                columns = [d.name for d in probe.description or []]
            cell_fetch = CellFetch(
                [_pg_type_name(conn, oid) for oid in oids],
                [pg_weight(oid) for oid in oids],
                fetch_chars=max(limits.fetch_cell_chars, limits.max_cell_chars),
                head_chars=limits.max_cell_chars,
                digest="md5({x}::text)",
                fence=True,
            )
            # A small result (one aggregate row, a LIMIT) as a plain statement, which
            # PostgreSQL may plan in parallel; any other through a server-side cursor
            # (DECLARE … CURSOR FOR <sql>), read in batches and never planned in parallel.
            small = is_small(sql, "postgres")
            cursor = conn.cursor() if small else conn.cursor(name=f"lookout_{uuid.uuid4().hex}")
            with cursor as cur:
                cur.execute(cell_fetch.wrap(sql) if cell_fetch.needed else sql)
                if cell_fetch.needed and len(cur.description or []) != cell_fetch.width:
                    raise QueryFailed("the query could not be wrapped to limit its cells")
                fetch = cell_fetch.reader(cur.fetchmany) if cell_fetch.needed else cur.fetchmany
                return finish(fetch, columns)
    finally:
        conn.rollback()


def reset_postgres(conn: Any) -> bool:
    """Drop every session-level effect a query could leave; False when that failed.

    ``ROLLBACK`` undoes what is transactional, but not a session-level advisory
    lock (``pg_advisory_lock``, reachable through any SQL the server runs for
    us), a ``WITH HOLD`` cursor, ``LISTEN``, temporary objects or cached plans.
    ``DISCARD ALL`` (run outside a transaction block) releases all of them,
    advisory locks included (it runs ``pg_advisory_unlock_all()``), and resets
    settings to the connection's defaults (its ``-c`` options stay).
    """
    try:
        conn.rollback()
        conn.autocommit = True
        try:
            conn.execute("DISCARD ALL")
        finally:
            conn.autocommit = False
    except Exception:
        return False
    return True


def shut(conn: Any) -> None:
    """Shut a psycopg connection's socket, so a read blocked on a silent server returns."""
    try:
        fd = conn.pgconn.socket
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except Exception:
        return


_PG_FUNCTIONS = sa.text(
    """
    SELECT p.proname,
           bool_and(p.provolatile IN ('i', 's')
                    AND NOT (p.prorettype = ANY (CAST(:catalog AS regtype[])))
                    AND NOT (CAST(p.proargtypes AS oid[]) && CAST(:catalog AS regtype[])::oid[])
                    AND (n.nspname = 'pg_catalog' OR l.lanname = 'sql'))
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         JOIN pg_language l ON l.oid = p.prolang
    WHERE n.nspname IN ('pg_catalog', :schema)
    GROUP BY p.proname
    """
)
_PG_TYPES = sa.text(
    """
    SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname IN ('pg_catalog', :schema) AND t.typrelid = 0
          AND NOT (t.oid = ANY (CAST(:catalog AS regtype[])))
    """
)
_PG_CATALOG_TYPES = (
    "{oid,regclass,regcollation,regconfig,regdictionary,regnamespace,regoper,regoperator,"
    "regproc,regprocedure,regrole,regtype}"
)


def postgres_facts(conn: sa.Connection, schema: str) -> SourceFacts:
    """Read what the guard may allow (``checks.sql.facts``) from ``pg_proc`` and ``pg_type``.

    A function name is allowed when every overload of it in ``pg_catalog`` or
    ``schema`` is ``IMMUTABLE`` or ``STABLE`` and neither takes nor returns an
    ``oid`` or ``reg*`` value, and the source schema's own are written in SQL
    (a procedural one, PL/pgSQL and the like, can build and run SQL from its
    arguments, out of the guard's sight); or when it is in ``HARMLESS_VOLATILE``. Types:
    those of ``pg_catalog`` and ``schema`` that are not a relation's row type
    nor an object identifier.
    """
    params = {"schema": schema, "catalog": _PG_CATALOG_TYPES}
    functions = {
        str(name).lower()
        for name, safe in conn.execute(_PG_FUNCTIONS, params)
        if safe or str(name).lower() in HARMLESS_VOLATILE
    }
    types = {str(name).lower() for (name,) in conn.execute(_PG_TYPES, params)}
    schemas = {
        str(name).lower() for (name,) in conn.execute(sa.text("SELECT nspname FROM pg_namespace"))
    }
    return SourceFacts(frozenset(functions), frozenset(types), frozenset(schemas))


_PG_ROW_ESTIMATES = sa.text(
    """
    SELECT c.relname,
           CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint ELSE s.n_live_tup END
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
    WHERE n.nspname = :schema AND c.relkind IN ('r', 'm', 'f')
    """
)


def postgres_row_estimates(conn: sa.Connection, schema: str) -> dict[str, int]:
    """Each table of ``schema`` with its planner estimate of rows; nothing is scanned.

    ``pg_class.reltuples`` is what VACUUM, ANALYZE and CREATE INDEX last found
    (-1 when never analysed, PostgreSQL 14 and later); such a table gets
    ``pg_stat_user_tables.n_live_tup``, the statistics collector's running
    count of live rows. A view, or a partitioned table's parent, has neither
    and is left out (PostgreSQL docs, ``pg_class`` and The Cumulative Statistics
    System).
    """
    return {
        str(name): int(rows)
        for name, rows in conn.execute(_PG_ROW_ESTIMATES, {"schema": schema})
        if rows is not None
    }


def _pg_type_name(conn: Any, oid: int) -> str:
    info = conn.adapters.types.get(oid)
    return info.name if info is not None else f"type {oid}"


def _pg_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
