"""Building an eval case's data into its own DuckDB file, exposed as the source ``case``.

``build_database`` writes a case's inline tables, then runs its ``setup:``
script, into ``<cache_dir>/eval/<id>-<hash>.duckdb`` (once: the name holds a
hash of the data). ``case_settings`` exposes that file as the source ``case``
so that every run takes the real read-only path (``checks.sources``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import uuid
from pathlib import Path

import duckdb

from checks.errors import ConfigError
from checks.eval.suite import CASE_SOURCE, Case, SuiteError
from checks.settings.config import Settings
from checks.settings.sources import DuckDBSource

BUILD_VERSION = 1
"""Bumped when the way case data is built changes, so old cache files are not reused."""

_BUILD_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


def quote(identifier: str) -> str:
    """Quote a DuckDB identifier (any text)."""
    return '"' + identifier.replace('"', '""') + '"'


def data_hash(case: Case) -> str:
    """Return a short hex hash of everything that goes into a case's database."""
    payload = {
        "version": BUILD_VERSION,
        "tables": {name: t.model_dump() for name, t in case.tables.items()},
        "setup": case.setup,
    }
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def build_database(case: Case, cache_dir: str | Path) -> Path:
    """Build a case's tables and setup script into a DuckDB file; return its path.

    The file is ``<cache_dir>/eval/<id>-<hash>.duckdb`` and is reused while the
    data is unchanged. It is written under a temporary name and renamed into
    place, so concurrent builders are safe. The build connection has external
    access off: a setup script can neither read nor write other files.

    Raises:
        SuiteError: a row does not fit its column types, or the setup script
            fails; located at the table or ``setup`` line of the case.
    """
    folder = Path(cache_dir) / "eval"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{case.id}-{data_hash(case)}.duckdb"
    if target.is_file():
        return target
    scratch = folder / f".{target.stem}-{uuid.uuid4().hex[:8]}.duckdb"
    try:
        conn = duckdb.connect(str(scratch), config=_BUILD_CONFIG)
        try:
            _fill(conn, case)
            conn.execute("CHECKPOINT")
        finally:
            conn.close()
        os.replace(scratch, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            scratch.unlink()
        with contextlib.suppress(FileNotFoundError):
            Path(f"{scratch}.wal").unlink()
    return target


def _fill(conn: duckdb.DuckDBPyConnection, case: Case) -> None:
    def fail(what: str, error: duckdb.Error) -> SuiteError:
        first = str(error).strip().splitlines()[0]
        line = case.data_lines.get(what, case.line)
        where = "setup" if what == "setup" else f"tables.{what}"
        return SuiteError([ConfigError(first, path=case.path, line=line, field=where)])

    for name, table in case.tables.items():
        columns = ", ".join(f"{quote(c)} {t}" for c, t in table.columns.items())
        try:
            conn.execute(f"CREATE TABLE {quote(name)} ({columns})")
            if table.rows:
                marks = ", ".join("?" for _ in table.columns)
                conn.executemany(f"INSERT INTO {quote(name)} VALUES ({marks})", table.rows)
        except duckdb.Error as error:
            raise fail(name, error) from None
    if case.setup and case.setup.strip():
        try:
            conn.execute(case.setup)
        except duckdb.Error as error:
            raise fail("setup", error) from None


def case_settings(base: Settings, database: Path) -> Settings:
    """Return ``base`` with one source, ``case``, reading ``database`` read-only."""
    source = DuckDBSource(type="duckdb", database=str(database))
    return base.model_copy(update={"sources": {CASE_SOURCE: source}})
