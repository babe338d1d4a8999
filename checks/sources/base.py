"""What every source offers: a catalog, a description, and guarded queries.

A ``Source`` runs each query through the three layers of design notes §4:
``guard`` (layer 1) in ``query``, then ``_execute`` on a read-only connection
(layer 2) with a time limit, a row cap and a fingerprint scan (layer 3).
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeAlias

from checks.errors import QueryTimeout, SourceError
from checks.sources.budget import MIN_NAME_CHARS as MIN_NAME_CHARS
from checks.sources.budget import _cut
from checks.sources.budget import check_width as check_width
from checks.sources.budget import names_chars as names_chars
from checks.sources.budget import shown_names as shown_names
from checks.sources.budget import to_jsonable as to_jsonable
from checks.sources.cells import FETCH_CELL_CHARS as FETCH_CELL_CHARS
from checks.sources.cells import Oversized as Oversized
from checks.sources.row_set import RowSet, pack, row_hash

if TYPE_CHECKING:  # a DuckDB query process imports this module: no sqlglot, no pydantic there
    from checks.settings.limits import Limits
    from checks.sql.facts import SourceFacts

JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"

FETCH_BATCH_ROWS = 2_000
"""Rows fetched from the driver per round trip while streaming a result."""


@dataclass(frozen=True)
class Column:
    """One column of a data set.

    Attributes:
        name: the column's name as the database stores it.
        type: the database's own type name (``BIGINT``, ``NUMERIC(10, 2)``,
            ``TIMESTAMP WITH TIME ZONE``).
        nullable: whether the schema lets it hold NULL (no NOT NULL
            constraint); None when the source cannot tell.
    """

    name: str
    type: str
    nullable: bool | None = None


@dataclass(frozen=True)
class DataSet:
    """A table or view a source exposes; ``row_count`` is exact at catalog time."""

    name: str
    columns: tuple[Column, ...]
    row_count: int


@dataclass
class QueryResult:
    r"""The outcome of one query.

    Attributes:
        sql: the SQL as executed (the guard's regenerated text).
        columns: column names, in result order, as shown (see ``shown_names``):
            a source cuts each to ``max_cell_chars`` (ending in ``…``), and
            shorter when together they would take more than half of
            ``max_result_chars``. The fingerprint covers the full names.
        rows: the first ``max_rows`` rows as raw driver values (``Decimal``
            stays ``Decimal``, ``None`` is NULL); a cell too large to fetch is
            an ``Oversized`` (DuckDB sources).
        row_count: rows in the full result; a lower bound when ``scan_capped``.
        truncated: ``rows`` holds fewer rows than ``row_count``.
        fingerprint: equal for equal results, in any row order. Exactly:
            ``sha256(names + "\n" + str(n) + "\n" + f"{s:064x}")`` in hex, where
            ``names`` is the repr of each full column name joined by U+001F,
            ``n`` the number of rows hashed and ``s`` the sum, modulo 2**256, of
            ``row_digest(row)`` over those rows (a multiset hash: rows that tie
            under ORDER BY and come back in another order give the same value).
            The rows hashed are every row, or, when ``scan_capped``, the first
            ``Limits.fingerprint_max_rows`` in the order the database returned
            them (equal only if the query orders them). An ``Oversized`` cell
            counts by its type, size and the database's hash of the whole value.
        elapsed_ms: wall time of execution and fetching, in milliseconds.
        scan_capped: the result has more rows than ``Limits.fingerprint_max_rows``;
            the scan stopped there (at most that many + 1 rows were read), so the
            fingerprint covers only that many and ``row_count`` is a lower bound.
        row_set: the row hashes of the rows hashed for the fingerprint, and
            of ``rows`` (``checks.sources.row_set``); None when not read by
            ``collect``.
        query_key: the query's normal form's key (``checks.sql.normal_form``),
            set by ``Source.query``; None otherwise.

    """

    sql: str
    columns: list[str]
    rows: list[tuple[Any, ...]]
    row_count: int
    truncated: bool
    fingerprint: str
    elapsed_ms: float
    scan_capped: bool = False
    row_set: RowSet | None = None
    query_key: str | None = None

    @property
    def row_count_exact(self) -> bool:
        """Whether ``row_count`` is the full result's (False: it is a lower bound)."""
        return not self.scan_capped

    def jsonable(
        self, *, max_cell_chars: int, max_result_chars: int
    ) -> tuple[list[list[JSONValue]], bool]:
        """Return ``rows`` as JSON-safe values within a character budget.

        Decimals become strings (exact digits survive), dates and times ISO
        8601 strings, intervals ``str(timedelta)``, bytes ``"<N bytes>"``,
        NaN/Infinity strings. A string cell longer than ``max_cell_chars`` is cut
        to that length ending in ``…``; nested values (lists, structs) whose JSON
        is longer become that cut JSON text. Rows are kept while the JSON of the
        kept rows plus the JSON of ``columns`` (shown next to them) stays within
        ``max_result_chars`` characters.

        Returns:
            ``(rows, truncated_by_budget)``; the flag is True when rows were dropped.

        """
        kept: list[list[JSONValue]] = []
        total = 2 + names_chars(self.columns)  # the enclosing brackets, and the names
        for row in self.rows:
            cells = [to_jsonable(value, max_cell_chars) for value in row]
            size = len(json.dumps(cells, ensure_ascii=False)) + 1
            if total + size > max_result_chars:
                return kept, True
            total += size
            kept.append(cells)
        return kept, False


_REPR_TYPES = (int, float, str, bool)


_MOD = 2**256


def _fingerprint(columns: Sequence[str], row_sum: int, rows: int) -> str:
    """sha256 hex of the full column names, the row count and the sum of row hashes."""
    head = "\x1f".join(map(repr, columns))
    return hashlib.sha256(f"{head}\n{rows}\n{row_sum:064x}".encode()).hexdigest()


def row_digest(row: Sequence[Any]) -> int:
    r"""Return one row's hash in fingerprints: sha256 of its canonical text, as an integer.

    The canonical text is each value's ``_canonical`` text joined by U+001F:
    ``repr`` for int, float, str and bool, ``\N`` for NULL, ISO 8601 for
    dates and times, ``x'…'`` hex for bytes, ``str`` for decimals, intervals and
    UUIDs. Equal rows (on any engine) have equal digests.
    """
    text = "\x1f".join([_CANONICAL.get(type(value), _canonical)(value) for value in row])
    return int.from_bytes(hashlib.sha256(text.encode()).digest(), "big")


def _canonical(value: Any) -> str:
    """Canonical text of one value for fingerprints: same value, same text, every run."""
    if value is None:
        return "\\N"
    if type(value) in _REPR_TYPES:
        return repr(value)
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "x'" + bytes(value).hex() + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_canonical(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_canonical(k)}:{_canonical(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (decimal.Decimal, dt.timedelta, uuid.UUID)):
        return str(value)
    if isinstance(value, Oversized):
        return f"oversized:{value.type}:{value.size}:{value.digest}"
    return f"{type(value).__name__}:{value}"


_CANONICAL: dict[type, Callable[[Any], str]] = {
    int: repr,
    float: repr,
    str: repr,
    bool: repr,
    type(None): lambda _: "\\N",
}
"""The common types' canonical text without the checks of ``_canonical`` (same text)."""


class ResultBudget(Protocol):
    """The two limits a result's column names are shown within (``Limits`` has both)."""

    @property
    def max_cell_chars(self) -> int:
        """Longest text shown for one cell or name."""

    @property
    def max_result_chars(self) -> int:
        """JSON size of one result's sample."""


def collect(
    fetchmany: Callable[[int], Sequence[Sequence[Any]]],
    *,
    sql: str,
    columns: list[str],
    max_rows: int,
    scan_rows: int,
    started: float,
    timeout_s: float,
    limits: ResultBudget | None = None,
) -> QueryResult:
    """Stream a result in batches: hash up to ``scan_rows`` rows, keep the first ``max_rows``.

    The hashed rows' row hashes come back as the result's ``row_set`` (8 bytes
    a row: at most ``8 × scan_rows`` bytes held). Reads at most
    ``max(scan_rows, max_rows) + 1`` rows, so a result longer than the scan cap
    is known to be longer (``scan_capped``) without reading it all.
    The fingerprint covers the full column names; the result holds them as
    shown (``shown_names`` with ``limits``, default ``Limits()``).

    Raises:
        QueryFailed: the column names cannot fit the result budget even cut
            short (``check_width``); nothing is fetched.
        QueryTimeout: ``timeout_s`` seconds passed since ``started`` (a
            ``time.monotonic()`` value) before the scan ended.

    """
    if limits is None:
        from checks.settings.limits import Limits

        limits = Limits()
    shown = shown_names(
        columns, max_cell_chars=limits.max_cell_chars, max_result_chars=limits.max_result_chars
    )
    check_width(shown, max_result_chars=limits.max_result_chars)
    # Order-insensitive: the sum of per-row hashes (a multiset hash), so rows that tie
    # under ORDER BY and come back in another order do not look like changed data.
    row_sum = 0  # taken modulo 2**256 at the end: Python integers do not overflow
    kept: list[tuple[Any, ...]] = []
    hashes: list[int] = []
    seen = 0
    limit = max(scan_rows, max_rows) + 1
    while seen < limit:
        if time.monotonic() - started > timeout_s:
            raise QueryTimeout(f"the query ran past its time limit of {timeout_s:g} s")
        batch = fetchmany(min(FETCH_BATCH_ROWS, limit - seen))
        if not batch:
            break
        if seen < max_rows:
            kept.extend(tuple(row) for row in batch[: max_rows - seen])
        digests = list(map(row_digest, batch[: max(0, scan_rows - seen)]))
        row_sum += sum(digests)
        hashes.extend([row_hash(d) for d in digests])
        seen += len(batch)
    row_sum %= _MOD
    capped = seen > scan_rows
    sample = hashes[: len(kept)] + [row_hash(row_digest(r)) for r in kept[len(hashes) :]]
    return QueryResult(
        sql=sql,
        columns=shown,
        rows=kept,
        row_count=seen,
        truncated=len(kept) < seen,
        fingerprint=_fingerprint(columns, row_sum, min(seen, scan_rows)),
        elapsed_ms=(time.monotonic() - started) * 1000,
        scan_capped=capped,
        row_set=RowSet(pack(hashes, sort=True), pack(sample, sort=False), capped),
    )


class Source(ABC):
    """A database Lookout reads, read-only, through the three safety layers.

    Subclasses set ``name``, ``dialect`` (sqlglot name), ``schema`` (the only
    schema a qualified table name may use) and ``limits``, and implement
    ``_load_catalog``, ``_execute`` and ``close``. Safe to share between threads.
    """

    name: str
    dialect: str
    schema: str | None
    limits: Limits

    def __init__(self) -> None:
        self._catalog: list[DataSet] | None = None
        self._facts: SourceFacts | None = None
        self._names: frozenset[str] = frozenset()
        self._catalog_lock = threading.Lock()

    def catalog(self) -> list[DataSet]:
        """Return every table and view with columns, types and row counts, sorted by name.

        Computed on first use (one ``count(*)`` per table) and kept, with the
        database's facts for the guard (``facts``).

        Raises:
            SourceError: the catalog could not be read.

        """
        with self._catalog_lock:
            if self._catalog is None:
                found = sorted(self._load_catalog(), key=lambda d: d.name)
                self._facts = self._load_facts()
                self._catalog = found
                self._names = frozenset(d.name for d in found)
            return self._catalog

    def facts(self) -> SourceFacts | None:
        """What the database allows queries to call and cast to, read with the catalog.

        None for engines that offer no such facts (the guard's deny lists apply).

        Raises:
            SourceError: the catalog could not be read.

        """
        self.catalog()
        return self._facts

    def table_columns(self, name: str) -> tuple[Column, ...]:
        """Return one data set's columns as the database has them now, not as first cataloged.

        ``name`` is a data set of the catalog. A source that cannot read them
        afresh returns the catalog's. Used by ``schema`` checks, which must
        see a column dropped since the process started.

        Raises:
            SourceError: no data set has that name, or the columns cannot be read.

        """
        for data_set in self.catalog():
            if data_set.name == name:
                return self._read_columns(name) or data_set.columns
        raise SourceError(f"source {self.name} has no data set {name!r}")

    def _read_columns(self, name: str) -> tuple[Column, ...] | None:
        """Read one data set's columns from the database; None when the source cannot."""
        return None

    def describe(self, name: str, *, sample_rows: int = 5) -> dict[str, Any]:
        """Describe one data set.

        Returns ``{name, columns:[{name,type,null_count}], row_count, sample_rows}``.

        ``name`` matches case-insensitively; ``sample_rows`` are the first rows
        as JSON-safe lists (see ``QueryResult.jsonable``), in column order.
        Column names are shown as a result shows them (``shown_names``), types
        cut to ``max_cell_chars``, and the sample rows get what is left of
        ``max_result_chars`` once the columns are counted. Both queries run
        through ``query`` (all three layers).

        Raises:
            SourceError: no data set has that name.
            QueryError: a describing query failed or timed out.

        """
        found = [d for d in self.catalog() if d.name.lower() == name.lower()]
        if not found:
            known = ", ".join(d.name for d in self.catalog())
            raise SourceError(f"source {self.name} has no data set {name!r}; it has: {known}")
        from sqlglot import exp

        data_set = found[0]
        table = exp.Table(this=exp.to_identifier(data_set.name, quoted=True))
        # Short aliases: the counts' own names (count("…")) need not fill the result budget.
        counts = [exp.alias_(exp.Count(this=exp.Star()), "n")] + [
            exp.alias_(exp.Count(this=exp.column(c.name, quoted=True)), f"n{i}")
            for i, c in enumerate(data_set.columns)
        ]
        totals = self.query(
            exp.select(*counts).from_(table).sql(dialect=self.dialect), max_rows=1
        ).rows[0]
        sample = self.query(
            exp.select("*").from_(table).limit(sample_rows).sql(dialect=self.dialect),
            max_rows=sample_rows,
        )
        cell, budget = self.limits.max_cell_chars, self.limits.max_result_chars
        names = shown_names(
            [c.name for c in data_set.columns], max_cell_chars=cell, max_result_chars=budget
        )
        columns: list[dict[str, JSONValue]] = [
            {"name": name, "type": _cut(c.type, cell), "null_count": int(totals[0]) - int(filled)}
            for name, c, filled in zip(names, data_set.columns, totals[1:], strict=True)
        ]
        # jsonable counts the sample's own column names; here the columns
        # shown are the description above instead.
        left = budget - len(json.dumps(columns, ensure_ascii=False)) + names_chars(sample.columns)
        rows, _ = sample.jsonable(max_cell_chars=cell, max_result_chars=left)
        return {
            "name": data_set.name,
            "columns": columns,
            "row_count": int(totals[0]),
            "sample_rows": rows,
        }

    def query(
        self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None
    ) -> QueryResult:
        """Guard ``sql`` and run it read-only.

        Args:
            sql: one query in this source's dialect.
            max_rows: rows to keep in the result; default ``limits.max_rows``.
            timeout_s: time limit in seconds; default ``limits.query_timeout_s``.

        Raises:
            QueryRejected: the guard refused the SQL (rule and reason attached).
            QueryFailed: the database raised an error.
            QueryTimeout: the query ran past its time limit and was interrupted.

        """
        from checks.sql.guard import guard
        from checks.sql.normal_form import query_key

        self.catalog()
        checked = guard(
            sql,
            dialect=self.dialect,
            allowed_tables=self._names,
            max_chars=self.limits.max_sql_chars,
            schema=self.schema,
            facts=self.facts(),
        )
        result = self._execute(
            checked,
            max_rows=self.limits.max_rows if max_rows is None else max_rows,
            timeout_s=self.limits.query_timeout_s if timeout_s is None else timeout_s,
        )
        result.query_key = query_key(sql, self.dialect)
        return result

    @abstractmethod
    def _load_catalog(self) -> list[DataSet]:
        """Read the data sets from the database (unsorted)."""

    def _load_facts(self) -> SourceFacts | None:
        """Read the functions and types the database marks as safe (none by default)."""
        return None

    @abstractmethod
    def _execute(self, sql: str, *, max_rows: int, timeout_s: float) -> QueryResult:
        """Run ``sql`` on a read-only connection WITHOUT the guard (layers 2 and 3).

        Used by ``query`` and by tests proving the connection holds on its own.
        Exactly one statement runs per call; the scan stops at
        ``limits.fingerprint_max_rows``.

        Raises:
            QueryFailed: the database or the connection's own checks refused it.
            QueryTimeout: ``timeout_s`` seconds passed; the query was interrupted.

        """

    @abstractmethod
    def close(self) -> None:
        """Release the connection(s); the source cannot be used afterwards."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def first_line(error: BaseException) -> str:
    """Return the first line of an error's message (drivers add context lines)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
