"""What every engine reached through SQLAlchemy implements: its read-only recipe.

A ``Recipe`` says how ``checks.sources.sql_source.SQLQuerySource`` connects to one
engine (driver, connect arguments, the session's read-only settings) and runs one
checked query on it (read-only, limited in time, pinned to UTC), and what it reads of
the engine beyond the catalog: the functions it may allow, its own definitions, its
version and the grants that would let the role write. One module per engine in
``checks.sources.recipes``; docs/engines.md has the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from checks.errors import SourceError

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.engine import URL

    from checks.settings.limits import Limits
    from checks.settings.sources import SQLAlchemySource
    from checks.sources.definitions import Kind
    from checks.sources.fingerprint import Finish
    from checks.sources.result import QueryResult
    from checks.sources.scan import ScanEstimate
    from checks.sql.facts import SourceFacts


class Recipe:
    """One engine's read-only recipe (subclass per engine; the defaults suit most).

    Class attributes:
        label: the engine's name as users write it ("PostgreSQL").
        dialect: the sqlglot dialect its queries are written, guarded and compiled in.
        read_only: how its sessions are held read-only, in a few words
            (``lookout sources check``).
        extra: the ``pip install 'lookout[EXTRA]'`` that brings its driver, or None when
            the driver ships with Lookout.
        definitions: statements (kind, SQL with ``:schema``) that read the source schema's
            own functions and views as (name, SQL) rows (``checks.sources.definitions``).
        cost_cap_key: the URL query key a source's ``max_bytes_billed`` is given to
            ``engine_args`` as, or None for an engine with no cost cap by bytes.

    """

    label: ClassVar[str]
    dialect: ClassVar[str]
    read_only: ClassVar[str] = "every query runs in a read-only transaction"
    extra: ClassVar[str | None] = None
    definitions: ClassVar[tuple[tuple[Kind, str], ...]] = ()
    cost_cap_key: ClassVar[str | None] = None

    def with_options(self, name: str, config: SQLAlchemySource) -> Recipe:
        """The recipe for source ``name``'s own settings (``cost_cap``); itself by default.

        Raises:
            SourceError: the engine has no cost cap and ``config`` sets one, or the
                value is not one the engine takes.

        """
        if config.cost_cap is not None:
            raise SourceError(
                f"source {name}: cost_cap is not supported for {self.label}"
                " (docs/engines.md lists the engines with a cost cap)"
            )
        return self

    def engine_args(self, name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
        """The URL and ``create_engine`` keyword arguments for source ``name``.

        Raises:
            SourceError: the URL cannot be used (a missing file, a refused setting).

        """
        return url, {"pool_pre_ping": True}

    def on_connect(self, conn: Any, limits: Limits) -> None:
        """Set up a new raw DB-API connection's session before its first use (default: none).

        Raises:
            Exception: the driver's error; the connection is then not used.

        """

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
        """Run checked ``sql`` on the raw DB-API connection ``conn``, read-only.

        ``finish`` reads the result (``checks.sources.fingerprint.collect``) from a
        ``fetchmany`` and the column names.

        Raises:
            QueryFailed: the engine refused the query.
            QueryTimeout: it ran past ``timeout_s``.

        """
        raise NotImplementedError

    def estimate_scan(
        self, conn: Any, sql: str, timeout_s: float, *, schema: str | None
    ) -> ScanEstimate | None:
        """What checked ``sql`` would read, from the engine's plan or statistics; runs nothing.

        None (the default) where the engine gives no estimate; docs/engines.md, Bytes read.

        Raises:
            Exception: the driver's error when the engine could not plan it.

        """
        return None

    def reset(self, conn: Any) -> bool:
        """Leave the raw connection with no session state; False if it must be closed."""
        return True

    def facts(self, conn: sa.Connection, schema: str) -> SourceFacts | None:
        """What the engine itself marks as safe (functions, types), or None when unread."""
        return None

    def row_estimates(self, conn: sa.Connection, schema: str) -> dict[str, int] | None:
        """Each table of ``schema`` by name with its rows as the engine's statistics estimate.

        One catalog statement, no table scanned; None (the default) where the
        engine keeps no such figure: the catalog then lists no row counts.
        """
        return None

    def version(self, conn: sa.Connection) -> str:
        """The engine's name and version ("PostgreSQL 15.19")."""
        info = conn.dialect.server_version_info
        return f"{self.label} {'.'.join(map(str, info))}" if info else self.label

    def write_warnings(self, conn: sa.Connection, schema: str) -> list[str]:
        """One sentence per grant that lets this role write, naming it; empty if none."""
        return []

    def is_timeout(self, error: BaseException) -> bool:
        """Whether a driver error is the engine ending a query at its time limit."""
        return False
