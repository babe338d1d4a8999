"""DuckDB sources: a database file and/or files and lake tables loaded as tables.

Files (Parquet, CSV, JSON, one or a glob's) and Delta and Iceberg tables are
loaded ONCE into a DuckDB file under ``<cache_dir>/sources/``, rebuilt when a
file or a table's version changes (``checks.sources.duckdb_cache``).

Queries then run on that file (or on ``database`` directly when there are no
files) opened with the layer 2 settings of docs/design.md, Reading data safely: ``read_only``,
external access off (no file, URL, ATTACH or COPY), extension autoinstall and
autoload off, Python replacement scans off, configuration locked.

Each query runs in a child process holding its own read-only connection, with
the memory, thread and spill limits of ``limits:``, killed past its time limit
(``checks.sources.query_process``); so do the catalog's own queries (tables,
columns, the storage's row figures and the guard's facts), and this process imports DuckDB
only to build a cache file. A query whose result has variable-size
columns (text, blobs, lists, structs…) runs wrapped in a projection that
measures each such cell in SQL first: a cell larger than
``Limits.fetch_cell_chars`` never reaches Python whole (turning one huge
value into Python objects can neither be interrupted nor bounded in memory);
it arrives as an ``Oversized`` holding its head, size and DuckDB's hash.
Everything else, rows and their order included, is exactly what the query
returns (``CellFetch`` in ``checks.sources.cells``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checks.errors import QueryError, SourceError
from checks.settings.limits import Limits
from checks.settings.sources import DuckDBSource
from checks.sources.base import Source, missing_file
from checks.sources.definitions import Definition
from checks.sources.duckdb_cache import build_cache
from checks.sources.query_process import START_TIMEOUT_S, QueryProcesses
from checks.sources.result import Column, DataSet, QueryResult
from checks.sql.catalog import ForeignKeyConstraint

if TYPE_CHECKING:
    from checks.sources.scan import ScanEstimate
    from checks.sql.facts import SourceFacts

CATALOG_TIMEOUT_S = START_TIMEOUT_S
"""Seconds each of the catalog's queries may take (they read DuckDB's own tables)."""

Rows = Callable[[str], Sequence[Sequence[Any]]]
"""Runs one catalog query in a query process and returns all its rows."""


class DuckDBQuerySource(Source):
    """A DuckDB file opened read-only with external access off, in query processes.

    Every query, the catalog's included, runs in one of the source's query
    processes (``QueryProcesses``), which are safe to share between threads,
    so concurrent ``query`` calls from several threads are safe. The first
    process starts here and opens the file while the caller goes on; a file it
    cannot open fails the first query or catalog read with ``SourceError``.

    Args:
        name: the source's name in the settings.
        path: the DuckDB file to open read-only.
        limits: the query limits.
        origins: table name → where it was loaded from, in words
            (``CacheFile.origins``); a Delta or Iceberg table's, its version
            included, is shown in its description.

    Raises:
        SourceError: the file does not exist.

    """

    dialect = "duckdb"

    def __init__(
        self, name: str, path: Path, limits: Limits, *, origins: dict[str, str] | None = None
    ) -> None:
        super().__init__()
        self.name = name
        self.origins = dict(origins or {})
        self.schema = "main"
        self.limits = limits
        self.path = path
        if not path.is_file():
            raise SourceError(f"source {name}: database file {path} {missing_file(path)}")
        ahead = [(sql, CATALOG_MAX_ROWS, CATALOG_TIMEOUT_S, False) for sql in CATALOG_AHEAD]
        self._processes = QueryProcesses(name, path, limits, ahead)
        self._sizes: tuple[float, dict[str, int]] = (-float("inf"), {})  # read at, rows

    def _rows(self, sql: str, what: str) -> Sequence[Sequence[Any]]:
        """All rows of one of the catalog's own queries (no guard: the text is ours)."""
        try:
            return self._processes.run(
                sql, max_rows=CATALOG_MAX_ROWS, timeout_s=CATALOG_TIMEOUT_S, measure_cells=False
            ).rows
        except QueryError as error:
            raise SourceError(f"source {self.name}: cannot read {what}: {error}") from None

    def _load_catalog(self) -> list[DataSet]:
        columns: dict[str, list[Column]] = {}
        for table, column, type_, nullable in self._rows(_COLUMNS_SQL, "the catalog"):
            columns.setdefault(table, []).append(Column(column, type_, nullable != "NO"))
        # The storage's own row figure (nothing is scanned); a view has none.
        sizes = {str(t): int(n) for t, n in self._rows(_SIZES_SQL, "the catalog") if n is not None}
        return [
            DataSet(table, tuple(cols), sizes.get(table), table in sizes)
            for table, cols in columns.items()
        ]

    def foreign_keys(self) -> list[ForeignKeyConstraint]:
        """``Source.foreign_keys``: DuckDB's ``duckdb_constraints()`` of the main schema."""
        found = self._rows(
            "SELECT table_name, constraint_column_names, referenced_table,"
            " referenced_column_names FROM duckdb_constraints()"
            " WHERE constraint_type = 'FOREIGN KEY' AND schema_name = 'main'"
            " AND database_name = current_database() ORDER BY table_name, constraint_index",
            "the foreign keys",
        )
        return [
            ForeignKeyConstraint(str(table), str(columns[0]), str(to), str(to_columns[0]))
            for table, columns, to, to_columns in found
            if len(columns) == 1 and len(to_columns) == 1
        ]

    def _read_columns(self, name: str) -> tuple[Column, ...]:
        found = self._rows(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns"
            " WHERE table_schema = 'main' AND table_catalog = current_database()"
            f" AND table_name = {_literal(name)} ORDER BY ordinal_position",
            f"the columns of {name}",
        )
        return tuple(Column(column, type_, nullable != "NO") for column, type_, nullable in found)

    def describe(self, name: str, *, sample_rows: int = 5) -> dict[str, Any]:
        """``Source.describe``, with ``origin`` for a Delta or Iceberg table: its version."""
        described = super().describe(name, sample_rows=sample_rows)
        origin = self.origins.get(described["name"], "")
        if origin.startswith(("Delta table ", "Iceberg table ")):
            described["origin"] = origin
        return described

    def _load_facts(self) -> SourceFacts:
        return duckdb_facts(lambda sql: self._rows(sql, "the catalog"))

    def _load_definitions(self) -> list[Definition]:
        macros = [
            Definition("function", str(name), str(body))
            for name, body in self._rows(_MACROS_SQL, "the catalog")
            if body
        ]
        views = [
            Definition("view", str(name), str(sql))
            for name, sql in self._rows(_VIEWS_SQL, "the catalog")
        ]
        return macros + views

    def _execute(self, sql: str, *, max_rows: int, timeout_s: float) -> QueryResult:
        """Run checked ``sql``; a ``NOT EXISTS`` it proves one runs as ``ANTI JOIN``.

        (``checks.sources.duckdb_anti_join``: the same rows, within the memory
        limit at 50M rows). The result names ``sql`` as given.
        """
        from checks.sources.duckdb_anti_join import anti_joined

        result = self._processes.run(anti_joined(sql), max_rows=max_rows, timeout_s=timeout_s)
        result.sql = sql
        return result

    def engine_version(self) -> str:
        """``DuckDB 1.1.3``: the library the query processes run (``pragma_version()``)."""
        found = self._rows("SELECT library_version FROM pragma_version()", "its version")
        return f"DuckDB {str(found[0][0]).removeprefix('v')}"

    def read_only_by(self) -> str:
        """DuckDB's own ``read_only`` open, external access off."""
        return "the file is opened read-only, external access off"

    def _estimate(self, sql: str, *, timeout_s: float) -> ScanEstimate | None:
        """The tables' statistics times the widths of the columns read (``duckdb_scan``).

        The statistics are read again once ``SIZES_FRESH_S`` have passed: a
        run's statements, estimated back to back, share one read.
        """
        from checks.sources.duckdb_scan import SIZES_FRESH_S, SIZES_SQL, estimate_duckdb

        read_at, sizes = self._sizes
        if time.monotonic() - read_at > SIZES_FRESH_S:
            found = self._processes.run(
                SIZES_SQL, max_rows=CATALOG_MAX_ROWS, timeout_s=timeout_s, measure_cells=False
            )
            sizes = {str(name): int(rows or 0) for name, rows in found.rows}
            self._sizes = (time.monotonic(), sizes)
        return estimate_duckdb(sql, self.catalog(), sizes)

    def close(self) -> None:
        """Stop the query processes."""
        self._processes.close()


