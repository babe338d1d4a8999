"""What a source gives back: data sets and their columns, and one query's result.

``QueryResult`` holds a query's rows, its counts and its fingerprint (made by
``collect`` in ``checks.sources.fingerprint``); ``jsonable`` shows its rows
within the result budget (``checks.sources.budget``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from checks.sources.budget import ENCODE, names_chars, to_jsonable
from checks.sources.budget import JSONValue as JSONValue
from checks.sources.row_set import RowSet
from checks.sources.scan import ScanStats
from checks.sql.catalog import Column as Column
from checks.sql.catalog import DataSet as DataSet


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
        query_id: the engine's own id of the query, where it has one (Snowflake's
            query id, BigQuery's job id): its cost is read later by that id.
        bytes_processed: the bytes the engine says the query scanned, where it
            says (BigQuery's ``totalBytesProcessed``); None otherwise.
        scanned: what the engine says the statement read (``checks.sources.scan``);
            None where the engine does not report it (DuckDB, PostgreSQL, SQLite:
            their estimates come before the run, from ``Source.estimate_scan``).

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
    query_id: str | None = None
    bytes_processed: int | None = None
    scanned: ScanStats | None = None

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
            size = len(ENCODE(cells)) + 1
            if total + size > max_result_chars:
                return kept, True
            total += size
            kept.append(cells)
        return kept, False


class ResultBudget(Protocol):
    """The two limits a result's column names are shown within (``Limits`` has both)."""

    @property
    def max_cell_chars(self) -> int:
        """Longest text shown for one cell or name."""

    @property
    def max_result_chars(self) -> int:
        """JSON size of one result's sample."""
