"""Building a DuckDB source's cache prints nothing on stdout, where ``lookout run --json`` writes.

DuckDB draws a progress bar on stdout for a statement that runs past 2 s (a
large CSV on a loaded machine). A slow load is made here with a Python
function that sleeps, so the test costs seconds of waiting, not of CPU; it
runs in a child process whose stdout is a pipe, as the CLI's is.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.paths import ROOT

SLOW_LOAD = "CREATE TABLE slow AS SELECT sum(nap(range)) AS s FROM range(50)"  # 50 × 0.05 s


def nap(value: int) -> int:
    """Sleep 50 ms, then return ``value``."""
    time.sleep(0.05)
    return value


def slow_load(conn: duckdb.DuckDBPyConnection, *_: object) -> None:
    """Stand-in for ``duckdb_cache._load_table``: a load that takes 2.5 s."""
    conn.create_function("nap", nap, ["BIGINT"], "BIGINT")
    conn.execute(SLOW_LOAD)


PLAIN = """
import sys, duckdb
from tests.checks.sources.test_build_output import slow_load
slow_load(duckdb.connect(sys.argv[1]))
"""

BUILD = """
import sys
from checks.settings.sources import DuckDBSource
from checks.sources import duckdb_cache
from tests.checks.sources.test_build_output import slow_load
duckdb_cache._load_table = slow_load
built = duckdb_cache.build_cache(
    "slow", DuckDBSource(type="duckdb", tables={"t": sys.argv[1]}), duckdb_cache.Path(sys.argv[2])
)
print(built.path, file=sys.stderr)
"""


def child(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


@pytest.mark.slow
def test_a_slow_cache_build_draws_no_progress_bar(tmp_path: Path) -> None:
    plain = child(PLAIN, str(tmp_path / "plain.duckdb"))  # DuckDB's default, to compare
    assert "100%" in plain.stdout

    data = tmp_path / "t.csv"
    data.write_text("a\n1\n", encoding="utf-8")
    built = child(BUILD, str(data), str(tmp_path / "cache"))
    assert built.stdout == ""
    with duckdb.connect(built.stderr.strip(), read_only=True) as conn:
        assert conn.execute("SELECT s FROM slow").fetchall() == [(1225,)]
