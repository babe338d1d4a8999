"""``row_count``: how many rows are in scope.

::

    row_count: {table, filter?}          expect "> 0"

Compared metric ``rows_in_scope``; with ``over:`` an empty tested bucket is its
measurement (a drop to nothing is a volume anomaly). It has no NULL rule: it
counts rows, whatever they hold.
"""

from __future__ import annotations

from typing import ClassVar

from sqlglot import exp

from checks.fields.expectation import Unit
from checks.kinds.base import Compiled, Counts, Judged, Kind, Loc, Scope
from checks.kinds.in_words import metric, rows
from checks.kinds.sql_terms import count
from checks.report import CheckResult

IN_SCOPE = "rows_in_scope"


def in_scope() -> exp.Expr:
    """``count(*) AS rows_in_scope``: the first count of every kind."""
    return exp.alias_(count(exp.Star()), IN_SCOPE)


class RowCount(Kind):
    """``row_count``: how many rows are in scope."""

    KIND: ClassVar[str] = "row_count"
    UNITS: ClassVar[frozenset[Unit]] = frozenset({"number", "rows", "anomaly"})
    DEFAULT_EXPECT: ClassVar[str] = "> 0"
    COMPARED: ClassVar[str] = IN_SCOPE
    OVER: ClassVar[bool] = True
    MEASURES_EMPTY: ClassVar[bool] = True

    def sql(self, scope: Scope) -> Compiled:
        """``count(*)`` over the scope; no sample."""
        return scope.done(scope.scoped(in_scope()), None, None)

    def judged(self, counts: Counts) -> Judged:
        """``rows_in_scope`` against ``expect``."""
        return counts.judge_compared(self, sample_rows=0)

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """``1,234 rows in scope``."""
        return f"{rows(metric(result, IN_SCOPE))} in scope"

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """None: it reads no column."""
        return []
