"""``accepted_values``: rows whose column is not one of ``values``.

::

    accepted_values: {table, column, values, null?, count?, filter?}  expect "== 0"

NULL rule: a NULL is a violation by default (``null: violation``, counted apart
as ``null_values``); ``null: allowed`` accepts it. ``count`` is what ``expect``
compares: ``violations`` (default, rows) or ``distinct_invalid_values`` (the
distinct values not listed, as dbt's ``accepted_values`` counts its failures;
it counts no NULL, so it goes with ``null: allowed`` only). Metrics:
``rows_in_scope``, ``invalid_values``, ``null_values``, ``violations``,
``distinct_invalid_values``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator
from sqlglot import exp

from checks.kinds.base import Compiled, Counts, Judged, Loc, OneColumn, Scope, all_null
from checks.kinds.in_words import metric, rows
from checks.kinds.listed_values import Scalar, listed_problems
from checks.kinds.row_count import in_scope
from checks.kinds.sql_terms import count_distinct_when, count_when, is_null, literal, not_null
from checks.report import CheckResult
from checks.sql.types import family


class AcceptedValues(OneColumn):
    """``accepted_values``: rows whose column is not one of ``values``."""

    KIND: ClassVar[str] = "accepted_values"
    OVER: ClassVar[bool] = True

    values: list[Scalar] = Field(min_length=1)
    null: Literal["violation", "allowed"] = "violation"
    count: Literal["violations", "distinct_invalid_values"] = "violations"

    @model_validator(mode="after")
    def _count_with_nulls(self) -> AcceptedValues:
        if self.count == "distinct_invalid_values" and self.null == "violation":
            raise ValueError(
                "count: distinct_invalid_values counts no NULL, and null: violation makes"
                " a NULL a violation; give null: allowed, or count: violations"
            )
        return self

    @property
    def compared(self) -> str:
        """The metric the expectation compares: ``count``."""
        return self.count

    def sql(self, scope: Scope) -> Compiled:
        """Invalid, NULL and distinct invalid values; the sample is the violating values."""
        column = scope.column(self.column)
        ref = scope.col(column.name)
        text = family(column.type, scope.dialect) == "text"
        listed = [literal(v, as_text=text) for v in self.values]
        invalid = exp.and_(not_null(ref), exp.Not(this=exp.In(this=ref.copy(), expressions=listed)))
        counts = scope.scoped(
            in_scope(),
            exp.alias_(count_when(invalid), "invalid_values"),
            exp.alias_(count_when(is_null(ref)), "null_values"),
            exp.alias_(count_distinct_when(invalid, ref), "distinct_invalid_values"),
        )
        violation = invalid if self.null == "allowed" else exp.or_(is_null(ref), invalid.copy())
        return scope.done(counts, scope.value_sample(ref, column.name, violation), column)

    def judged(self, counts: Counts) -> Judged:
        """Invalid values (and NULLs, unless allowed) against ``expect``."""
        nulls = counts.count("null_values") if self.null == "violation" else 0
        counts.metrics["violations"] = counts.count("invalid_values") + nulls
        sample = counts.count("distinct_invalid_values") + (1 if nulls else 0)
        return counts.judge_compared(self, sample_rows=sample)

    def nothing_compared(self, counts: Counts) -> str | None:
        """With ``null: allowed``, a column NULL in every row compared nothing."""
        return all_null(self.column, counts) if self.null == "allowed" else None

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """``3 invalid and 1 NULL in 1,000 rows``."""
        invalid, nulls = metric(result, "invalid_values"), metric(result, "null_values")
        return f"{invalid:,} invalid and {nulls:,} NULL in {rows(metric(result, 'rows_in_scope'))}"

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """Listed text a number column cannot hold."""
        return listed_problems("values", list(self.values), self.column, column_type, have)
