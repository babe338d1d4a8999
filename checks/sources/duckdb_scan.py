"""DuckDB's estimate of what a statement reads: the tables' statistics and column widths.

DuckDB stores tables by column and reads only the columns a query names, so
the estimate of one checked statement is, for each table it reads, the rows
``duckdb_tables().estimated_size`` gives times the widths of the columns the
statement names (all of them for a ``*`` other than ``count(*)``), summed.
Widths are DuckDB's in-memory sizes (``INTEGER`` 4 bytes, ``BIGINT`` and
``DOUBLE`` 8, ``DECIMAL`` 2 to 16 by precision, a text or nested value the
16 bytes of its header): the uncompressed data, which is what the query
processes, not the (compressed) bytes on disk. A view counts the rows the
catalog counted for it. No statement runs but the one ``SIZES_SQL``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

import sqlglot
from sqlglot import exp

from checks.sources.result import DataSet
from checks.sources.scan import ScanEstimate
from checks.sql.tables import fold, tables_read

SIZES_SQL = (
    "SELECT table_name, estimated_size FROM duckdb_tables()"
    " WHERE schema_name = 'main' AND database_name = current_database()"
)
"""Each table's row count as DuckDB's statistics hold it (no table is scanned)."""

SIZES_FRESH_S = 2.0
"""Seconds one read of ``SIZES_SQL`` serves the estimates that follow it."""

HOW = "statistics (rows × column widths)"
"""``ScanEstimate.how`` of a DuckDB estimate."""

TEXT_WIDTH = 16
"""Bytes counted per text, blob or nested value: DuckDB's value header (``string_t``)."""

_WIDTHS = {
    "BOOLEAN": 1, "TINYINT": 1, "UTINYINT": 1, "SMALLINT": 2, "USMALLINT": 2,
    "INTEGER": 4, "UINTEGER": 4, "BIGINT": 8, "UBIGINT": 8, "HUGEINT": 16,
    "UHUGEINT": 16, "FLOAT": 4, "REAL": 4, "DOUBLE": 8, "DATE": 4, "TIME": 8,
    "TIMESTAMP": 8, "TIMESTAMP WITH TIME ZONE": 8, "TIMESTAMP_S": 8, "TIMESTAMP_MS": 8,
    "TIMESTAMP_NS": 8, "TIME WITH TIME ZONE": 8, "INTERVAL": 16, "UUID": 16,
}  # fmt: skip
_DECIMAL = re.compile(r"DECIMAL\((\d+)")


def type_width(type_name: str) -> int:
    """Bytes one value of DuckDB type ``type_name`` takes in memory (see the module docstring)."""
    upper = type_name.upper()
    if upper in _WIDTHS:
        return _WIDTHS[upper]
    found = _DECIMAL.match(upper)
    if found:
        precision = int(found.group(1))
        return 2 if precision <= 4 else 4 if precision <= 9 else 8 if precision <= 18 else 16
    return TEXT_WIDTH


def estimate_duckdb(
    sql: str, catalog: Sequence[DataSet], sizes: Mapping[str, int]
) -> ScanEstimate | None:
    """Estimate what checked ``sql`` reads from ``catalog``'s tables.

    Args:
        sql: a statement the guard passed, in DuckDB's SQL.
        catalog: the source's data sets (their columns and types; a view's row count).
        sizes: table name → rows, from ``SIZES_SQL``.

    Returns:
        The estimate, or None when ``sql`` does not parse.

    """
    read = _read(sql)
    if read is None:
        return None
    tables, named, every = read
    by_fold = {fold(d.name, "duckdb"): d for d in catalog}
    rows = width_bytes = 0
    for name in tables:
        data_set = by_fold.get(name)
        if data_set is None:
            continue
        count = sizes.get(data_set.name, data_set.row_count) or 0  # row counts are estimates
        columns = [c for c in data_set.columns if every or c.name.lower() in named]
        rows += count
        width_bytes += count * sum(type_width(c.type) for c in columns)
    return ScanEstimate(bytes=width_bytes, rows=rows, how=HOW)


@functools.lru_cache(maxsize=1024)
def _read(sql: str) -> tuple[tuple[str, ...], frozenset[str], bool] | None:
    """What ``sql`` reads: its tables (folded), the columns it names, whether it reads all.

    The column names are in lower case; all are read for a ``*`` other than
    ``count(*)``. None when ``sql`` does not parse. Kept per process: a
    scheduled automation sends the same texts every run.
    """
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except Exception:  # sqlglot's errors: no estimate
        return None
    named = frozenset(c.name.lower() for c in tree.find_all(exp.Column))
    every = any(not isinstance(s.parent, exp.Count) for s in tree.find_all(exp.Star))
    return tuple(tables_read(tree, "duckdb")), named, every
