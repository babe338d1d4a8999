"""What Lookout adds to its SQLite connections, on a real ``sqlite3`` connection."""

from __future__ import annotations

import sqlite3
import statistics

import pytest

from checks.sources.sqlite_functions import register


@pytest.fixture
def conn() -> sqlite3.Connection:
    found = sqlite3.connect(":memory:")
    register(found)
    found.executescript(
        "CREATE TABLE t (v, s); INSERT INTO t VALUES (10.5, 'a@x.org'), (-1, 'B'), (5, NULL),"
        " (7.25, 'c@x.org' || char(10)), (NULL, 12)"
    )
    return found


def test_regexp_is_pythons_search_and_null_for_null(conn: sqlite3.Connection) -> None:
    rows = conn.execute(
        r"SELECT s REGEXP '^([a-z]+@x\.org)\Z', s REGEXP '^([a-z]+@x\.org)$', s REGEXP '[0-9]'"
        " FROM t ORDER BY rowid"
    ).fetchall()
    # \Z is the end of the text; $ also matches before a final newline
    assert rows == [(1, 1, 0), (0, 0, 0), (None, None, None), (0, 1, 0), (0, 0, 1)]


def test_the_sample_statistics_skip_nulls_and_texts(conn: sqlite3.Connection) -> None:
    values = [10.5, -1, 5, 7.25]
    found = conn.execute(
        "SELECT stddev_samp(v), var_samp(v), stddev(v), variance(v), var_samp(s) FROM t"
    ).fetchone()
    assert found[:4] == pytest.approx(
        [statistics.stdev(values), statistics.variance(values)] * 2, rel=1e-12
    )
    assert found[4] is None  # one number (12) among texts: no sample variance of one value
    assert conn.execute("SELECT stddev_samp(v) FROM t WHERE v > 10").fetchone() == (None,)
