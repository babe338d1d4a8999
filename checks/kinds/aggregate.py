"""``aggregate``: one aggregate of a number column over the scope, compared with ``expect``.

::

    aggregate: {table, column, function, percentile?, filter?}   expect required

``function`` is ``avg``, ``sum``, ``min``, ``max``, ``stddev``, ``variance`` (both
of the sample: n - 1), ``median``, ``percentile`` (with ``percentile:``, a
fraction strictly between 0 and 1: ``0.95``) or ``count_distinct``. Every one
is exact on every engine (``checks.kinds.aggregate_sql`` says how); a
percentile is continuous, interpolated between the two nearest values, as
``PERCENTILE_CONT``. ``expect`` has no default (no bound fits every column):
a number (``between 10 and 20``) or ``anomaly``.

NULL rule: NULLs are ignored, as SQL aggregates ignore them; a scope of only
NULLs (or an empty one, even with ``allow_empty``) is not evaluated, and so is
a ``stddev`` or ``variance`` of one value. An aggregate the engine gives as
NaN or an infinity (a float column holding them) is an error saying so, never
passed. Metrics: ``rows_in_scope``,
``rows_with_value`` (the non-NULL values aggregated), and the aggregate under
its function's name (``avg``, ``percentile``…), which is the check's value.
"""

from __future__ import annotations

import math
from typing import ClassVar, Literal

from pydantic import model_validator
from sqlglot import exp

from checks.fields.expectation import Unit
from checks.fields.judgement import Judgement, failure, judge_number, measure_for_history
from checks.fields.rules import fail_here
from checks.kinds.aggregate_sql import ranked_inner, ranked_percentile, term
from checks.kinds.base import Compiled, Counts, Judged, Loc, OneColumn, Scope
from checks.kinds.in_words import metric, number, rows
from checks.kinds.row_count import in_scope
from checks.kinds.sql_terms import count
from checks.report import CheckResult, Metrics
from checks.sql.types import NUMBER_FAMILIES

Function = Literal[
    "avg", "sum", "min", "max", "stddev", "variance", "median", "percentile", "count_distinct"
]


class Aggregate(OneColumn):
    """``aggregate``: one aggregate of a number column over the scope, compared with ``expect``."""

    KIND: ClassVar[str] = "aggregate"
    UNITS: ClassVar[frozenset[Unit]] = frozenset({"number", "anomaly"})
    UNDEFINED_WHEN_EMPTY: ClassVar[bool] = True
    BY: ClassVar[bool] = False  # not yet: some engines run a percentile as its own statement
    NO_BY: ClassVar[str] = "it is not supported yet for aggregate"

    function: Function
    percentile: float | None = None

    @model_validator(mode="after")
    def _level(self) -> Aggregate:
        if self.function == "percentile":
            if self.percentile is None:
                raise fail_here("function: percentile needs percentile: (0.95 is the 95th)", ())
            if not 0 < self.percentile < 1:
                raise fail_here(
                    f"percentile is a fraction strictly between 0 and 1 (got {self.percentile});"
                    " 0.95 is the 95th percentile, and min or max are the ends",
                    ("percentile",),
                )
        elif self.percentile is not None:
            raise fail_here(
                f"percentile: is for function: percentile, not {self.function}; leave it out",
                ("percentile",),
            )
        return self

    def default_expect(self) -> str:
        """None: no bound fits every column.

        Raises:
            ValueError: always; the check must give ``expect``.
        """
        raise ValueError(
            "aggregate needs an expect, e.g. 'between 10 and 20' (no bound fits every column)"
        )

    @property
    def compared(self) -> str:
        """The aggregate's metric: its function's name."""
        return self.function

    @property
    def level(self) -> float | None:
        """The percentile's fraction (0.5 for the median), None for the other functions."""
        return 0.5 if self.function == "median" else self.percentile

    def sql(self, scope: Scope) -> Compiled:
        """Rows, rows with a value and the aggregate; no sample (no row violates an aggregate)."""
        column = scope.column(self.column)
        ref = scope.col(column.name)
        found = term(self.function, ref, scope.dialect, self.level)
        if found is not None:
            counts = scope.scoped(
                in_scope(),
                exp.alias_(count(ref.copy()), "rows_with_value"),
                exp.alias_(found, self.compared),
            )
            return scope.done(counts, None, column)
        level = self.level
        assert level is not None  # only percentiles are ranked
        inner = scope.scoped(*ranked_inner(ref, "v", level))
        value = exp.column("v", table="s", quoted=True)
        outer = exp.select(
            in_scope(),
            exp.alias_(count(value), "rows_with_value"),
            *ranked_percentile(inner, "v", level, scope.dialect, self.compared),
        ).from_(inner.subquery("s"))
        return scope.done(outer, None, column)

    def judged(self, counts: Counts) -> Judged:
        """The aggregate against ``expect`` (a number), or measured for its history."""
        counts.metrics["compared"] = self.compared
        value = counts.row.get(self.compared)
        with_value = counts.count("rows_with_value")
        if isinstance(value, float) and not math.isfinite(value):
            counts.metrics[self.compared] = None  # no JSON number: said in the error
            one_value = self.function in ("stddev", "variance") and with_value < 2
            if not (math.isnan(value) and (with_value == 0 or one_value)):
                return Judged(failure(self._not_finite(value, counts.scope)))
            value = None  # ClickHouse's stddevSamp of one value, or avg of none
        if value is None:
            if with_value == 0:  # empty, or only NULLs: nothing_compared says which
                return Judged(Judgement(value=None, passed=None, not_evaluated="no value"))
            values = f"{with_value:,} value{'' if with_value == 1 else 's'}"
            note = (
                f"the {self.function} of {values} is undefined (it needs at least 2):"
                f" {counts.scope}"
            )
            return Judged(Judgement(value=None, passed=None, not_evaluated=note))
        if counts.expect.unit == "anomaly":
            return Judged(measure_for_history(value))
        return Judged(judge_number(counts.expect, value))

    def _not_finite(self, value: float, scope: str) -> str:
        """``avg is NaN: the column holds NaN or infinite values``, the engine's own answer."""
        shown = "NaN" if math.isnan(value) else ("-Infinity" if value < 0 else "Infinity")
        return (
            f"{self.function} is {shown}: {self.column} holds NaN or infinite values, "
            f"so there is no number to compare: {scope}"
        )

    def nothing_compared(self, counts: Counts) -> str | None:
        """A column NULL in every row in scope has no aggregate (even ``count_distinct``'s 0)."""
        if counts.count("rows_with_value") > 0:
            return None
        return f"{self.column} is NULL in all {counts.in_scope} rows in scope: {counts.scope}"

    def unmeasured(self, metrics: Metrics) -> None:
        """No aggregate of an empty scope."""
        metrics[self.compared] = None

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """``avg 28.19 over 4 values (5 rows in scope)``."""
        name = result.metrics.get("compared")
        value = result.metrics.get(name) if isinstance(name, str) else None
        with_value, scope = metric(result, "rows_with_value"), metric(result, "rows_in_scope")
        values = f"{with_value:,} value{'' if with_value == 1 else 's'}"
        if value is None:
            return f"no {name} over {values} ({rows(scope)} in scope)"
        return f"{name} {number(value)} over {values} ({rows(scope)} in scope)"

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """A number column, but for ``count_distinct``, which counts any values."""
        if self.function == "count_distinct" or have in NUMBER_FAMILIES:
            return []
        return [
            (
                ("column",),
                f"{self.column} is {column_type}, not a number: the {self.function} of it is no"
                " number to compare (count_distinct counts any column)",
            )
        ]
