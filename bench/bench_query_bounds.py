"""Benchmark: queries built to outlive their limit or exhaust the machine, against the limits.

Each attack query runs through ``Source.query`` (the path of a declared check or
the agent's ``execute_query``) in a fresh interpreter of its own, so the peak
resident memory is that attack's alone. For each it reports the outcome, the
wall time against the query's time limit, and the peak RSS of the process that
held the source (the worker) and of the processes it started (DuckDB's query
processes), against ``limits.query_memory``.

Needs PostgreSQL on 127.0.0.1:5432 (``LOOKOUT_TEST_PG_URL``, as the tests) for
the PostgreSQL rows.

Run: ``.venv/bin/python bench/bench_query_bounds.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PG_URL = os.environ.get("LOOKOUT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")

ATTACKS = [
    (
        "duckdb",
        1.0,
        "SELECT max(strlen(repeat('x', 100000000 + range::INT))) FROM range(40)",
    ),
    (
        "duckdb",
        60.0,
        "SELECT max(strlen(repeat('x', 100000000 + range::INT))) FROM range(40)",
    ),
    ("duckdb", 60.0, "SELECT list(range) FROM range(300000000)"),
    (
        "duckdb",
        60.0,
        "SELECT count(*) FROM (SELECT range % 100000000 AS k, count(*) FROM range(300000000)"
        " GROUP BY k)",
    ),
    ("duckdb", 30.0, "SELECT repeat('x', 100000000) || range FROM range(30)"),
    ("postgres", 30.0, "SELECT repeat('x', 100000000) || g FROM generate_series(1, 30) g"),
]

_ONE = """
import json, resource, sys, time
from pathlib import Path
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import DuckDBQuerySource, SQLQuerySource
engine, timeout, sql, duck, pg = sys.argv[1:6]
limits = Limits(query_timeout_s=float(timeout))
if engine == "duckdb":
    source = DuckDBQuerySource("bench", Path(duck), limits)
else:
    pg = pg.replace("postgresql://", "postgresql+psycopg://", 1)
    source = SQLQuerySource("bench", SQLAlchemySource(type="sqlalchemy", url=pg), limits)
source.query("SELECT 1 AS warm")
started = time.monotonic()
try:
    result = source.query(sql)
    outcome = f"{result.row_count} rows, cells cut in SQL"
except Exception as exc:
    outcome = f"{type(exc).__name__}: {exc}"
wall = time.monotonic() - started
source.close()
print(json.dumps({
    "outcome": outcome,
    "wall_s": round(wall, 2),
    "rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    "children_rss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
    "memory_limit": limits.query_memory.human_readable(),
}))
"""


def main() -> None:
    """Run every attack and print a Markdown table."""
    import duckdb

    with tempfile.TemporaryDirectory() as scratch:
        duck = Path(scratch) / "bench.duckdb"
        with duckdb.connect(str(duck)) as conn:
            conn.execute("CREATE TABLE t AS SELECT range AS id FROM range(10)")
        print("| engine | query | time limit | outcome | wall | peak RSS worker / query process |")
        print("| --- | --- | ---: | --- | ---: | ---: |")
        for engine, timeout, sql in ATTACKS:
            done = subprocess.run(
                [sys.executable, "-c", _ONE, engine, str(timeout), sql, str(duck), PG_URL],
                capture_output=True,
                text=True,
                check=True,
                timeout=600,
            )
            row = json.loads(done.stdout.strip().splitlines()[-1])
            children = row["children_rss_mib"] if engine == "duckdb" else "–"
            print(
                f"| {engine} | `{sql}` | {timeout:g} s | {row['outcome']} | {row['wall_s']} s"
                f" | {row['rss_mib']} / {children} MiB |"
            )


if __name__ == "__main__":
    main()
