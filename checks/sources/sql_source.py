"""Sources reached through SQLAlchemy: every engine of ``checks.sources.recipes``.

The catalog comes from SQLAlchemy's inspector; queries run on the raw driver
connection so that each engine's read-only guarantees (layer 2 of docs/design.md,
Reading data safely) are applied exactly, by that engine's ``Recipe``
(``checks.sources.recipes``, one module per engine: the connection, the session's
read-only settings, the time limit, the zone pinned to UTC, the reset before the
connection goes back to the pool).

Results are wrapped like DuckDB's (``checks.sources.cells``) where the engine's query
module measures cells: a cell larger than ``Limits.fetch_cell_chars`` arrives as an
``Oversized``, measured and cut in SQL, so a huge value never reaches Python whole.
Fetching checks the deadline between batches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from checks.errors import QueryFailed, QueryTimeout, SourceError, first_line
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources.base import Source
from checks.sources.bounded import bound_pings, bounded_connection
from checks.sources.definitions import Definition
from checks.sources.fingerprint import Fetch, collect
from checks.sources.recipes import DIALECTS, recipe_for
from checks.sources.recipes.base import Recipe
from checks.sources.result import Column, DataSet, QueryResult
from checks.sources.scan import ScanEstimate
from checks.sources.source_config import Place, config_error, missing_tables, unknown_engine
from checks.sql.catalog import ForeignKeyConstraint
from checks.sql.facts import SourceFacts

__all__ = ["DIALECTS", "SQLQuerySource"]

T = TypeVar("T")


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

    def __init__(
        self, name: str, config: SQLAlchemySource, limits: Limits, place: Place | None = None
    ) -> None:
        super().__init__()
        self.name = name
        self.limits = limits
        self._config = config
        self._place = place
        try:
            url = make_url(config.url)
        except sa.exc.ArgumentError:
            raise SourceError(f"source {name}: the url is not a valid SQLAlchemy URL") from None
        self._backend = url.get_backend_name()
        if self._backend not in DIALECTS:
            why = unknown_engine(config.url, DIALECTS) or f"unsupported database {self._backend!r}"
            raise config_error(name, ("url",), why, place)
        self._recipe = recipe_for(self._backend).with_options(name, config)
        self.dialect = self._recipe.dialect
        self._shown = url.render_as_string(hide_password=True)
        self._password = url.password
        if config.max_bytes_billed is not None:
            url = self._with_cost_cap(url, int(config.max_bytes_billed))
        engine_url, options = self._recipe.engine_args(name, url, limits)
        try:
            self._engine = sa.create_engine(engine_url, **options)
        except (ImportError, sa.exc.NoSuchModuleError) as error:  # mysql:// without its driver
            extra = self._recipe.extra
            install = f"; pip install 'lookout[{extra}]'" if extra else ""
            raise SourceError(
                f"source {name}: cannot use {self._shown}: its database driver is not "
                f"installed ({first_line(error)}){install}"
            ) from None
        bound_pings(self._engine, limits)
        recipe = self._recipe
        sa.event.listen(self._engine, "connect", lambda conn, _: recipe.on_connect(conn, limits))
        try:
            # The schema the catalog lists and unqualified names resolve in;
            # PostgreSQL queries run with search_path set to it. BigQuery's dialect
            # names none: its dataset is the URL's path.
            default = sa.inspect(self._engine).default_schema_name or url.database
            self.schema = config.schema_ or default
        except sa.exc.SQLAlchemyError as error:
            self._engine.dispose()
            raise SourceError(
                f"source {name}: cannot connect to {self._shown}: {self._message(error)}"
            ) from None

    def _with_cost_cap(self, url: sa.URL, cap: int) -> sa.URL:
        key = self._recipe.cost_cap_key
        if key is None:
            raise SourceError(
                f"source {self.name}: max_bytes_billed is the cost cap of an engine billing by"
                f" bytes scanned (BigQuery); {self._recipe.label} has none"
            )
        if key in url.query:
            raise SourceError(
                f"source {self.name}: the cost cap is set twice: max_bytes_billed and the"
                f" url's {key}; keep max_bytes_billed"
            )
        return url.update_query_dict({key: str(cap)})

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
            listed = self._config.tables
            missing = missing_tables(self.name, listed, names, self._place, self._shown)
            if missing is not None:
                raise missing
            names = [t if t in names else by_lower[t.lower()] for t in listed]
        # The engine's statistics, one statement for every table: listing the
        # tables never counts them (the checks count the tables they check).
        estimates = self._recipe.row_estimates(conn, self.schema or "public") or {}
        return [
            DataSet(
                table, _columns(inspector, table, schema), estimates.get(table), table in estimates
            )
            for table in names
        ]

    def _load_facts(self) -> SourceFacts | None:
        if type(self._recipe).facts is Recipe.facts:
            return None
        try:
            with bounded_connection(self._engine, self.limits) as conn:
                return self._recipe.facts(conn, self.schema or "public")
        except sa.exc.SQLAlchemyError as error:
            raise SourceError(
                f"source {self.name}: cannot read the catalog: {self._message(error)}"
            ) from None

    def _load_definitions(self) -> list[Definition]:
        statements = self._recipe.definitions
        if not statements:
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

    def foreign_keys(self) -> list[ForeignKeyConstraint]:
        """``Source.foreign_keys``: SQLAlchemy's inspector, table by table, in its schema."""
        schema = self._config.schema_
        found: list[ForeignKeyConstraint] = []
        try:
            with bounded_connection(self._engine, self.limits) as conn:
                inspector = sa.inspect(conn)
                for data_set in self.catalog():
                    for key in inspector.get_foreign_keys(data_set.name, schema):
                        here, there = key["constrained_columns"], key["referred_columns"]
                        if len(here) == 1 and len(there) == 1:
                            to = key["referred_table"]
                            found.append(ForeignKeyConstraint(data_set.name, here[0], to, there[0]))
        except sa.exc.SQLAlchemyError as error:
            raise SourceError(
                f"source {self.name}: cannot read the foreign keys: {self._message(error)}"
            ) from None
        return found

    def _read_columns(self, name: str) -> tuple[Column, ...]:
        try:
            with bounded_connection(self._engine, self.limits) as conn:
                return _columns(sa.inspect(conn), name, self._config.schema_)
        except sa.exc.SQLAlchemyError as error:
            raise SourceError(
                f"source {self.name}: cannot read the columns of {name}: {self._message(error)}"
            ) from None

    def _execute(self, sql: str, *, max_rows: int, timeout_s: float) -> QueryResult:
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

            return self._recipe.run(
                raw.driver_connection,
                sql,
                timeout_s,
                finish,
                limits=self.limits,
                schema=self.schema,
            )
        except (QueryTimeout, QueryFailed):
            raise
        except Exception as error:
            if self._recipe.is_timeout(error) or time.monotonic() - started >= timeout_s:
                raise QueryTimeout(
                    f"the query ran past its time limit of {timeout_s:g} s"
                ) from None
            raise QueryFailed(self._message(error)) from None
        finally:
            # Whatever happened (a result, an error, a timeout), the connection
            # goes back to the pool only once it holds no session state; a
            # connection that cannot be reset is closed instead.
            clean = self._recipe.reset(raw.driver_connection)
            try:
                if clean:
                    raw.close()
                else:
                    raw.invalidate()
            except Exception:
                raw.invalidate()

    def _estimate(self, sql: str, *, timeout_s: float) -> ScanEstimate | None:
        """The recipe's estimate (``Recipe.estimate_scan``), on a connection left clean after.

        Raises:
            QueryFailed: the engine could not plan it, or cannot be reached.
            QueryTimeout: planning ran past ``timeout_s``.

        """
        [found] = self._planned([sql], timeout_s, each=False)
        return found

    def _estimate_many(
        self, statements: list[str | None], *, timeout_s: float
    ) -> list[ScanEstimate | None]:
        """Every statement's estimate on one connection; one that failed gives None."""
        return self._planned(statements, timeout_s, each=True)

    def _planned(
        self, statements: list[str | None], timeout_s: float, *, each: bool
    ) -> list[ScanEstimate | None]:
        """Estimate ``statements`` on one pooled connection, reset afterwards.

        With ``each``, a statement whose estimate fails gives None and the next
        goes on; without, its error is raised as ``QueryFailed``/``QueryTimeout``.
        """
        if not any(statements) or type(self._recipe).estimate_scan is Recipe.estimate_scan:
            return [None] * len(statements)  # the engine gives none: no connection taken
        try:
            raw = self._engine.raw_connection()
        except sa.exc.SQLAlchemyError as error:
            if each:
                return [None] * len(statements)
            raise QueryFailed(f"cannot connect to {self._shown}: {self._message(error)}") from None
        found: list[ScanEstimate | None] = []
        try:
            for sql in statements:
                try:
                    estimate = (
                        None
                        if sql is None
                        else self._recipe.estimate_scan(
                            raw.driver_connection, sql, timeout_s, schema=self.schema
                        )
                    )
                except Exception as error:
                    if not each:
                        if self._recipe.is_timeout(error):
                            raise QueryTimeout(
                                f"planning the query ran past its time limit of {timeout_s:g} s"
                            ) from None
                        raise QueryFailed(self._message(error)) from None
                    estimate = None
                found.append(estimate)
        finally:
            clean = self._recipe.reset(raw.driver_connection)
            try:
                raw.close() if clean else raw.invalidate()
            except Exception:
                raw.invalidate()
        return found

    def engine_version(self) -> str:
        """The engine's name and version ("PostgreSQL 15.19").

        Raises:
            SourceError: the database cannot be reached.

        """
        return self._with_connection("read its version", self._recipe.version)

    def write_warnings(self) -> list[str]:
        """One sentence per grant that lets this source's role write; empty if none.

        Raises:
            SourceError: the database cannot be reached.

        """
        schema = self.schema or "public"
        return self._with_connection(
            "read its grants", lambda conn: self._recipe.write_warnings(conn, schema)
        )

    def reads_grants(self) -> bool:
        """Whether the engine's recipe reads the role's grants."""
        return type(self._recipe).write_warnings is not Recipe.write_warnings

    def read_only_by(self) -> str:
        """How the engine's recipe holds its sessions read-only."""
        return self._recipe.read_only

    def _with_connection(self, doing: str, read: Callable[[sa.Connection], T]) -> T:
        try:
            with bounded_connection(self._engine, self.limits) as conn:
                return read(conn)
        except sa.exc.SQLAlchemyError as error:
            raise SourceError(
                f"source {self.name}: cannot {doing}: {self._message(error)}"
            ) from None

    def close(self) -> None:
        """Close every pooled connection."""
        self._engine.dispose()


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
