"""Sources reached through SQLAlchemy: PostgreSQL, SQLite and (best effort) MySQL.

The catalog comes from SQLAlchemy's inspector; queries run on the raw driver
connection so that each backend's read-only guarantees (layer 2 of docs/design.md,
Reading data safely) are applied exactly:

- PostgreSQL (psycopg 3): ``BEGIN READ ONLY`` … ``ROLLBACK`` around every
  query, then ``DISCARD ALL`` before the connection goes back to the pool (a
  session-level advisory lock survives ROLLBACK; a connection that cannot be
  reset is closed), ``statement_timeout`` set locally, ``search_path`` set to the source's
  schema, the time zone set to UTC locally (so ``PGTZ`` or a role's default
  never changes a result), and the query sent as a server-side cursor (``DECLARE … CURSOR FOR``)
  over the extended protocol: one statement per call, SELECT/VALUES only, no
  data-modifying WITH. The process's watchdog (``checks.sources.watchdog``)
  cancels the query at its time limit, and
  past ``Limits.kill_after_s`` shuts the socket (a server that no longer
  answers, even to the cancel). Every connection also starts with
  ``default_transaction_read_only=on``, a connect timeout and TCP keepalives.
- SQLite: the file is opened with ``mode=ro``; during a query an authorizer
  allows only reads, a progress handler enforces the time limit and no value
  may be longer than an eighth of ``Limits.query_memory``
  (``SQLITE_LIMIT_LENGTH``). The ``sqlite3`` driver itself refuses more than
  one statement per call.
- MySQL/MariaDB: ``START TRANSACTION READ ONLY`` … ``ROLLBACK``,
  ``max_execution_time``, ``time_zone = '+00:00'`` and connect/read timeouts;
  untested here (no driver installed), and its cells are not measured before
  fetching.

PostgreSQL and SQLite results are wrapped like DuckDB's (``checks.sources.cells``):
the result's columns are read first (``LIMIT 0``), and a cell larger than
``Limits.fetch_cell_chars`` arrives as an ``Oversized``, measured and cut in SQL,
so a huge value never reaches Python whole. Fetching checks the deadline
between batches. PostgreSQL's query runs in ``checks.sources.postgres_query``,
SQLite's in ``checks.sources.sqlite_query``; this module holds the source.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, make_url

from checks.errors import QueryFailed, QueryTimeout, SourceError, first_line
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources.base import Source, missing_file
from checks.sources.bounded import bound_pings, bounded_connection
from checks.sources.definitions import Definition, Kind
from checks.sources.fingerprint import Fetch, Finish, collect
from checks.sources.postgres_query import postgres_facts, reset_postgres, run_postgres
from checks.sources.result import Column, DataSet, QueryResult
from checks.sources.sqlite_query import run_sqlite
from checks.sql.facts import SourceFacts

DIALECTS = {"postgresql": "postgres", "sqlite": "sqlite", "mysql": "mysql", "mariadb": "mysql"}
"""SQLAlchemy backend name -> sqlglot dialect."""


class SQLQuerySource(Source):
    """A database reached through SQLAlchemy, read-only.

    Args:
        name: the source's name in the settings.
        config: the URL, optional schema and optional table list.
        limits: the query limits.

    Raises:
        SourceError: the URL is invalid, the backend unsupported, the database
            unreachable, or a listed table does not exist. Messages never hold
            the URL's password.

    """

    def __init__(self, name: str, config: SQLAlchemySource, limits: Limits) -> None:
        super().__init__()
        self.name = name
        self.limits = limits
        self._config = config
        try:
            url = make_url(config.url)
        except sa.exc.ArgumentError:
            raise SourceError(f"source {name}: the url is not a valid SQLAlchemy URL") from None
        self._backend = url.get_backend_name()
        if self._backend not in DIALECTS:
            raise SourceError(f"source {name}: unsupported database {self._backend!r}")
        self.dialect = DIALECTS[self._backend]
        self._shown = url.render_as_string(hide_password=True)
        self._password = url.password
        engine_url, options = _engine_args(name, url, limits)
        try:
            self._engine = sa.create_engine(engine_url, **options)
        except (ImportError, sa.exc.NoSuchModuleError) as error:  # mysql:// without mysqlclient
            raise SourceError(
                f"source {name}: cannot use {self._shown}: its database driver is not "
                f"installed ({first_line(error)})"
            ) from None
        bound_pings(self._engine, limits)
        try:
            # The schema the catalog lists and unqualified names resolve in;
            # PostgreSQL queries run with search_path set to it.
            self.schema = config.schema_ or sa.inspect(self._engine).default_schema_name
        except sa.exc.SQLAlchemyError as error:
            self._engine.dispose()
            raise SourceError(
                f"source {name}: cannot connect to {self._shown}: {self._message(error)}"
            ) from None

    def _message(self, error: BaseException) -> str:
        text = first_line(getattr(error, "orig", None) or error)
        return text.replace(self._password, "***") if self._password else text

    def _load_catalog(self) -> list[DataSet]:
        schema = self._config.schema_
        try:
            with bounded_connection(self._engine, self.limits) as conn:
                return self._read_catalog(conn, schema)
        except sa.exc.SQLAlchemyError as error:
            raise SourceError(
                f"source {self.name}: cannot read the catalog: {self._message(error)}"
            ) from None

    def _read_catalog(self, conn: sa.Connection, schema: str | None) -> list[DataSet]:
        inspector = sa.inspect(conn)
        names = inspector.get_table_names(schema=schema) + inspector.get_view_names(schema=schema)
        if self._config.tables is not None:
            by_lower = {n.lower(): n for n in names}
            missing = [
                t for t in self._config.tables if t not in names and t.lower() not in by_lower
            ]
            if missing:
                raise SourceError(
                    f"source {self.name}: no table {', '.join(missing)} in {self._shown}"
                )
            names = [t if t in names else by_lower[t.lower()] for t in self._config.tables]
        found = []
        for table in names:
            columns = _columns(inspector, table, schema)
            count = sa.select(sa.func.count()).select_from(sa.table(table, schema=schema))
            found.append(DataSet(table, columns, int(conn.execute(count).scalar_one())))
        return found

    def _load_facts(self) -> SourceFacts | None:
        if self.dialect != "postgres":
            return None
        try:
            with bounded_connection(self._engine, self.limits) as conn:
                return postgres_facts(conn, self.schema or "public")
        except sa.exc.SQLAlchemyError as error:
            raise SourceError(
                f"source {self.name}: cannot read the catalog: {self._message(error)}"
            ) from None

    def _load_definitions(self) -> list[Definition]:
        statements = _DEFINITIONS.get(self.dialect)
        if statements is None:
            return []
        params = {"schema": self.schema or "public"}
        try:
            with bounded_connection(self._engine, self.limits) as conn:
                return [
                    Definition(kind, str(name), str(sql))
                    for kind, statement in statements
                    for name, sql in conn.execute(sa.text(statement), params)
                    if sql
                ]
        except sa.exc.SQLAlchemyError as error:
            raise SourceError(
                f"source {self.name}: cannot read the catalog: {self._message(error)}"
            ) from None

    def _read_columns(self, name: str) -> tuple[Column, ...]:
        try:
            with bounded_connection(self._engine, self.limits) as conn:
                return _columns(sa.inspect(conn), name, self._config.schema_)
        except sa.exc.SQLAlchemyError as error:
            raise SourceError(
                f"source {self.name}: cannot read the columns of {name}: {self._message(error)}"
            ) from None

    def _execute(self, sql: str, *, max_rows: int, timeout_s: float) -> QueryResult:
        runner = {"postgres": self._run_postgres, "sqlite": self._run_sqlite}.get(
            self.dialect, self._run_mysql
        )
        started = time.monotonic()
        try:
            raw = self._engine.raw_connection()
        except sa.exc.SQLAlchemyError as error:
            raise QueryFailed(f"cannot connect to {self._shown}: {self._message(error)}") from None
        try:

            def finish(fetch: Fetch, columns: list[str]) -> QueryResult:
                return collect(
                    fetch,
                    sql=sql,
                    columns=columns,
                    max_rows=max_rows,
                    scan_rows=self.limits.fingerprint_max_rows,
                    started=started,
                    timeout_s=timeout_s,
                    limits=self.limits,
                )

            return runner(raw.driver_connection, sql, timeout_s, finish)
        except (QueryTimeout, QueryFailed):
            raise
        except Exception as error:
            if _is_timeout(error) or time.monotonic() - started >= timeout_s:
                raise QueryTimeout(
                    f"the query ran past its time limit of {timeout_s:g} s"
                ) from None
            raise QueryFailed(self._message(error)) from None
        finally:
            # Whatever happened (a result, an error, a timeout), the connection
            # goes back to the pool only once it holds no session state; a
            # connection that cannot be reset is closed instead.
            clean = self.dialect != "postgres" or reset_postgres(raw.driver_connection)
            try:
                if clean:
                    raw.close()
                else:
                    raw.invalidate()
            except Exception:
                raw.invalidate()

    def _run_postgres(self, conn: Any, sql: str, timeout_s: float, finish: Finish) -> QueryResult:
        return run_postgres(conn, sql, timeout_s, finish, limits=self.limits, schema=self.schema)

    def _run_sqlite(self, conn: Any, sql: str, timeout_s: float, finish: Finish) -> QueryResult:
        return run_sqlite(conn, sql, timeout_s, finish, limits=self.limits)

    def _run_mysql(
        self,
        conn: Any,
        sql: str,
        timeout_s: float,
        finish: Finish,
    ) -> QueryResult:
        cur = conn.cursor()
        try:
            cur.execute(f"SET SESSION max_execution_time = {max(1, int(timeout_s * 1000))}")
            cur.execute("SET time_zone = '+00:00'")  # results never depend on the zone
            cur.execute("START TRANSACTION READ ONLY")
            cur.execute(sql)
            return finish(cur.fetchmany, [d[0] for d in cur.description or []])
        finally:
            conn.rollback()

    def close(self) -> None:
        """Close every pooled connection."""
        self._engine.dispose()


_DEFINITIONS: dict[str, list[tuple[Kind, str]]] = {
    "postgres": [
        (
            "function",
            "SELECT p.proname, p.prosrc FROM pg_proc p"
            " JOIN pg_namespace n ON n.oid = p.pronamespace"
            " JOIN pg_language l ON l.oid = p.prolang"
            " WHERE n.nspname = :schema AND l.lanname = 'sql'",
        ),
        ("view", "SELECT viewname, definition FROM pg_views WHERE schemaname = :schema"),
    ],
    "sqlite": [("view", "SELECT name, sql FROM sqlite_master WHERE type = 'view'")],
}
"""Per dialect, the statements that read the source schema's own definitions (name, SQL)."""


