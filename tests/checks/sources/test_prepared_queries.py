"""A query process parses and binds each query text once, and answers exactly as before."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from checks.errors import QueryFailed, QueryTimeout
from checks.settings.limits import Limits
from checks.sources import DuckDBQuerySource
from checks.sources import duckdb_query as dq
from checks.sources.base import Oversized, QueryResult
from checks.sources.duckdb_connection import QueryLimits, open_connection
from checks.sources.duckdb_query import Prepared, run_query

# Text, lists, structs, an oversized cell, and fixed-size columns only (no wrap).
QUERIES = [
    "SELECT id, name, tags FROM t ORDER BY id",
    "SELECT id, {'a': name, 'b': [id]} AS st FROM t ORDER BY id DESC",
    "SELECT id, repeat('x', 20000) || id AS big FROM t ORDER BY id",
    "SELECT count(*) AS n, sum(id) AS s FROM t",
    "SELECT name, count(*) AS n FROM t GROUP BY name ORDER BY name",
]
SLOW = "SELECT count(*) FROM range(2000000000) a, range(10) b WHERE a.range * b.range = -1"


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = tmp_path_factory.mktemp("prepared") / "t.duckdb"
    with duckdb.connect(str(found)) as conn:
        conn.execute(
            "CREATE TABLE t AS SELECT range AS id, 'n' || (range % 3) AS name,"
            " [range, range + 1] AS tags FROM range(7)"
        )
    return found


@pytest.fixture
def conn(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = open_connection(str(path), QueryLimits.of(Limits()))
    yield connection
    connection.close()


def _same(a: QueryResult, b: QueryResult) -> None:
    assert (a.sql, a.columns, a.rows, a.row_count) == (b.sql, b.columns, b.rows, b.row_count)
    assert (a.truncated, a.fingerprint, a.scan_capped, a.row_set) == (
        b.truncated,
        b.fingerprint,
        b.scan_capped,
        b.row_set,
    )


def test_a_kept_query_gives_what_a_fresh_parse_and_bind_gives(
    conn: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = QueryLimits.of(Limits())
    binds: list[str] = []
    real_bind = dq._bind

    def counted(cur: Any, statement: Any, sql: str, *rest: Any) -> dq.Ready:
        binds.append(sql)
        return real_bind(cur, statement, sql, *rest)

    monkeypatch.setattr(dq, "_bind", counted)
    prepared = Prepared()
    for _ in range(3):
        for sql in QUERIES:
            for max_rows in (2, 50):
                kept = run_query(
                    conn, sql, max_rows=max_rows, timeout_s=30, limits=limits, prepared=prepared
                )
                fresh = run_query(conn, sql, max_rows=max_rows, timeout_s=30, limits=limits)
                _same(kept, fresh)
    # each text bound once with the kept answers (max_rows is not part of them), and
    # every time without
    assert sorted(set(binds)) == sorted(QUERIES)
    assert len(binds) == len(QUERIES) + 3 * 2 * len(QUERIES)
    assert len(prepared) == len(QUERIES)
    big = run_query(conn, QUERIES[2], max_rows=5, timeout_s=30, limits=limits, prepared=prepared)
    assert isinstance(big.rows[0][1], Oversized) and big.rows[0][1].size == 20001


def test_catalog_queries_and_checks_queries_are_kept_apart(
    conn: duckdb.DuckDBPyConnection,
) -> None:
    limits = QueryLimits.of(Limits())
    prepared = Prepared()
    sql = QUERIES[2]
    measured = run_query(conn, sql, max_rows=5, timeout_s=30, limits=limits, prepared=prepared)
    whole = run_query(
        conn, sql, max_rows=5, timeout_s=30, limits=limits, prepared=prepared, measure_cells=False
    )
    assert isinstance(measured.rows[0][1], Oversized)
    assert whole.rows[0][1] == "x" * 20000 + "0"
    assert len(prepared) == 2


def test_a_query_that_fails_is_not_kept_and_fails_again(
    conn: duckdb.DuckDBPyConnection,
) -> None:
    limits = QueryLimits.of(Limits())
    prepared = Prepared()
    for _ in range(2):
        with pytest.raises(QueryFailed, match="nope"):
            run_query(conn, "SELECT nope FROM t", max_rows=5, timeout_s=30, limits=limits,
                      prepared=prepared)  # fmt: skip
        with pytest.raises(QueryFailed, match="only SELECT"):
            run_query(conn, "PRAGMA version", max_rows=5, timeout_s=30, limits=limits,
                      prepared=prepared)  # fmt: skip
    assert len(prepared) == 0


@pytest.mark.slow
def test_a_kept_query_still_stops_at_its_time_limit(conn: duckdb.DuckDBPyConnection) -> None:
    limits = QueryLimits.of(Limits())
    prepared = Prepared()
    with pytest.raises(QueryTimeout, match=r"time limit of 0\.5 s"):
        run_query(conn, SLOW, max_rows=5, timeout_s=0.5, limits=limits, prepared=prepared)
    assert len(prepared) == 0  # it never ran to its end: not kept
    cur = conn.cursor()
    key = (SLOW, True, limits.fetch_cell_chars, limits.max_cell_chars)
    prepared.keep(key, dq._bind(cur, dq.one_select(cur, SLOW), SLOW, limits, True))
    cur.close()
    started = time.monotonic()
    with pytest.raises(QueryTimeout, match=r"time limit of 0\.5 s"):  # from the kept statement
        run_query(conn, SLOW, max_rows=5, timeout_s=0.5, limits=limits, prepared=prepared)
    assert time.monotonic() - started < 10
    after = run_query(conn, QUERIES[3], max_rows=5, timeout_s=30, limits=limits, prepared=prepared)
    assert after.rows == [(7, 21)]


def test_the_kept_queries_are_bounded(conn: duckdb.DuckDBPyConnection) -> None:
    limits = QueryLimits.of(Limits())
    prepared = Prepared(kept=3)
    for n in range(5):
        run_query(conn, f"SELECT {n} AS v", max_rows=1, timeout_s=30, limits=limits,
                  prepared=prepared)  # fmt: skip
    assert len(prepared) == 3
    assert prepared.get((f"SELECT {0} AS v", True, limits.fetch_cell_chars,
                         limits.max_cell_chars)) is None  # fmt: skip


def test_queries_start_no_thread_each(
    conn: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = QueryLimits.of(Limits())
    prepared = Prepared()
    run_query(conn, QUERIES[0], max_rows=5, timeout_s=30, limits=limits, prepared=prepared)
    started: list[str] = []
    real_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        started.append(thread.name)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    try:
        for sql in QUERIES * 4:
            run_query(conn, sql, max_rows=5, timeout_s=30, limits=limits, prepared=prepared)
    finally:
        monkeypatch.undo()
    assert started == []  # before: a threading.Timer per query


@pytest.mark.slow
def test_a_source_answers_a_repeated_query_the_same(path: Path) -> None:
    # Through the query process: the second answer comes from the kept parse and bind.
    with DuckDBQuerySource("t", path, Limits()) as source:
        first = [source.query(sql) for sql in QUERIES]
        again = [source.query(sql) for sql in QUERIES]
        with pytest.raises(QueryTimeout):
            source.query(SLOW, timeout_s=0.5)
        with pytest.raises(QueryTimeout):
            source.query(SLOW, timeout_s=0.5)
    for a, b in zip(first, again, strict=True):
        _same(a, b)


# Finite, but long enough for another thread to act while it runs (about 0.7 s).
LONG = "SELECT count(*) FROM range(150000000) a WHERE a.range % 7 = 3"
LONG_COUNT = 21428571


def test_the_queries_of_one_connection_run_on_one_kept_cursor(
    conn: duckdb.DuckDBPyConnection,
) -> None:
    limits = QueryLimits.of(Limits())
    prepared = Prepared()
    cursors = []
    for sql in QUERIES * 2:
        kept = run_query(conn, sql, max_rows=50, timeout_s=30, limits=limits, prepared=prepared)
        _same(kept, run_query(conn, sql, max_rows=50, timeout_s=30, limits=limits))
        cursors.append(prepared.cursor(conn))
    assert all(cur is cursors[0] for cur in cursors)


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("SELECT CAST(name AS INTEGER) FROM t", QueryFailed),  # fails while it runs
        ("SELECT nope FROM t", QueryFailed),  # fails to bind
        (SLOW, QueryTimeout),
    ],
)
def test_a_query_that_fails_or_times_out_leaves_a_fresh_cursor_to_the_next(
    conn: duckdb.DuckDBPyConnection, sql: str, error: type[Exception]
) -> None:
    limits = QueryLimits.of(Limits())
    prepared = Prepared()
    run_query(conn, QUERIES[3], max_rows=5, timeout_s=30, limits=limits, prepared=prepared)
    before = prepared.cursor(conn)
    with pytest.raises(error):
        run_query(conn, sql, max_rows=5, timeout_s=0.5, limits=limits, prepared=prepared)
    assert prepared.cursor(conn) is not before
    after = run_query(conn, QUERIES[3], max_rows=5, timeout_s=30, limits=limits, prepared=prepared)
    assert after.rows == [(7, 21)]


def test_a_result_cut_short_leaves_a_fresh_cursor_to_the_next(
    conn: duckdb.DuckDBPyConnection,
) -> None:
    # 7 rows, 3 hashed: the scan stops with the result still open on its cursor
    limits = dataclasses.replace(QueryLimits.of(Limits()), fingerprint_max_rows=3)
    prepared = Prepared()
    before = prepared.cursor(conn)
    capped = run_query(conn, QUERIES[0], max_rows=2, timeout_s=30, limits=limits, prepared=prepared)
    assert capped.scan_capped and capped.row_count == 4
    assert prepared.cursor(conn) is not before
    whole = prepared.cursor(conn)
    run_query(conn, QUERIES[3], max_rows=5, timeout_s=30, limits=limits, prepared=prepared)
    assert prepared.cursor(conn) is whole  # read to its end: kept


@pytest.mark.slow
def test_an_interrupt_due_as_its_query_ended_never_stops_the_next(
    conn: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The watchdog may start a query's action just as the query ends; on the kept
    # cursor it must not reach the query after it.
    limits = QueryLimits.of(Limits())
    prepared = Prepared()
    actions: list[Any] = []
    real_after = dq.after

    def recorded(timeout_s: float, action: Any) -> Any:
        actions.append(action)
        return real_after(timeout_s, action)

    monkeypatch.setattr(dq, "after", recorded)
    run_query(conn, QUERIES[3], max_rows=5, timeout_s=30, limits=limits, prepared=prepared)
    late = threading.Timer(0.2, actions[0])  # fires while the next query runs
    late.start()
    try:
        result = run_query(conn, LONG, max_rows=5, timeout_s=30, limits=limits, prepared=prepared)
    finally:
        late.join()
    assert result.rows == [(LONG_COUNT,)]
    # a query's own action still interrupts it on the kept cursor
    cur = prepared.cursor(conn)
    with pytest.raises(QueryTimeout):
        run_query(conn, LONG, max_rows=5, timeout_s=0.1, limits=limits, prepared=prepared)
    assert prepared.cursor(conn) is not cur
