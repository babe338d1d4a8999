"""Typed checks compiled to SQL: sqlglot trees in the source's dialect, never string formatting.

``compile_check`` turns one typed check into two queries over its *scope* (the
table after ``filter:``):

- ``counts_sql``: one row of counts, every one the check reports, in one pass
  (``rows_in_scope`` first). Counts use ``count(CASE WHEN … THEN 1 END)``,
  which is 0, never NULL, over no rows, and runs in every dialect.
- ``sample_sql``: a bounded, ordered sample of the violating rows (or, for
  value kinds, the violating values with how many rows hold each), run only
  when there are violations; ``None`` for kinds with no rows to show.

Each kind builds its own two queries (``Kind.sql``, in ``checks/kinds/``) on
its scope (``checks.declared.scope_sql``). Identifiers are the catalog's own
names (a table or column written in another case is resolved to the one the
database has), quoted; values are literals
built by sqlglot; the filter is parsed as a condition in the dialect, so it
cannot close the query and open another. Both queries then pass the SQL guard
and the read-only connection like any other (``Source.query``).

A compiled check is kept per process (``CACHE_SIZE`` of them, least recently
used dropped first): a scheduled automation compiles the same checks on every
run. The key is everything the SQL is made of: the check as written (its
kind and the ``repr`` of every field, so ``1``, ``1.0``, ``True`` and
``Decimal('1.00')`` stay apart), the dialect, the sample's size, ``over:``
and the run's buckets, and the name and columns (names, types, nullability)
of each data set the check's table names could resolve to. A column added,
dropped or retyped is a new key; a check that does not compile is never kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

from checks.automation.time_buckets import Over
from checks.declared.buckets import Window
from checks.declared.scope_sql import ScopeSql
from checks.declared.segment_sql import SegmentValues
from checks.errors import CheckDefinitionError
from checks.kinds.base import Compiled as Compiled
from checks.kinds.base import Kind
from checks.sources.base import DataSet

CACHE_SIZE = 1024
"""Compiled checks kept per process (two SQL texts each)."""


def compile_check(
    spec: Kind,
    catalog: Sequence[DataSet],
    dialect: str,
    *,
    sample_rows: int,
    over: Over | None = None,
    buckets: Window | None = None,
    failing: Sequence[SegmentValues] | None = None,
) -> Compiled:
    """Compile a typed check against a source's catalog.

    With ``by:``, the counts are grouped per segment too (``checks.declared.segment_sql``);
    ``failing`` (the failing segments' values) makes the sample read only those.

    With ``over`` and its ``buckets`` (``checks.declared.buckets``), the counts
    query reads the window's rows only and returns one row per bucket that has
    rows, its local start first (``bucket``), oldest first; the sample reads
    the tested bucket's rows only.

    Raises:
        CheckDefinitionError: an unknown table or column (with the closest
            name), a filter that does not parse, or an ``over.column`` that is
            not a time column; ``field`` is under the check (``missing.column``).

    """
    tables = _tables_named(spec, catalog)
    key = (_key(spec, tables, dialect, sample_rows, over, buckets), repr(failing))
    with _kept_lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
            return found
    try:
        compiled = ScopeSql(spec, tables, dialect, sample_rows, over, buckets, failing).compile()
    except CheckDefinitionError:
        # The same error, worded against the whole catalog (its "did you mean" hint).
        return ScopeSql(spec, catalog, dialect, sample_rows, over, buckets, failing).compile()
    with _kept_lock:
        _kept[key] = compiled
        if len(_kept) > CACHE_SIZE:
            _kept.popitem(last=False)
    return compiled


_kept: OrderedDict[Hashable, Compiled] = OrderedDict()
_kept_lock = threading.Lock()


def _tables_named(spec: Kind, catalog: Sequence[DataSet]) -> list[DataSet]:
    """The data sets ``resolve_table`` could pick for the check's tables: same name but for case.

    A compile that succeeds reads nothing else of the catalog, so it gives the
    same SQL over these as over the whole catalog.
    """
    names = {table.lower() for table in spec.tables_read()}
    return [d for d in catalog if d.name.lower() in names]


def _key(
    spec: Kind,
    tables: Sequence[DataSet],
    dialect: str,
    sample_rows: int,
    over: Over | None,
    buckets: Window | None,
) -> Hashable:
    """Everything a compiled check is made of (see the module docstring), as a dictionary key."""
    read = tuple((d.name, d.columns) for d in tables)  # not the row counts: never read
    return (type(spec), repr(spec), read, dialect, sample_rows, repr(over), repr(buckets))
