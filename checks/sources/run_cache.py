"""One run's view of a source: identical statements run once, their result shared.

A run's declared checks often ask the same thing twice (copies of a check, a
typed check and a raw one over the same condition). ``RunCache`` wraps the
open source for the length of one run: every query still passes the guard,
and the guard's regenerated text (sqlglot's normal form of the statement:
case, spacing and quoting made uniform) together with the number of rows to
keep is the key. The first query with a key runs; the next ones get a copy
of its result, or the same error, without running again. Each check is still
evaluated and reported on its own.

The catalog, the guard's facts and fresh column lists come from the wrapped
source (read once per process there); closing the view leaves the source open.
"""

from __future__ import annotations

import dataclasses
import threading

from checks.errors import QueryFailed, QueryTimeout
from checks.sources.base import Source
from checks.sources.result import Column, DataSet, QueryResult
from checks.sources.scan import ScanEstimate
from checks.sql.facts import SourceFacts


class RunCache(Source):
    """``source`` seen by one run; safe to share between the run's threads.

    Attributes:
        source: the open source every distinct statement runs on.
        executions: statements this view sent to ``source`` (identical ones once).

    """

    def __init__(self, source: Source) -> None:
        super().__init__()
        self.source = source
        self.name, self.dialect = source.name, source.dialect
        self.schema, self.limits = source.schema, source.limits
        self.executions = 0
        self._done: dict[tuple[str, int], QueryResult | QueryFailed | QueryTimeout] = {}
        self._running: dict[tuple[str, int], threading.Event] = {}
        self._lock = threading.Lock()

    def _load_catalog(self) -> list[DataSet]:
        return self.source.catalog()

    def _load_facts(self) -> SourceFacts | None:
        return self.source.facts()

    def table_columns(self, name: str) -> tuple[Column, ...]:
        """The wrapped source's columns of ``name``, read afresh (``Source.table_columns``)."""
        return self.source.table_columns(name)

    def _estimate(self, sql: str, *, timeout_s: float) -> ScanEstimate | None:
        return self.source._estimate(sql, timeout_s=timeout_s)

    def _execute(self, sql: str, *, max_rows: int, timeout_s: float) -> QueryResult:
        key = (sql, max_rows)
        while True:
            with self._lock:
                if key in self._done:
                    return _shared(self._done[key])
                running = self._running.get(key)
                if running is None:
                    self._running[key] = threading.Event()
                    self.executions += 1
                    break
            running.wait()  # the same statement is running for another check: its answer serves
        done: QueryResult | QueryFailed | QueryTimeout | None = None
        try:
            done = self.source._execute(sql, max_rows=max_rows, timeout_s=timeout_s)
        except (QueryFailed, QueryTimeout) as error:
            done = error
        finally:  # any other error (the source itself failing) is not kept: the next one tries
            with self._lock:
                if done is not None:
                    self._done[key] = done
                self._running.pop(key).set()
        assert done is not None
        return _shared(done)

    def close(self) -> None:
        """Forget the results; the wrapped source stays open (the run does not own it)."""
        with self._lock:
            self._done.clear()


def _shared(done: QueryResult | QueryFailed | QueryTimeout) -> QueryResult:
    """A copy of a stored result (its own list of rows), or its error raised again."""
    if isinstance(done, QueryFailed | QueryTimeout):
        raise type(done)(*done.args)
    return dataclasses.replace(done, rows=list(done.rows), columns=list(done.columns))
