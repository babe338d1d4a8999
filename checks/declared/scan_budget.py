"""A run's bytes read: its statements estimated before they run, and a source's ``max_bytes``.

Before the declared checks run, ``estimate_checks`` estimates each distinct
statement they will send (a raw check's SQL; a typed check's counts query,
compiled as the run compiles it) with ``Source.estimate_scan``, and sums them
(``checks.sources.scan.ScanTotal``). ``refusal`` words a total over the
source's ``max_bytes``: the run then ends in error and no check runs. The
samples of violating rows, read only for a check that failed, are bounded by
``limits.max_rows`` and not counted. A statement the engine cannot estimate
is counted as such and runs: the cap holds for what can be estimated.

After the checks, ``Budgeted`` wraps the source for the pinned plan and the
agent: each of their queries is estimated before it runs and refused when
it would read more than what is left of the cap.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any

from checks.automation.model import Automation
from checks.declared import buckets
from checks.declared.compile import compile_check
from checks.errors import CheckDefinitionError, QueryError, QueryRejected, SourceError
from checks.settings.limits import Limits
from checks.sources.base import Source
from checks.sources.result import Column, DataSet, QueryResult
from checks.sources.scan import ScanEstimate, ScanTotal, size_words
from checks.sql.facts import SourceFacts


def declared_statements(
    automation: Automation, source: Source, limits: Limits, slot: dt.datetime
) -> list[str]:
    """The statements the automation's declared checks send, each distinct text once.

    A typed check that does not compile is left out (the run reports its error).
    """
    found: list[str] = []
    for check in automation.checks or []:
        if check.spec is None:
            sql = check.sql or ""
        else:
            window = buckets.window(check.over, automation.timezone, slot) if check.over else None
            try:
                sql = compile_check(
                    check.spec,
                    source.catalog(),
                    source.dialect,
                    sample_rows=limits.max_rows,
                    over=check.over,
                    buckets=window,
                ).counts_sql
            except (CheckDefinitionError, SourceError):
                continue
        if sql and sql not in found:
            found.append(sql)
    return found


def estimate_checks(source: Source, statements: list[str], *, timeout_s: float) -> ScanTotal:
    """Sum ``Source.estimate_scans`` of ``statements``; one that cannot be estimated is counted.

    A statement the guard refuses or the engine cannot plan counts as not
    estimated: its check reports the error when it runs.
    """
    total = ScanTotal()
    for found in source.estimate_scans(statements, timeout_s=timeout_s) if statements else []:
        total.add(found)
    return total


def refusal(total: ScanTotal, max_bytes: int | None) -> str | None:
    """Why the run may not start, or None when ``total`` is within ``max_bytes`` (or no cap).

    The words: ``the checks would read about 12.3 GB, over this source's
    max_bytes of 10 GB; no query ran``.
    """
    if max_bytes is None or total.statements == 0 or total.bytes <= max_bytes:
        return None
    return (
        f"the checks would read about {size_words(total.bytes)}, over this source's"
        f" max_bytes of {size_words(max_bytes)}; no query ran"
    )


class Budgeted(Source):
    """``source`` with each query estimated before it runs, against what is left of a cap.

    Args:
        source: the source the queries run on.
        max_bytes: the source's cap (None: none; each query is still estimated).
        total: the run's total so far (the declared checks'); each query's
            estimate is added to it, in place.
        counted: called after each estimate is added (the report's entry is rewritten).

    """

    def __init__(
        self,
        source: Source,
        max_bytes: int | None,
        total: ScanTotal,
        counted: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__()
        self.source = source
        self.name, self.dialect = source.name, source.dialect
        self.schema, self.limits = source.schema, source.limits
        self.max_bytes = max_bytes
        self.total = total
        self._counted = counted
        self._lock = threading.Lock()

    def _load_catalog(self) -> list[DataSet]:
        return self.source.catalog()

    def _load_facts(self) -> SourceFacts | None:
        return self.source.facts()

    def table_columns(self, name: str) -> tuple[Column, ...]:
        """The wrapped source's columns of ``name`` (``Source.table_columns``)."""
        return self.source.table_columns(name)

    def describe(self, name: str, *, sample_rows: int = 5) -> dict[str, Any]:
        """The wrapped source's description (its two small queries are not counted)."""
        return self.source.describe(name, sample_rows=sample_rows)

    def _estimate(self, sql: str, *, timeout_s: float) -> ScanEstimate | None:
        return self.source._estimate(sql, timeout_s=timeout_s)

    def _execute(self, sql: str, *, max_rows: int, timeout_s: float) -> QueryResult:
        """Estimate checked ``sql``; refuse it over what is left of the cap, else run it.

        Raises:
            QueryRejected: rule ``max_bytes``: the estimate is over what is left.

        """
        try:
            found = self.source._estimate(sql, timeout_s=timeout_s)
        except QueryError:
            found = None  # not estimated: it runs, and is counted as such
        with self._lock:
            cap = self.max_bytes
            if found is not None and cap is not None and self.total.bytes + found.bytes > cap:
                left = max(0, cap - self.total.bytes)
                raise QueryRejected(
                    "max_bytes",
                    f"this query would read about {size_words(found.bytes)}, more than the"
                    f" {size_words(left)} left of this source's max_bytes of"
                    f" {size_words(cap)}; it did not run",
                )
            self.total.add(found)
        self._counted()
        return self.source._execute(sql, max_rows=max_rows, timeout_s=timeout_s)

    def close(self) -> None:
        """Leave the wrapped source open: it belongs to the process's pool."""


def scanned_entry(total: ScanTotal, max_bytes: int | None) -> dict[str, Any]:
    """The report's ``scanned``: ``ScanTotal.to_dict``, and ``max_bytes`` when there is a cap.

    ``checks.run`` adds ``"refused": true`` to a run the cap stopped.
    """
    entry = total.to_dict()
    if max_bytes is not None:
        entry["max_bytes"] = int(max_bytes)
    return entry
