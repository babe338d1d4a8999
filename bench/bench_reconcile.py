"""Benchmark: ``compare``'s row diff, 1,000,000 rows with 10 differences, DuckDB and PostgreSQL.

Both sides hold ``ledger`` (id, amount DECIMAL(12,2), status, created_at):
ids 0 … 999,999 in DuckDB; in PostgreSQL the same rows but 4 amounts changed,
3 ids deleted (extra: in DuckDB only) and 3 added (missing: in PostgreSQL
only), 10 differences in all. Measured, each the median of ``--rounds``
(default 3):

- ``compare`` in mode ``rows`` through the whole path (``run_checks``, every
  statement guarded and run read-only): its statements, the key rows it
  fetched, its levels, its wall time, and its exact findings;
- the full fetch it replaces: every row of both sides read with the engines'
  own Python clients (no Lookout, no guard) and compared in a dict: rows
  fetched and wall time;
- modes ``counts`` and ``aggregates`` for scale.

Run: ``.venv/bin/python bench/bench_reconcile.py`` (PostgreSQL at
``LOOKOUT_TEST_PG_URL``, default ``postgresql://postgres@127.0.0.1:5432/test``;
a scratch database is made and dropped).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ADMIN = os.environ.get("LOOKOUT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
ROWS = 1_000_000
DUCKDB_TABLE = f"""
CREATE TABLE ledger AS SELECT range::BIGINT AS id, ((range % 10000) / 100)::DECIMAL(12,2) AS amount,
  's' || (range % 5) AS status, TIMESTAMP '2024-01-01' + range * INTERVAL 1 SECOND AS created_at
FROM range({ROWS});
"""
POSTGRES_TABLE = f"""
CREATE TABLE ledger AS SELECT g::BIGINT AS id, ((g % 10000) / 100.0)::DECIMAL(12,2) AS amount,
  's' || (g % 5) AS status, TIMESTAMP '2024-01-01' + g * INTERVAL '1 second' AS created_at
FROM generate_series(0, {ROWS - 1}) g;
UPDATE ledger SET amount = amount + 1 WHERE id IN (10, 250000, 500000, 999990);
DELETE FROM ledger WHERE id IN (7, 400000, 800001);
INSERT INTO ledger VALUES (1000000, 1, 's1', TIMESTAMP '2030-01-01'),
  (1000001, 2, 's2', TIMESTAMP '2030-01-01'), (1000002, 3, 's3', TIMESTAMP '2030-01-01');
ALTER TABLE ledger ADD PRIMARY KEY (id);
ANALYZE ledger;
"""


STATEMENTS: list[tuple[str, float, int]] = []
"""Each statement ``compare`` sent: the source, its wall seconds, the rows it returned."""


def recorded(source: Any) -> None:
    """Record each statement ``source`` runs in ``STATEMENTS`` (once guarded: ``_execute``)."""
    execute = source._execute

    def timed(sql: str, **options: Any) -> Any:
        started = time.perf_counter()
        found = execute(sql, **options)
        STATEMENTS.append((source.name, time.perf_counter() - started, found.row_count))
        return found

    source._execute = timed


def compare(duck: Any, pg: Any, mode: str) -> tuple[float, Any]:
    """One ``compare`` through ``run_checks``: wall seconds and its result."""
    from checks.automation.model import Automation
    from checks.declared.check import run_checks
    from checks.settings.limits import Limits

    automation = Automation.model_validate(
        {
            "name": "recon",
            "source": "duck",
            "goal": "g",
            "checks": [
                {
                    "name": "c",
                    "compare": {
                        "table": "ledger",
                        "with": {"source": "pg"},
                        "key": [] if mode != "rows" else ["id"],
                        "mode": mode,
                    },
                }
            ],
            "path": "bench.yaml",
            "line": 1,
        }
    )
    named = {"duck": duck, "pg": pg}
    limits = Limits(query_timeout_s=600)
    started = time.perf_counter()
    results, _ = run_checks(
        automation, duck, limits, deadline=time.monotonic() + 900, sources=named.__getitem__
    )
    return time.perf_counter() - started, results[0]


def full_fetch(duck_path: Path, pg_url: str) -> tuple[float, int, int]:
    """Every row of both sides, read with each engine's client and compared: wall, rows, diffs."""
    import duckdb
    import psycopg

    started = time.perf_counter()
    sql = "SELECT id, amount, status, created_at FROM ledger"
    with duckdb.connect(str(duck_path), read_only=True) as conn:
        ours = {row[0]: row[1:] for row in conn.execute(sql).fetchall()}
    with psycopg.connect(pg_url) as conn:
        theirs = {row[0]: row[1:] for row in conn.execute(sql).fetchall()}
    differences = sum(1 for k in ours.keys() | theirs.keys() if ours.get(k) != theirs.get(k))
    return time.perf_counter() - started, len(ours) + len(theirs), differences


def main() -> None:
    """Build both sides, measure, print the figures."""
    import duckdb
    import psycopg

    from checks.settings.limits import Limits
    from checks.settings.sources import SQLAlchemySource
    from checks.sources import DuckDBQuerySource, SQLQuerySource

    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    name = f"lookout_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    pg_url = f"{ADMIN.rsplit('/', 1)[0]}/{name}"
    try:
        with tempfile.TemporaryDirectory() as folder:
            duck_path = Path(folder) / "recon.duckdb"
            started = time.perf_counter()
            with duckdb.connect(str(duck_path)) as conn:
                conn.execute(DUCKDB_TABLE)
            with psycopg.connect(pg_url, autocommit=True) as conn:
                conn.execute(POSTGRES_TABLE)
            print(f"built both sides in {time.perf_counter() - started:.1f} s")
            limits = Limits(query_timeout_s=600)
            url = pg_url.replace("postgresql://", "postgresql+psycopg://", 1)
            with (
                DuckDBQuerySource("duck", duck_path, limits) as duck,
                SQLQuerySource("pg", SQLAlchemySource(type="sqlalchemy", url=url), limits) as pg,
            ):
                duck.catalog(), pg.catalog()
                recorded(duck), recorded(pg)
                for mode in ("rows", "counts", "aggregates"):
                    walls = []
                    for _ in range(rounds):
                        STATEMENTS.clear()
                        wall, result = compare(duck, pg, mode)
                        walls.append(wall)
                    for name, seconds, count in STATEMENTS:
                        print(f"    {name}: {seconds:.2f} s, {count:,} rows")
                    keep = {k: v for k, v in result.metrics.items() if k != "queries_by_side"}
                    print(f"compare {mode}: {statistics.median(walls):.2f} s median of {rounds};")
                    print(f"  {result.outcome.value}, {keep}")
            walls, fetched, found = [], 0, 0
            for _ in range(rounds):
                wall, fetched, found = full_fetch(duck_path, pg_url)
                walls.append(wall)
            print(
                f"full fetch: {statistics.median(walls):.2f} s median of {rounds};"
                f" {fetched:,} rows fetched, {found} differences, 2 queries"
            )
    finally:
        with psycopg.connect(ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