CATALOG_MAX_ROWS = 10**9
"""Rows kept of a catalog query: all of them (names of tables, columns, functions and types)."""

_COLUMNS_SQL = (
    "SELECT table_name, column_name, data_type, is_nullable"
    " FROM information_schema.columns"
    " WHERE table_schema = 'main' AND table_catalog = current_database()"
    " ORDER BY table_name, ordinal_position"
)
_OWN = (
    "(database_name = 'system' AND schema_name IN ('main', 'pg_catalog'))"
    " OR (database_name = current_database() AND schema_name = 'main')"
)
_FUNCTIONS_SQL = (
    f"SELECT function_name, bool_or(coalesce(has_side_effects, false))"
    f" FROM duckdb_functions() WHERE {_OWN} GROUP BY function_name"
)
_TYPES_SQL = f"SELECT type_name FROM duckdb_types() WHERE {_OWN}"
_SCHEMAS_SQL = "SELECT schema_name FROM duckdb_schemas() WHERE database_name = current_database()"
_MACROS_SQL = (
    "SELECT function_name, any_value(macro_definition) FROM duckdb_functions()"
    " WHERE database_name = current_database() AND schema_name = 'main'"
    " AND function_type IN ('macro', 'table_macro') GROUP BY function_name"
)
_VIEWS_SQL = (
    "SELECT view_name, sql FROM duckdb_views()"
    " WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal"
)

