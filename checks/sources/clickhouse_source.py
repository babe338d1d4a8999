"""ClickHouse sources: a server through clickhouse-connect, or chdb on local data.

Both run every query through clickhouse-connect with the settings of
``checks.sources.clickhouse_query`` (``readonly``, the time limit, the cost cap, the
result's row cap, the zone pinned to UTC, SQL's outer-join NULLs): a server's client
lives in this process and speaks HTTP (``url:``); chdb lives in a child process of the
source's own (``checks.sources.chdb_process``: ``path:`` or ``tables:``). The catalog is
read from ``system.tables`` and ``system.columns``, each statement bounded in time, row
counts from ``system.tables.total_rows`` (a view's counted in one bounded statement).
The guard reads the SQL in sqlglot's ``clickhouse`` dialect and refuses ClickHouse's own
readers (``checks.sql.engines.clickhouse``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from checks.errors import QueryFailed, QueryTimeout, SourceError
from checks.settings.limits import Limits
from checks.settings.sources import ClickHouseSource, TableFile
from checks.sources.base import Source
from checks.sources.chdb_process import ChdbProcess, ChdbSpec, ChildFailed, TableLoad, format_of
from checks.sources.clickhouse_query import (
    CLIENT_SETTINGS,
    TIMEOUT_CODE,
    Caps,
    catalog_statements,
    count_statement,
    error_code,
    error_message,
    query_settings,
    read_rows,
    views_statement,
)
from checks.sources.clickhouse_sql import Schema, sql_results
from checks.sources.definitions import Definition
from checks.sources.fingerprint import collect
from checks.sources.result import Column, DataSet, QueryResult

EXTRA = "clickhouse"
"""``pip install 'lookout[clickhouse]'`` brings clickhouse-connect and chdb."""

CATALOG_MAX_ROWS = 1_000_000
"""Rows a catalog statement may return (tables, columns): more is refused."""

ClientFactory = Callable[[dict[str, Any]], Any]
"""Makes a clickhouse-connect client from ``get_client``'s keyword arguments."""


def server_client_args(url: str, limits: Limits) -> dict[str, Any]:
    """``clickhouse_connect.get_client``'s keyword arguments for a ``clickhouse://`` URL.

    ``clickhouse://user:password@host:8123/db`` (HTTP; ``clickhouses://`` for HTTPS,
    port 8443 by default). The connect timeout is ``Limits.connect_timeout_s``; the
    socket's read timeout ``kill_after_s`` of the query limit, so a server gone silent
    mid-query fails the query. No session: queries may run concurrently; no row limit
    added by the client (the settings cap the result); timestamps with a zone arrive
    zone-aware (``tz_mode='schema'``).

    Raises:
        SourceError: another scheme, or no host.

    """
    parts = urlsplit(url)
    if parts.scheme not in ("clickhouse", "clickhouses") or not parts.hostname:
        raise SourceError(
            "the url is not a ClickHouse URL (clickhouse://user:password@host:8123/database)"
        )
    secure = parts.scheme == "clickhouses"
    database = unquote(parts.path.lstrip("/")) or None
    return {
        "host": parts.hostname,
        "port": parts.port or (8443 if secure else 8123),
        "username": unquote(parts.username) if parts.username else "default",
        "password": unquote(parts.password) if parts.password else "",
        "database": database,
        "secure": secure,
        "connect_timeout": limits.connect_timeout_s,
        "send_receive_timeout": limits.kill_after_s(limits.query_timeout_s),
        "query_limit": 0,
        "autogenerate_session_id": False,
        "tz_mode": "schema",
        "settings": dict(CLIENT_SETTINGS),
    }


def get_client(args: dict[str, Any]) -> Any:
    """clickhouse-connect's own ``get_client``, naming the extra when it is not installed.

    Raises:
        SourceError: clickhouse-connect is not installed.

    """
    try:
        import clickhouse_connect
    except ImportError:
        raise SourceError(
            f"clickhouse-connect is not installed; pip install 'lookout[{EXTRA}]'"
        ) from None
    return clickhouse_connect.get_client(**args)


