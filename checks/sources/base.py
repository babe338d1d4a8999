"""What every source offers: a catalog, a description, and guarded queries.

A ``Source`` runs each query through the three layers of docs/design.md, Reading data safely:
``guard`` (layer 1) in ``query``, then ``_execute`` on a read-only connection
(layer 2) with a time limit, a row cap and a fingerprint scan (layer 3).
What it gives back is in ``checks.sources.result``; how a result's rows are
read and hashed, in ``checks.sources.fingerprint`` (both also named here).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from checks.errors import QueryError, SourceError
from checks.sources.budget import ENCODE, cut_text
from checks.sources.budget import MIN_NAME_CHARS as MIN_NAME_CHARS
from checks.sources.budget import check_width as check_width
from checks.sources.budget import names_chars as names_chars
from checks.sources.budget import shown_names as shown_names
from checks.sources.budget import to_jsonable as to_jsonable
from checks.sources.cells import FETCH_CELL_CHARS as FETCH_CELL_CHARS
from checks.sources.cells import Oversized as Oversized
from checks.sources.definitions import Definition, confine
from checks.sources.fingerprint import FETCH_BATCH_ROWS as FETCH_BATCH_ROWS
from checks.sources.fingerprint import collect as collect
from checks.sources.fingerprint import row_digest as row_digest
from checks.sources.result import Column as Column
from checks.sources.result import DataSet as DataSet
from checks.sources.result import JSONValue as JSONValue
from checks.sources.result import QueryResult as QueryResult
from checks.sources.result import ResultBudget as ResultBudget
from checks.sources.scan import ScanEstimate
from checks.sql.catalog import ForeignKeyConstraint

if TYPE_CHECKING:  # a DuckDB query process imports this module: no sqlglot, no pydantic there
    from checks.settings.limits import Limits
    from checks.sql.facts import SourceFacts


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
        self._reading: threading.Event | None = None  # set while one thread reads the catalog

    def catalog(self) -> list[DataSet]:
        """Return every table and view with columns, types and row counts, sorted by name.

        The row counts are the engine's statistics (``DataSet.row_count``): no
        table is counted to list it. Computed on first use and kept, with the
        database's facts for the guard (``facts``). A view, or a function the
        facts allow, that reads a table the source does not offer is taken out
        (``checks.sources.definitions``). One thread reads it while the others
        wait for it, with no lock held across the database's I/O; if the read
        fails, the next waiting thread reads it again.

        Raises:
            SourceError: the catalog could not be read.

        """
        while True:
            with self._catalog_lock:  # held for these few lines only, never across I/O
                if self._catalog is not None:
                    return self._catalog
                reading = self._reading
                if reading is None:
                    reading = self._reading = threading.Event()
                    break  # this thread reads it
            reading.wait()  # another thread reads it (each statement bounded: bounded.py)
        try:
            found, facts = confine(
                sorted(self._load_catalog(), key=lambda d: d.name),
                self._load_facts(),
                self._load_definitions(),
                source=self.name,
                dialect=self.dialect,
                schema=self.schema or ("public" if self.dialect == "postgres" else "main"),
            )
            with self._catalog_lock:
                self._facts, self._catalog = facts, found
                self._names = frozenset(d.name for d in found)
            return found
        finally:  # read or failed: the waiting threads go on (and try again if it failed)
            with self._catalog_lock:
                self._reading = None
            reading.set()

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
            {
                "name": name,
                "type": cut_text(c.type, cell),
                "null_count": int(totals[0]) - int(filled),
            }
            for name, c, filled in zip(names, data_set.columns, totals[1:], strict=True)
        ]
        # jsonable counts the sample's own column names; here the columns
        # shown are the description above instead.
        left = budget - len(ENCODE(columns)) + names_chars(sample.columns)
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

    def estimate_scan(self, sql: str, *, timeout_s: float | None = None) -> ScanEstimate | None:
        """Estimate what ``sql`` would read, without running it; None where the engine cannot.

        The statement is guarded first, as ``query`` does; the estimate then
        comes from the engine (``_estimate``): a plan's estimate, the tables'
        statistics. docs/engines.md, Bytes read, says what each engine gives.

        Raises:
            QueryRejected: the guard refused the SQL.
            QueryFailed: the engine could not plan it.
            QueryTimeout: planning ran past ``timeout_s`` (default ``limits.query_timeout_s``).

        """
        from checks.sql.guard import guard

        self.catalog()
        checked = guard(
            sql,
            dialect=self.dialect,
            allowed_tables=self._names,
            max_chars=self.limits.max_sql_chars,
            schema=self.schema,
            facts=self.facts(),
        )
        return self._estimate(
            checked, timeout_s=self.limits.query_timeout_s if timeout_s is None else timeout_s
        )

    def estimate_scans(
        self, statements: list[str], *, timeout_s: float | None = None
    ) -> list[ScanEstimate | None]:
        """``estimate_scan`` of each statement, in order; None for one not estimated.

        A statement the guard refuses, or the engine cannot plan, gives None
        here (its error is reported when it runs). An engine may estimate them
        together (``_estimate_many``: one connection for all).
        """
        from checks.sql.guard import guard

        self.catalog()
        checked: list[str | None] = []
        for sql in statements:
            try:
                checked.append(
                    guard(
                        sql,
                        dialect=self.dialect,
                        allowed_tables=self._names,
                        max_chars=self.limits.max_sql_chars,
                        schema=self.schema,
                        facts=self.facts(),
                    )
                )
            except QueryError:
                checked.append(None)
        limit = self.limits.query_timeout_s if timeout_s is None else timeout_s
        return self._estimate_many(checked, timeout_s=limit)

    def _estimate(self, sql: str, *, timeout_s: float) -> ScanEstimate | None:
        """Estimate what checked ``sql`` reads (engines override it); None: no estimate."""
        return None

    def _estimate_many(
        self, statements: list[str | None], *, timeout_s: float
    ) -> list[ScanEstimate | None]:
        """``_estimate`` of each checked statement (None stays None; a failure gives None)."""
        found: list[ScanEstimate | None] = []
        for sql in statements:
            try:
                found.append(None if sql is None else self._estimate(sql, timeout_s=timeout_s))
            except QueryError:
                found.append(None)
        return found

    @abstractmethod
    def _load_catalog(self) -> list[DataSet]:
        """Read the data sets from the database (unsorted)."""

    def _load_facts(self) -> SourceFacts | None:
        """Read the functions and types the database marks as safe (none by default)."""
        return None

    def _load_definitions(self) -> list[Definition]:
        """Read the source schema's own SQL functions, macros and views (none by default)."""
        return []

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

    def foreign_keys(self) -> list[ForeignKeyConstraint]:
        """The single-column foreign keys the catalog declares between its tables, as named there.

        Empty where the engine declares none or the source cannot read them.

        Raises:
            SourceError: the catalog cannot be read.

        """
        return []

    def engine_version(self) -> str:
        """The engine's name and version, as ``lookout sources check`` prints it ("DuckDB 2.0.1").

        A source that cannot read its version says its dialect and so.

        Raises:
            SourceError: the database cannot be reached.

        """
        return f"{self.dialect} (version not read)"

    def write_warnings(self) -> list[str]:
        """One sentence per grant that lets this source's role write, naming it; empty if none.

        Raises:
            SourceError: the database cannot be reached.

        """
        return []

    def reads_grants(self) -> bool:
        """Whether ``write_warnings`` reads the role's grants (False: the engine has no roles)."""
        return False

    def read_only_by(self) -> str:
        """How this source's connections are held read-only, in a few words."""
        return "every query passes the read-only guard"

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


def missing_file(path: Path) -> str:
    """Why ``path`` is not a file to open: ``does not exist`` or ``is a folder, not a file``."""
    return "is a folder, not a file" if path.is_dir() else "does not exist"