def _engine_args(name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
    backend = url.get_backend_name()
    if backend == "postgresql":
        if url.drivername == "postgresql":
            url = url.set(drivername="postgresql+psycopg")
        # Server-side defaults for every statement on these connections, catalog
        # queries included; each query also sets its own limit in its transaction.
        timeout_ms = max(1, int(limits.query_timeout_s * 1000))
        # a session left in an open transaction (a worker killed between statements)
        # is ended by the server itself after the same time, holding no snapshot or lock
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
    if backend == "sqlite":
        database = url.database or ""
        if url.query.get("uri") not in ("true", "1"):
            if not database or database == ":memory:" or not Path(database).is_file():
                why = missing_file(Path(database)) if database else "does not exist"
                raise SourceError(f"source {name}: SQLite file {database or '(none)'} {why}")
            database = f"file:{Path(database).resolve()}"
        url = url.set(database=database).update_query_dict({"mode": "ro", "uri": "true"})
        lite: dict[str, Any] = {"check_same_thread": False}
        if "timeout" not in url.query:  # how long to wait on another process's lock on the file
            lite["timeout"] = limits.connect_timeout_s
        return url, {"connect_args": lite}
    # MySQL drivers (PyMySQL, mysqlclient) take these in seconds.
    timeout = max(1, round(limits.kill_after_s(limits.query_timeout_s)))
    mysql = {"connect_timeout": max(1, round(limits.connect_timeout_s)), "read_timeout": timeout}
    return url, {"connect_args": mysql, "pool_pre_ping": True}


def _columns(inspector: Any, table: str, schema: str | None) -> tuple[Column, ...]:
    return tuple(
        Column(c["name"], _type_name(c["type"]), c.get("nullable"))
        for c in inspector.get_columns(table, schema)
    )


def _type_name(type_: Any) -> str:
    try:
        name = str(type_)
    except sa.exc.SQLAlchemyError:
        return type(type_).__name__
    # SQLAlchemy writes PostgreSQL's timestamptz as TIMESTAMP with a flag beside it.
    if getattr(type_, "timezone", False) and name in ("TIMESTAMP", "TIME"):
        return f"{name} WITH TIME ZONE"
    return name


def _is_timeout(error: BaseException) -> bool:
    name = type(error).__name__
    return name == "QueryCanceled" or (name == "OperationalError" and "interrupted" in str(error))
