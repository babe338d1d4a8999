"""``missing``: rows whose column is NULL (or one of ``missing_values``).

::

    missing: {table, column, missing_values?, filter?}          expect "== 0"

NULL rule: a NULL is missing, and so is each value listed in ``missing_values``
(text, numbers or booleans, written as the column's type). Metrics:
``rows_in_scope``, ``missing``, ``missing_percent``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import ClassVar

from pydantic import Field
from sqlglot import exp

from checks.kinds.base import Compiled, Counts, Judged, Loc, OneColumn, Scope
from checks.kinds.in_words import metric, percent, rows
from checks.kinds.listed_values import Scalar, listed_problems
from checks.kinds.row_count import in_scope
from checks.kinds.sql_terms import count_when, is_null, literal
from checks.report import CheckResult, Metrics
from checks.sql.types import family


class Missing(OneColumn):
    """``missing``: rows whose column is NULL (or one of ``missing_values``)."""

    KIND: ClassVar[str] = "missing"
    COMPARED: ClassVar[str] = "missing"
    OVER: ClassVar[bool] = True
    SHOWS_ITS_PERCENT: ClassVar[bool] = True

    missing_values: list[Scalar] = Field(default_factory=list)

    def sql(self, scope: Scope) -> Compiled:
        """Rows in scope and missing ones; the sample is the missing rows."""
        column = scope.column(self.column)
        ref = scope.col(column.name)
        text = family(column.type, scope.dialect) == "text"
        missing: exp.Expr = is_null(ref)
        if self.missing_values:
            listed = [literal(v, as_text=text) for v in self.missing_values]
            missing = exp.or_(missing, exp.In(this=ref.copy(), expressions=listed))
        counts = scope.scoped(in_scope(), exp.alias_(count_when(missing), "missing"))
        return scope.done(counts, scope.row_sample(missing, None), column)

    def judged(self, counts: Counts) -> Judged:
        """``missing`` against ``expect``; ``missing_percent`` beside it."""
        counts.metrics["missing_percent"] = _percent(counts.count("missing"), counts.in_scope)
        return counts.judge_compared(self, sample_rows=counts.count("missing"))

    def unmeasured(self, metrics: Metrics) -> None:
        """No percent of an empty scope."""
        metrics["missing_percent"] = None

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """``12 of 1,000 rows missing (1.20 %)``."""
        missing, scope = metric(result, "missing"), metric(result, "rows_in_scope")
        return f"{missing:,} of {rows(scope)} missing ({percent(missing, scope)})"

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """Listed text a number column cannot hold."""
        return listed_problems(
            "missing_values", list(self.missing_values), self.column, column_type, have
        )


def _percent(count: int, total: int) -> float | None:
    return float(Fraction(count, total) * 100) if total else None
