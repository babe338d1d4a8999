"""The functions Lookout adds to its own SQLite connections: ``regexp`` and the sample statistics.

SQLite has no regular expressions and no standard deviation of its own: ``X REGEXP Y``
calls a function ``regexp(Y, X)`` that the application defines (SQLite's
documentation, "The REGEXP operator"), and an aggregate is any the application
registers. ``register`` adds, on each query's connection (``run_sqlite``):

- ``regexp(pattern, value)``: Python's ``re.search`` (the ``validity`` kind anchors the
  pattern itself); NULL for a NULL value, a number read as its text;
- ``stddev_samp(x)`` and ``var_samp(x)`` (also as ``stddev`` and ``variance``, the names
  sqlglot's SQLite SQL gives them): the sample's (n - 1) standard deviation and
  variance of the non-NULL numbers, by Welford's method in doubles (SQLite's numbers are
  doubles or 64-bit integers); NULL for fewer than two values.

A Python function runs between SQLite's progress checks: a pattern that backtracks for a
long time on one value is not stopped by the query's time limit until it returns.
"""

from __future__ import annotations

import math
import re
import sqlite3
from functools import lru_cache


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def regexp(pattern: str | None, value: object) -> int | None:
    """1 when ``pattern`` is found in ``value``, 0 when not, NULL when either is NULL."""
    if pattern is None or value is None:
        return None
    if isinstance(value, bytes):
        return 0
    return 1 if _compiled(pattern).search(str(value)) else 0


class SampleVariance:
    """The sample variance of the non-NULL numbers stepped in (Welford's online method)."""

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0

    def step(self, value: object) -> None:
        """Take one value; NULLs and texts are skipped, as SQL aggregates skip NULLs."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return
        self.n += 1
        delta = value - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (value - self.mean)

    def finalize(self) -> float | None:
        """The variance (n - 1), or NULL for fewer than two values."""
        return self.m2 / (self.n - 1) if self.n > 1 else None


class SampleStddev(SampleVariance):
    """The sample standard deviation: the square root of ``SampleVariance``."""

    def finalize(self) -> float | None:
        """The standard deviation (n - 1), or NULL for fewer than two values."""
        variance = super().finalize()
        return None if variance is None else math.sqrt(variance)


def register(conn: sqlite3.Connection) -> None:
    """Add ``regexp`` and the sample statistics to ``conn`` (cheap: done per query)."""
    conn.create_function("regexp", 2, regexp, deterministic=True)
    for name in ("var_samp", "variance"):  # sqlglot writes VAR_SAMP as VARIANCE in SQLite
        conn.create_aggregate(name, 1, SampleVariance)  # type: ignore[arg-type]
    for name in ("stddev_samp", "stddev"):
        conn.create_aggregate(name, 1, SampleStddev)  # type: ignore[arg-type]