_SIZES_SQL = (
    "SELECT table_name, estimated_size FROM duckdb_tables()"
    " WHERE database_name = current_database() AND schema_name = 'main'"
)
"""Each table's row count as DuckDB's storage keeps it (``duckdb_tables()``): no scan."""

CATALOG_AHEAD = (_COLUMNS_SQL, _SIZES_SQL, _FUNCTIONS_SQL, _TYPES_SQL, _SCHEMAS_SQL)
"""The catalog's queries: a source's first query process runs them as soon as it is
connected, while the caller is still importing, and answers them from what it found
(``QueryProcesses``'s ``ahead``)."""


def duckdb_facts(rows: Rows) -> SourceFacts:
    """Read what the guard may allow (``checks.sql.facts``) from DuckDB's own tables.

    ``rows`` runs one query and returns its rows. Functions: the built-ins
    (database ``system``) and this database's ``main`` schema, without side
    effects (``duckdb_functions().has_side_effects``), or in
    ``HARMLESS_VOLATILE``. Types: the same places (``duckdb_types()``).
    """
    # sqlglot (under checks.sql) only once the guard needs the facts: opening the
    # source starts its query process before this process imports it
    from checks.sql.facts import HARMLESS_VOLATILE, SourceFacts

    functions = {
        str(name).lower()
        for name, side_effects in rows(_FUNCTIONS_SQL)
        if not side_effects or str(name).lower() in HARMLESS_VOLATILE
    }
    types = {str(name).lower() for (name,) in rows(_TYPES_SQL)}
    schemas = {str(name).lower() for (name,) in rows(_SCHEMAS_SQL)}
    return SourceFacts(frozenset(functions), frozenset(types), frozenset(schemas))


def quote(identifier: str) -> str:
    """Quote an identifier for DuckDB (doubling embedded quotes)."""
    return '"' + identifier.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def open_duckdb(
    name: str, config: DuckDBSource, cache_dir: str | Path, limits: Limits
) -> DuckDBQuerySource:
    """Open a DuckDB source, building its cache file first when it has ``tables``.

    The cache file is ``checks.sources.duckdb_cache``'s.

    Raises:
        SourceError: no database and no tables, a file, glob or lake table is
            missing or unreadable, a table name is used twice, or the build failed.

    """
    if not config.tables:
        if not config.database:
            raise SourceError(f"source {name}: set database, tables or both")
        return DuckDBQuerySource(name, Path(config.database), limits)
    built = build_cache(name, config, Path(cache_dir))
    return DuckDBQuerySource(name, built.path, limits, origins=built.origins)