def chdb_spec(name: str, config: ClickHouseSource) -> ChdbSpec:
    """What the source's chdb child opens: its data folder, or its files loaded into memory.

    Raises:
        SourceError: chdb is not installed, the folder or a file is missing, or a file is
            neither Parquet nor CSV.

    """
    import importlib.util

    try:
        installed = importlib.util.find_spec("chdb") is not None
    except ValueError:  # a module entry without a spec: not importable either
        installed = False
    if not installed:
        raise SourceError(f"source {name}: chdb is not installed; pip install 'lookout[{EXTRA}]'")
    if config.path:
        folder = Path(config.path)
        if not folder.is_dir():
            why = "is a file, not a chdb data folder" if folder.exists() else "does not exist"
            raise SourceError(f"source {name}: path {config.path} {why}")
        return ChdbSpec(str(folder.resolve()))
    from checks.sources.lake_files import table_files

    loads = []
    for table, spec in config.tables.items():
        files = table_files(table, spec)
        if len(files) != 1:
            raise SourceError(f"table {table}: chdb reads one file per table, not {len(files)}")
        path = files[0]
        found = format_of(path.name)
        if found is None:
            raise SourceError(f"table {table}: {path.name} is not a CSV or Parquet file")
        nulls = [n for n in (spec.null_strings if isinstance(spec, TableFile) else []) if n]
        if len(nulls) > 1:
            raise SourceError(
                f"table {table}: chdb reads one NULL text per CSV file, not {len(nulls)}"
                " (null_strings)"
            )
        loads.append(TableLoad(table, str(path.resolve()), found, nulls[0] if nulls else "\\N"))
    return ChdbSpec(None, tuple(loads))


