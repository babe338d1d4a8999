"""Delta Lake and Iceberg tables read into a DuckDB source's cache file through Arrow.

DuckDB's own ``delta`` and ``iceberg`` extensions are downloaded at run time,
which a locked-down machine cannot do (and queries run with extensions off):
the tables are read instead by their own Python libraries, delta-rs
(``deltalake``, ``DeltaTable(path).to_pyarrow_dataset()``) and ``pyiceberg``
(``table.scan().to_arrow_batch_reader()``), and copied into the cache file as
DuckDB scans their Arrow data. Each is read at the version found when the
source opens (a Delta table's version, an Iceberg table's current snapshot),
which goes into the cache file's key: a new version is a new build.

An Iceberg table is found through a pyiceberg SQL catalog (``catalog:``, a
SQLAlchemy URI, and ``table:``, ``namespace.name``), opened without creating
its tables (``init_catalog_tables``), or through its metadata file (``path:``,
pyiceberg's ``StaticTable``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checks.errors import SourceError, first_line
from checks.settings.sources import TableFile

if TYPE_CHECKING:
    import duckdb

Stamp = list[str | int | None]
"""What a lake table's build keys on: its kind, where it is, and its version."""

_VIEW_NUMBERS = itertools.count()


@dataclass(frozen=True)
class LakeTable:
    """A Delta or Iceberg table at the version found when the source opened.

    Attributes:
        table: its name in the source.
        origin: where it comes from and its version, in words
            (``Delta table lake/orders, version 3``).
        stamp: what its build keys on (``Stamp``).
        read: returns its rows at that version as an Arrow object DuckDB scans
            (a ``pyarrow.dataset.Dataset`` or a ``pyarrow.RecordBatchReader``).
    """

    table: str
    origin: str
    stamp: Stamp
    read: Callable[[], Any]


def open_lake_table(table: str, spec: TableFile) -> LakeTable:
    """Find a ``format: delta`` or ``format: iceberg`` entry's table and its current version.

    Raises:
        SourceError: its library is not installed (the message names the
            extra), the table is not there, or it cannot be opened; the
            message names the table.

    """
    if spec.format == "delta":
        return _delta(table, spec.path or "")
    return _iceberg(table, spec)


def load_lake_table(conn: duckdb.DuckDBPyConnection, lake: LakeTable) -> None:
    """Create ``lake.table`` in ``conn`` from its rows at its version, through Arrow.

    Raises:
        SourceError: its library could not read it.
        duckdb.Error: DuckDB could not scan what it read.

    """
    view = f"lookout_lake_{next(_VIEW_NUMBERS)}"
    try:
        data = lake.read()
    except SourceError:
        raise
    except Exception as error:  # the libraries' own errors share no base class
        raise SourceError(
            f"table {lake.table}: cannot read {lake.origin}: {first_line(error)}"
        ) from None
    conn.register(view, data)  # this connection builds the cache: it is not the locked one
    try:
        quoted = '"' + lake.table.replace('"', '""') + '"'
        conn.execute(f"CREATE TABLE {quoted} AS SELECT * FROM {view}")
    finally:
        conn.unregister(view)


def _delta(table: str, path: str) -> LakeTable:
    try:
        from deltalake import DeltaTable
    except ImportError:
        raise _missing(table, "a Delta table", "deltalake", "delta") from None
    folder = Path(path)
    if not folder.is_dir():
        reason = "is a file, not a folder" if folder.exists() else "not found"
        raise SourceError(f"table {table}: Delta table {path} {reason}")
    if not (folder / "_delta_log").is_dir():
        raise SourceError(
            f"table {table}: {path} is not a Delta table (it has no _delta_log folder)"
        )
    try:
        delta = DeltaTable(str(folder))
        version = int(delta.version())
    except Exception as error:  # deltalake's errors (TableNotFoundError, DeltaError, OSError)
        raise SourceError(
            f"table {table}: cannot open Delta table {path}: {first_line(error)}"
        ) from None

    def read() -> Any:
        _need_pyarrow(table, "a Delta table", "delta")
        return delta.to_pyarrow_dataset()  # the version loaded above

    # the commit file's time too: a table deleted and written again starts at version 0 again
    commit = folder / "_delta_log" / f"{version:020d}.json"
    written = commit.stat().st_mtime_ns if commit.is_file() else None
    return LakeTable(
        table,
        f"Delta table {path}, version {version}",
        ["delta", str(folder.resolve()), version, written],
        read,
    )


def _iceberg(table: str, spec: TableFile) -> LakeTable:
    try:
        import pyiceberg  # noqa: F401  (only to name the extra when it is missing)
    except ImportError:
        raise _missing(table, "an Iceberg table", "pyiceberg", "iceberg") from None
    _need_pyarrow(table, "an Iceberg table", "iceberg")
    if spec.path is not None:
        found, where = _static_iceberg(table, spec.path), spec.path
    else:
        found, where = _catalog_iceberg(table, spec), str(spec.table)
    snapshot = found.current_snapshot()
    snapshot_id = None if snapshot is None else int(snapshot.snapshot_id)
    shown = "no snapshot yet" if snapshot_id is None else f"snapshot {snapshot_id}"

    def read() -> Any:
        return found.scan(snapshot_id=snapshot_id).to_arrow_batch_reader()

    return LakeTable(
        table,
        f"Iceberg table {where}, {shown}",
        ["iceberg", str(found.metadata_location), snapshot_id],
        read,
    )


def _static_iceberg(table: str, path: str) -> Any:
    from pyiceberg.table import StaticTable

    if not Path(path).is_file():
        raise SourceError(f"table {table}: Iceberg metadata file {path} not found")
    try:
        return StaticTable.from_metadata(str(Path(path).resolve()))
    except Exception as error:  # pyiceberg's errors share no base class
        raise SourceError(
            f"table {table}: cannot read Iceberg metadata {path}: {first_line(error)}"
        ) from None


def _catalog_iceberg(table: str, spec: TableFile) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    uri = str(spec.catalog)
    try:
        url = make_url(uri)
    except ArgumentError:
        raise SourceError(f"table {table}: catalog is not a SQLAlchemy URI") from None
    shown = url.render_as_string(hide_password=True)
    local = url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:")
    if local and not Path(str(url.database)).is_file():  # SQLite would create it
        raise SourceError(f"table {table}: Iceberg catalog file {url.database} not found")
    try:
        catalog = SqlCatalog(spec.catalog_name, uri=uri, init_catalog_tables="false")
        try:
            return catalog.load_table(str(spec.table))
        finally:
            catalog.engine.dispose()  # the table's files are read without the catalog
    except Exception as error:  # NoSuchTableError, NoSuchNamespaceError, SQLAlchemy's errors
        raise SourceError(
            f"table {table}: cannot open Iceberg table {spec.table} of catalog"
            f" {spec.catalog_name!r} at {shown}: {first_line(error)}"
        ) from None


def _need_pyarrow(table: str, what: str, extra: str) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise _missing(table, what, "pyarrow", extra) from None


def _missing(table: str, what: str, package: str, extra: str) -> SourceError:
    return SourceError(
        f"table {table}: reading {what} needs {package}, which is not installed:"
        f" pip install 'lookout[{extra}]'"
    )
