"""One checked query on a DuckDB query-time connection: one SELECT, its cells measured, timed.

``run_query`` applies layers 2 and 3 to a query the guard let through: DuckDB's
own parser must find exactly one SELECT (``one_select``); binding it gives the
result's names and types without running it, and a result with variable-size
columns runs wrapped so that no cell above ``Limits.fetch_cell_chars`` reaches
Python whole (``checks.sources.cells``); the process's watchdog interrupts the
cursor at the time limit; the rows are streamed and hashed by ``collect``.

A scheduled automation sends the same statements on every run, so a query
process keeps what parsing and binding found per query text (``Prepared``):
the statement it runs (the query's own or its wrap, parsed) and the result's
names and how its cells are fetched. Asked again, the query only executes.
That is exact for the connection's life: its names and types depend on the text and the
catalog, and a read-only connection holds the file's lock, so no process can
change the catalog under it (DuckDB refuses a writer), nor can a SELECT.

The queries of one ``Prepared`` also run on one kept cursor: a cursor is a
DuckDB connection of its own, and opening one per query cost about 30 µs of
CPU, 100 µs once the process had paused. A cursor is kept only after a
result read to its end (nothing of it is left open), never after one cut
short, a failure or a timeout. Its interrupt reaches only the query it was
armed for (``_Interrupt``): one due just as a query ends never stops the next.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from checks.errors import QueryFailed, QueryTimeout, first_line
from checks.sources.cells import CellFetch, duckdb_weight
from checks.sources.duckdb_connection import QueryLimits, memory_message
from checks.sources.fingerprint import collect
from checks.sources.result import QueryResult
from checks.sources.watchdog import after

if TYPE_CHECKING:
    import duckdb

PREPARED_KEPT = 512
"""Query texts a connection keeps parsed and bound (``Prepared``), least recently used dropped."""


def one_select(cur: duckdb.DuckDBPyConnection, sql: str) -> duckdb.Statement:
    """Return the one SELECT statement ``sql`` holds (layer 2: DuckDB's own parser).

    Raises:
        QueryFailed: several statements, or one that is not a SELECT.

    """
    import duckdb

    statements = cur.extract_statements(sql)
    if len(statements) != 1:
        raise QueryFailed(f"exactly one statement per query; got {len(statements)}")
    if statements[0].type != duckdb.StatementType.SELECT:
        raise QueryFailed(f"only SELECT statements run here, not {statements[0].type.name}")
    return statements[0]


@dataclass(frozen=True)
class Ready:
    """A checked query as its connection runs it, from one parse and bind.

    Attributes:
        columns: the result's full column names, in order.
        statement: the parsed statement to execute: the query's own, or its
            cell-measuring wrap when ``cell_fetch`` is set.
        cell_fetch: reads the wrapped rows back in the query's own shape; None when
            the rows are fetched as they are.

    """

    columns: list[str]
    statement: duckdb.Statement
    cell_fetch: CellFetch | None


class Prepared:
    """One connection's checked queries, parsed and bound once (see the module docstring).

    Keyed on the query text, whether its cells are measured and the two cell
    limits the wrap is made of; at most ``kept`` (least recently used dropped).
    Only a query that bound, ran and had its planned width is kept. Also holds
    the cursor the connection's queries run on (``cursor``). Not thread-safe:
    a query process serves one query at a time.
    """

    def __init__(self, kept: int = PREPARED_KEPT) -> None:
        self.kept = kept
        self._ready: OrderedDict[tuple[str, bool, int, int], Ready] = OrderedDict()
        self._cursor: duckdb.DuckDBPyConnection | None = None

    def cursor(self, conn: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
        """The kept cursor of ``conn`` (this object's one connection), opened on first use."""
        if self._cursor is None:
            self._cursor = conn.cursor()
        return self._cursor

    def drop_cursor(self) -> None:
        """Close the kept cursor, if any: the next query opens a fresh one."""
        cur, self._cursor = self._cursor, None
        if cur is not None:
            cur.close()

    def get(self, key: tuple[str, bool, int, int]) -> Ready | None:
        """The ``Ready`` kept for ``key``, or None."""
        ready = self._ready.get(key)
        if ready is not None:
            self._ready.move_to_end(key)
        return ready

    def keep(self, key: tuple[str, bool, int, int], ready: Ready) -> None:
        """Keep ``ready`` for ``key``, dropping the least recently used past ``kept``."""
        self._ready[key] = ready
        while len(self._ready) > self.kept:
            self._ready.popitem(last=False)

    def __len__(self) -> int:
        return len(self._ready)


class _Interrupt:
    """Interrupts one query's cursor, only until that query has ended (``end``).

    The watchdog may start an action just as its block ends; on a kept cursor
    a late interrupt would stop the next query. ``end`` waits for an interrupt
    under way, and none follows it. (DuckDB clears an interrupt that lands
    between queries when the next one starts.)
    """

    def __init__(self, cur: duckdb.DuckDBPyConnection) -> None:
        self._cur = cur
        self._lock = threading.Lock()
        self._live = True

    def __call__(self) -> None:
        with self._lock:
            if self._live:
                self._cur.interrupt()

    def end(self) -> None:
        """The query has ended: a later call does nothing."""
        with self._lock:
            self._live = False


def _bind(
    cur: duckdb.DuckDBPyConnection,
    statement: duckdb.Statement,
    sql: str,
    limits: QueryLimits,
    measure_cells: bool,
) -> Ready:
    """Bind ``statement`` (names and types, nothing runs) and say how its cells are fetched."""
    bound = cur.sql(statement)  # binds the parsed statement: no second parse
    columns = list(bound.columns)
    cell_fetch = CellFetch(
        [str(t) for t in bound.types],
        [duckdb_weight(t) for t in bound.types],
        fetch_chars=max(limits.fetch_cell_chars, limits.max_cell_chars),
        head_chars=limits.max_cell_chars,
    )
    if cell_fetch.needed and measure_cells:
        return Ready(columns, one_select(cur, cell_fetch.wrap(sql)), cell_fetch)
    return Ready(columns, statement, None)


def run_query(
    conn: duckdb.DuckDBPyConnection,
    sql: str,
    *,
    max_rows: int,
    timeout_s: float,
    limits: QueryLimits,
    measure_cells: bool = True,
    prepared: Prepared | None = None,
) -> QueryResult:
    """Run checked ``sql`` on ``conn`` with the watchdog and cell measuring (layers 2 and 3).

    ``measure_cells`` False fetches every cell whole: only for the catalog's
    own queries (names and type names), never for a query from a check or the
    agent. ``prepared`` (this connection's, see ``Prepared``) answers the
    parse and bind of a text run before, and lends its kept cursor; None
    parses and binds every time, on a cursor of its own.

    Raises:
        QueryFailed: DuckDB refused or failed the query, or it ran out of memory.
        QueryTimeout: DuckDB saw the interrupt at ``timeout_s``.

    """
    import duckdb

    cur = prepared.cursor(conn) if prepared is not None else conn.cursor()
    stop = _Interrupt(cur)
    read_to_end = False
    started = time.monotonic()
    key = (sql, measure_cells, limits.fetch_cell_chars, limits.max_cell_chars)
    try:
        ready = prepared.get(key) if prepared is not None else None
        statement = ready.statement if ready is not None else one_select(cur, sql)
        # the watchdog covers binding, running and every fetch, up to the last row
        with after(timeout_s, stop):
            if ready is None:
                ready = _bind(cur, statement, sql, limits, measure_cells)
                cur.execute(ready.statement)
                if (
                    ready.cell_fetch is not None
                    and len(cur.description or []) != ready.cell_fetch.width
                ):
                    raise QueryFailed("the query could not be wrapped to limit its cells")
                if prepared is not None:
                    prepared.keep(key, ready)
            else:
                cur.execute(ready.statement)
            fetch: Callable[[int], Sequence[Sequence[Any]]] = cur.fetchmany
            if ready.cell_fetch is not None:
                fetch = ready.cell_fetch.reader(cur.fetchmany)
            result = collect(
                fetch,
                sql=sql,
                columns=ready.columns,
                max_rows=max_rows,
                scan_rows=limits.fingerprint_max_rows,
                started=started,
                timeout_s=timeout_s,
                limits=limits,
            )
        # a result not scan-capped was fetched until its end: nothing of it is left open
        read_to_end = not result.scan_capped
        return result
    except duckdb.InterruptException:
        raise QueryTimeout(f"the query ran past its time limit of {timeout_s:g} s") from None
    except (duckdb.OutOfMemoryException, MemoryError):
        raise QueryFailed(memory_message(limits)) from None
    except duckdb.Error as error:
        raise QueryFailed(first_line(error)) from None
    finally:
        stop.end()
        if prepared is None:
            cur.close()
        elif not read_to_end:  # cut short, failed or interrupted: the next query starts afresh
            prepared.drop_cursor()
