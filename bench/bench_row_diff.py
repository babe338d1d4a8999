"""Benchmark: what the row-level record and the row diff cost, in CPU, memory and store.

For results of 1,000, 10,000 and 100,000 rows (three columns: a text, an
integer, a float) it measures, in one process:

- ``collect`` (the scan every query's rows go through: fingerprint, row
  hashes, sample) against the fingerprint alone (``sum(map(row_digest, …))``,
  what the scan did before it kept row hashes): CPU per result and per row;
- ``diff_rows`` of two row sets: the same rows (a byte comparison), 3 rows
  new and 3 gone, 10 % replaced, and 10 % replaced with every row repeated
  (the multiset path): CPU, and the peak memory it allocates (tracemalloc,
  measured on a separate call, since tracing slows allocation);
- the stored blob's size.

CPU is ``time.process_time`` (best of 5), so other load on the machine moves
it much less than wall time. Run: ``.venv/bin/python bench/bench_row_diff.py``.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

from checks.opinion.row_diff import PreviousRows, diff_rows
from checks.settings.limits import Limits
from checks.sources.base import QueryResult, collect, row_digest


def rows_of(n: int, *, replaced: int = 0, offset: int = 0) -> list[tuple[Any, ...]]:
    """``n`` rows ``(tail, i, i * 1.5)``; the first ``replaced`` get other tails."""
    return [(f"X{i + offset:07d}" if i < replaced else f"N{i:07d}MQ", i, i * 1.5) for i in range(n)]


def scan(rows: Sequence[tuple[Any, ...]]) -> QueryResult:
    """``collect`` over ``rows`` as a driver would hand them over."""
    position = 0

    def fetchmany(size: int) -> Sequence[tuple[Any, ...]]:
        nonlocal position
        batch = rows[position : position + size]
        position += size
        return batch

    return collect(
        fetchmany,
        sql="q",
        columns=["tail", "seats", "weight"],
        max_rows=50,
        scan_rows=len(rows),
        started=time.monotonic(),
        timeout_s=600,
        limits=Limits(fingerprint_max_rows=max(len(rows), 1)),
    )


def fingerprint_only(rows: Sequence[tuple[Any, ...]]) -> int:
    """What the scan hashed before it kept row hashes: the sum of the row digests."""
    return sum(sum(map(row_digest, rows[i : i + 2000])) for i in range(0, len(rows), 2000))


def cpu_ms(call: Callable[[], object], repeat: int = 5) -> float:
    """The best CPU time of ``repeat`` calls, in milliseconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        call()
        best = min(best, time.process_time() - started)
    return best * 1000


def peak_mb(call: Callable[[], object]) -> float:
    """The peak memory ``call`` allocates (tracemalloc), in MB."""
    tracemalloc.start()
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def previous_of(result: QueryResult) -> PreviousRows:
    assert result.row_set is not None
    return PreviousRows(1, "C1", result.row_set, [list(r) for r in result.rows], result.row_count)


def main() -> None:
    print("| rows | fingerprint only | scan with row hashes | added per row | blob |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for n in (1_000, 10_000, 100_000):
        rows = rows_of(n)
        base = cpu_ms(lambda rows=rows: fingerprint_only(rows))  # type: ignore[misc]
        full = cpu_ms(lambda rows=rows: scan(rows))  # type: ignore[misc]
        blob = scan(rows).row_set
        assert blob is not None
        print(
            f"| {n:,} | {base:.1f} ms | {full:.1f} ms | {(full - base) / n * 1000:.2f} µs"
            f" | {len(blob.hashes):,} B |"
        )
    print()
    print("| rows | case | diff CPU | diff peak memory | line |")
    print("| ---: | --- | ---: | ---: | --- |")
    for n in (10_000, 100_000):
        before = scan(rows_of(n))
        cases = {
            "the same rows": scan(list(reversed(rows_of(n)))),
            "3 new, 3 gone": scan(rows_of(n, replaced=3, offset=10**6)),
            "10 % replaced": scan(rows_of(n, replaced=n // 10, offset=10**6)),
        }
        doubled = scan(rows_of(n // 2) * 2)
        cases_doubled = {
            "10 % replaced, rows repeated": scan(rows_of(n // 2, replaced=n // 20) * 2)
        }
        for name, now, old in [
            *((k, v, before) for k, v in cases.items()),
            *((k, v, doubled) for k, v in cases_doubled.items()),
        ]:
            assert now.row_set is not None
            prev = previous_of(old)

            def run(now: QueryResult = now, prev: PreviousRows = prev) -> object:
                assert now.row_set is not None
                return diff_rows(
                    "C1",
                    now.columns,
                    [list(r) for r in now.rows],
                    now.row_set,
                    now.row_count,
                    True,
                    prev,
                )

            change = run()
            print(
                f"| {n:,} | {name} | {cpu_ms(run):.1f} ms | {peak_mb(run):.1f} MB"
                f" | {change.line()} |"  # type: ignore[attr-defined]
            )


if __name__ == "__main__":
    main()
