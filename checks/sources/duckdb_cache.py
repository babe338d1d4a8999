"""A DuckDB source's cache file: its database's tables, its files and lake tables, copied once.

The file is ``<cache_dir>/sources/<source>-<hash>.duckdb``, where the hash
covers the config, each input file's size and modification time (every file a
glob matches), each Delta table's version and each Iceberg table's metadata
and snapshot: a changed, added or removed file, or a new version, means a new
build. A build writes a temporary file and renames it into place, so
concurrent builders are safe (the last rename wins; both built the same thing),
and a build that fails leaves every file built before as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checks.errors import SourceError, first_line
from checks.settings.sources import FILE_FORMATS, DuckDBSource, TableFile
from checks.sources.base import missing_file
from checks.sources.lake_files import (
    SUFFIXES,
    file_stamp,
    is_glob,
    load_files,
    spec_path,
    table_files,
)
from checks.sources.lake_tables import LakeTable, load_lake_table, open_lake_table

if TYPE_CHECKING:
    import duckdb

BUILD_VERSION = 2
"""Bumped when the way files are loaded changes, so old cache files are not reused."""


@dataclass(frozen=True)
class TableInput:
    """Where one table of the cache comes from, as found when the source opened.

    Attributes:
        table: its name in the source.
        spec: its ``tables:`` entry.
        files: the files it is read from (none for a lake table).
        lake: the Delta or Iceberg table it is read from, or None.
        origin: where it comes from, in words (a lake table's version included).
    """

    table: str
    spec: str | TableFile
    files: list[Path] = field(default_factory=list)
    lake: LakeTable | None = None
    origin: str = ""

    def stamp(self) -> Any:
        """What its build keys on: each file's path, size and time, or the lake table's version."""
        return self.lake.stamp if self.lake is not None else file_stamp(self.files)


@dataclass(frozen=True)
class CacheFile:
    """A built cache file and where each of its tables came from.

    Attributes:
        path: the DuckDB file.
        origins: table name → where it came from, in words, for the tables
            of ``tables:`` (``3 Parquet files matching data/*.parquet``,
            ``Delta table lake/orders, version 3``).
    """

    path: Path
    origins: dict[str, str]


def find_inputs(name: str, config: DuckDBSource) -> list[TableInput]:
    """Find every ``tables:`` entry's files or lake table, and its version.

    Raises:
        SourceError: an entry's file, glob or table is not there, or its
            library is missing; the message names the source and the table.

    """
    found = []
    for table, spec in config.tables.items():
        try:
            found.append(_find(table, spec))
        except SourceError as error:
            raise SourceError(f"source {name}: {error}") from None
    return found


def _find(table: str, spec: str | TableFile) -> TableInput:
    if isinstance(spec, TableFile) and spec.format not in (None, *FILE_FORMATS):
        lake = open_lake_table(table, spec)
        return TableInput(table, spec, lake=lake, origin=lake.origin)
    files = table_files(table, spec)
    path = spec_path(spec)
    if not is_glob(path):
        return TableInput(table, spec, files, origin=f"file {path}")
    fmt = spec.format if isinstance(spec, TableFile) else None
    named = {"parquet": "Parquet", "csv": "CSV", "json": "JSON"}.get(fmt or _pattern_format(path))
    kind = f"{named} file" if named else "file"
    plural = "" if len(files) == 1 else "s"
    return TableInput(table, spec, files, origin=f"{len(files)} {kind}{plural} matching {path}")


def _pattern_format(pattern: str) -> str:
    lower = pattern.lower()
    return next((f for f, suffixes in SUFFIXES.items() if lower.endswith(suffixes)), "")


def build_cache(name: str, config: DuckDBSource, cache_dir: Path) -> CacheFile:
    """Build (or reuse) ``<cache_dir>/sources/<name>-<hash>.duckdb``.

    Raises:
        SourceError: an input is missing, a table name repeats, or loading
            failed; the message names the source (and the table, when one
            table failed). The cache files built before are left as they were.

    """
    inputs = find_inputs(name, config)
    database = Path(config.database) if config.database else None
    if database is not None and not database.is_file():
        raise SourceError(f"source {name}: database file {database} {missing_file(database)}")
    stamp = {
        "version": BUILD_VERSION,
        "config": config.model_dump(mode="json", by_alias=True, exclude={"monitor"}),
        "tables": {each.table: each.stamp() for each in inputs},
        "database": file_stamp([database])[0] if database else None,
    }
    digest = hashlib.sha256(json.dumps(stamp, sort_keys=True).encode()).hexdigest()[:16]
    final = cache_dir / "sources" / f"{name}-{digest}.duckdb"
    built = CacheFile(final, {each.table: each.origin for each in inputs})
    if final.is_file():
        return built
    import duckdb  # only here: building a cache file

    final.parent.mkdir(parents=True, exist_ok=True)
    partial = final.with_name(f".{final.name}.{os.getpid()}-{uuid.uuid4().hex}.tmp")
    try:
        with tempfile.TemporaryDirectory(dir=final.parent) as scratch:
            _build(name, partial, inputs, database, Path(scratch))
        os.replace(partial, final)
    except duckdb.Error as error:
        raise SourceError(
            f"source {name}: cannot build {final.name}: {first_line(error)}"
        ) from None
    finally:
        for leftover in (partial, partial.with_name(partial.name + ".wal")):
            leftover.unlink(missing_ok=True)
    return built


def _build(
    name: str, target: Path, inputs: list[TableInput], database: Path | None, scratch: Path
) -> None:
    import duckdb

    conn = duckdb.connect(str(target))
    conn.execute("SET enable_progress_bar = false")  # a long load would draw it on stdout
    try:
        if database is not None:
            _copy_database(name, conn, database, {each.table for each in inputs})
        for each in inputs:
            try:
                _load_table(conn, each, scratch)
            except duckdb.Error as error:
                raise SourceError(
                    f"source {name}: table {each.table}: cannot read {each.origin}:"
                    f" {first_line(error)}"
                ) from None
            except SourceError as error:
                raise SourceError(f"source {name}: {error}") from None
        conn.execute("CHECKPOINT")
    finally:
        conn.close()


def _copy_database(
    name: str, conn: duckdb.DuckDBPyConnection, database: Path, tables: set[str]
) -> None:
    conn.execute(f"ATTACH {_literal(str(database))} AS lookout_src (READ_ONLY)")
    copied = conn.execute(
        "SELECT table_name FROM information_schema.tables"
        " WHERE table_catalog = 'lookout_src' AND table_schema = 'main'"
    ).fetchall()
    for (table,) in copied:
        if table in tables:
            raise SourceError(f"source {name}: table {table} is both in {database} and in tables")
        conn.execute(
            f"CREATE TABLE {_quote(table)} AS SELECT * FROM lookout_src.main.{_quote(table)}"
        )
    conn.execute("DETACH lookout_src")


def _load_table(conn: duckdb.DuckDBPyConnection, each: TableInput, scratch: Path) -> None:
    """Create one table of the cache from its files or its lake table."""
    if each.lake is not None:
        load_lake_table(conn, each.lake)
    else:
        load_files(conn, each.table, each.files, each.spec, scratch)


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