class ClickHouseQuerySource(Source):
    """A ClickHouse server (``url``) or chdb (``path``, ``tables``), read-only.

    Args:
        name: the source's name in the settings.
        config: the source's settings.
        limits: the query limits.
        client_factory: makes the server's clickhouse-connect client from
            ``server_client_args`` (default: ``get_client``).

    Raises:
        SourceError: the driver is missing, the server unreachable, the user's profile
            forbids the query settings (``readonly=1``), or a file is missing.
            Messages never hold the URL's password.

    """

    dialect = "clickhouse"

    def __init__(
        self,
        name: str,
        config: ClickHouseSource,
        limits: Limits,
        *,
        client_factory: ClientFactory = get_client,
    ) -> None:
        super().__init__()
        self.name = name
        self.limits = limits
        self._config = config
        max_bytes = config.max_bytes_to_read
        self._caps = Caps(config.max_rows_to_read, int(max_bytes) if max_bytes else None)
        self._client: Any = None
        self._chdb: ChdbProcess | None = None
        self._password: str | None = None
        self._send_readonly = True
        self._schema: tuple[list[DataSet], Schema] | None = None
        if config.url:
            args = server_client_args(config.url, limits)
            self._password = args["password"] or None
            try:
                self._client = client_factory(args)
            except SourceError as error:
                raise SourceError(f"source {name}: {error}") from None
            except Exception as error:
                raise SourceError(
                    f"source {name}: cannot connect to ClickHouse at {args['host']}:"
                    f"{args['port']}: {self._message(error)}"
                ) from None
            self._send_readonly = self._readonly_level() == 0
            self.schema = config.database or args["database"] or self._client.database
        else:
            self._chdb = ChdbProcess(chdb_spec(name, config), limits.kill_after_s)
            self.schema = config.database or "default"

    def _message(self, error: BaseException) -> str:
        text = error_message(error)
        return text.replace(self._password, "***") if self._password else text

    def _readonly_level(self) -> int:
        """The user's ``readonly`` (0, 1 or 2); 1 refuses the source: no limit could be sent."""
        found = getattr(self._client, "server_settings", {}).get("readonly")
        level = int(found.value) if found is not None else 0
        if level == 1:
            raise SourceError(
                f"source {self.name}: the ClickHouse user's profile has readonly=1, which"
                " forbids the settings every query is sent with (max_execution_time, …);"
                " give it readonly=2 (docs/engines.md, ClickHouse)"
            )
        return level

    def _rows(
        self, sql: str, *, timeout_s: float, scan_rows: int, capped: bool = True
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run ``sql`` with the read-only settings (no guard: callers check or own it).

        ``capped``: with the source's cost cap (the catalog's own statements are bounded
        in time only).

        Raises:
            QueryFailed: the engine refused it.
            QueryTimeout: it ran past ``timeout_s`` (or the child was killed past its grace).

        """
        settings = query_settings(
            timeout_s,
            scan_rows=scan_rows,
            caps=self._caps if capped else Caps(),
            send_readonly=self._send_readonly,
        )
        if self._chdb is not None:
            try:
                return self._chdb.run(sql, settings, scan_rows, timeout_s)
            except ChildFailed as failed:
                if failed.kind == "start" and self._config.path:
                    raise QueryFailed(
                        f"cannot open the chdb data folder {self._config.path}: {failed} (chdb"
                        " serves a folder to one process at a time: is another using it?)"
                    ) from None
                if failed.kind == "timeout":
                    raise QueryTimeout(
                        f"the query ran past its time limit of {timeout_s:g} s"
                    ) from None
                raise QueryFailed(f"{failed}") from None
        try:
            return read_rows(self._client, sql, settings, scan_rows)
        except Exception as error:
            if error_code(error) == TIMEOUT_CODE:
                raise QueryTimeout(
                    f"the query ran past its time limit of {timeout_s:g} s"
                ) from None
            raise QueryFailed(self._message(error)) from None

    def _catalog_rows(self, sql: str, what: str) -> list[tuple[Any, ...]]:
        try:
            _, rows = self._rows(
                sql, timeout_s=self.limits.query_timeout_s, scan_rows=CATALOG_MAX_ROWS, capped=False
            )
        except (QueryFailed, QueryTimeout) as error:
            raise SourceError(f"source {self.name}: cannot read {what}: {error}") from None
        return rows

    def _load_catalog(self) -> list[DataSet]:
        database = self.schema or "default"
        tables_sql, columns_sql = catalog_statements(database)
        tables = {
            str(n): (rows, str(engine))
            for n, rows, engine in self._catalog_rows(tables_sql, "the catalog")
        }
        columns: dict[str, list[Column]] = {}
        for table, column, type_ in self._catalog_rows(columns_sql, "the catalog"):
            columns.setdefault(str(table), []).append(_column(str(column), str(type_)))
        counts = {name: int(rows) for name, (rows, _) in tables.items() if rows is not None}
        uncounted = [name for name in tables if name not in counts]
        if uncounted:  # views keep no count: one bounded statement counts them all
            counted = self._catalog_rows(count_statement(uncounted), "the views' row counts")
            counts |= {str(name): int(n) for name, n in counted}
        wanted = self._config.tables.keys() if self._config.tables else tables.keys()
        return [
            DataSet(name, tuple(columns.get(name, ())), counts[name])
            for name in wanted
            if name in tables
        ]

    def _load_definitions(self) -> list[Definition]:
        views = self._catalog_rows(views_statement(self.schema or "default"), "the views")
        return [Definition("view", str(name), str(sql)) for name, sql in views if sql]

    def _read_columns(self, name: str) -> tuple[Column, ...]:
        _, columns_sql = catalog_statements(self.schema or "default")
        rows = self._catalog_rows(columns_sql, f"the columns of {name}")
        return tuple(_column(str(c), str(t)) for table, c, t in rows if table == name)

    def _execute(self, sql: str, *, max_rows: int, timeout_s: float) -> QueryResult:
        started = time.monotonic()
        scan = self.limits.fingerprint_max_rows
        typed = sql_results(sql, self._types())
        columns, rows = self._rows(typed, timeout_s=timeout_s, scan_rows=scan)
        batches = [rows]

        def fetch(size: int) -> list[tuple[Any, ...]]:
            return batches.pop() if batches else []

        return collect(
            fetch,
            sql=sql,
            columns=columns,
            max_rows=max_rows,
            scan_rows=scan,
            started=started,
            timeout_s=timeout_s,
            limits=self.limits,
        )

    def _types(self) -> Schema:
        """The catalog's column types for ``sql_results``, made once per catalog."""
        catalog = self.catalog()
        if self._schema is None or self._schema[0] is not catalog:
            types = tuple((d.name, tuple((c.name, c.type) for c in d.columns)) for d in catalog)
            self._schema = (catalog, types)
        return self._schema[1]

    def write_warnings(self) -> list[str]:
        """One sentence per way this source's user could write; empty if none.

        A server user whose profile has ``readonly=0`` writes in any session Lookout does
        not send ``readonly=1`` to (another client, the same password). chdb reads a local
        folder or files: no user, nothing to grant.
        """
        if self._chdb is not None or not self._send_readonly:
            return []
        return [
            f"source {self.name}: the ClickHouse user's profile has readonly=0: it can write"
            " wherever Lookout does not send readonly=1; give it a profile with readonly=2"
            " (docs/engines.md, ClickHouse)"
        ]

    def engine_version(self) -> str:
        """The engine and its version: ``ClickHouse 26.9.2.1`` (``chdb`` for chdb).

        Raises:
            SourceError: the engine cannot be reached.

        """
        (version,) = self._catalog_rows("SELECT version()", "its version")[0]
        return f"{'ClickHouse' if self._chdb is None else 'chdb (ClickHouse)'} {version}"

    def close(self) -> None:
        """Stop the chdb child, or close the server's client."""
        if self._chdb is not None:
            self._chdb.close()
        elif self._client is not None:
            self._client.close()


def _column(name: str, type_: str) -> Column:
    """A column as the catalog keeps it: ``Nullable(T)`` is ``T`` with ``nullable`` True."""
    nullable = False
    inner = type_
    if inner.startswith("LowCardinality(") and inner.endswith(")"):
        inner = inner[len("LowCardinality(") : -1]
    if inner.startswith("Nullable(") and inner.endswith(")"):
        inner, nullable = inner[len("Nullable(") : -1], True
    return Column(name, inner, nullable)
