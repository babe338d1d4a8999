"""``range``: rows whose column is below ``min`` or above ``max`` (both inclusive).

::

    range: {table, column, min?, max?, null?, filter?}          expect "== 0"

``min`` and ``max`` are numbers, or dates or timestamps (quoted or not), both
of one sort. NULL rule: a NULL has no magnitude and is not out of range
(``null: allowed``, counted as ``null_values``); ``null: violation`` counts it.
Metrics: ``rows_in_scope``, ``below_min``, ``above_max``, ``null_values``,
``violations``.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from decimal import Decimal
from typing import Any, ClassVar, Literal

from pydantic import field_validator, model_validator
from sqlglot import exp

from checks.fields.yaml_messages import exponent_hint, shown
from checks.kinds.base import Compiled, Counts, Judged, Loc, OneColumn, Scope, all_null
from checks.kinds.in_words import metric, rows
from checks.kinds.row_count import in_scope
from checks.kinds.sql_terms import count_when, is_null, literal
from checks.report import CheckResult
from checks.sql.types import NUMBER_FAMILIES, TEMPORAL_FAMILIES

Bound = int | float | Decimal | dt.date | dt.datetime

_NUMBER = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+)")
"""A decimal number with its point, as text (``20240131`` stays a date, as ISO 8601 reads it)."""


class Range(OneColumn):
    """``range``: rows whose column is below ``min`` or above ``max`` (both inclusive)."""

    KIND: ClassVar[str] = "range"
    OVER: ClassVar[bool] = True

    min: Bound | None = None
    max: Bound | None = None
    null: Literal["allowed", "violation"] = "allowed"

    @field_validator("min", "max", mode="before")
    @classmethod
    def _iso(cls, value: object) -> object:
        """Read a quoted date or timestamp (``'2024-01-31'``) as one; YAML reads unquoted ones.

        A quoted number is read exactly, as a ``Decimal``: YAML reads an unquoted one as a
        double, which holds about 16 digits (``'12345678901234567890.1234567890'``).
        """
        if isinstance(value, str):
            if _NUMBER.fullmatch(value.strip()):
                return Decimal(value.strip())
            for parse in (dt.date.fromisoformat, dt.datetime.fromisoformat):
                try:
                    return parse(value.strip())
                except ValueError:
                    continue
            raise ValueError(
                f"expected a number, a date or a timestamp (got {shown(value)})"
                f"{exponent_hint(value)}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(
                f"expected a finite number, a date or a timestamp (got {shown(value)})"
            )
        return value

    @model_validator(mode="after")
    def _bounds(self) -> Range:
        if self.min is None and self.max is None:
            raise ValueError("range needs min, max or both")
        if self.min is not None and self.max is not None:
            if _bound_kind(self.min) != _bound_kind(self.max):
                raise ValueError("min and max must both be numbers, dates or timestamps")
            low: Any = self.min  # the same kind, checked above
            if low > self.max:
                raise ValueError(f"min ({self.min}) is above max ({self.max})")
        return self

    def sql(self, scope: Scope) -> Compiled:
        """Rows below, above and NULL; the sample is the rows out of range."""
        column = scope.column(self.column)
        ref = scope.col(column.name)
        below = above = None
        if self.min is not None:
            below = exp.LT(this=ref.copy(), expression=literal(self.min))
        if self.max is not None:
            above = exp.GT(this=ref.copy(), expression=literal(self.max))
        counts = scope.scoped(
            in_scope(),
            exp.alias_(count_when(below) if below else exp.Literal.number(0), "below_min"),
            exp.alias_(count_when(above) if above else exp.Literal.number(0), "above_max"),
            exp.alias_(count_when(is_null(ref)), "null_values"),
        )
        outside: list[exp.Expr] = [c.copy() for c in (below, above) if c is not None]
        if self.null == "violation":
            outside.append(is_null(ref))
        violation = exp.or_(*outside) if len(outside) > 1 else outside[0]
        return scope.done(counts, scope.row_sample(violation, column.name), column)

    def judged(self, counts: Counts) -> Judged:
        """Rows out of range (and NULLs with ``null: violation``) against ``expect``."""
        nulls = counts.count("null_values") if self.null == "violation" else 0
        below, above = counts.count("below_min"), counts.count("above_max")
        counts.metrics["violations"] = below + above + nulls
        return counts.judge_compared(self, sample_rows=counts.count("violations"))

    def nothing_compared(self, counts: Counts) -> str | None:
        """With ``null: allowed``, a column NULL in every row compared nothing."""
        return all_null(self.column, counts) if self.null == "allowed" else None

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """``2 below min, 0 above max, 1 NULL in 1,000 rows``."""
        below, above = metric(result, "below_min"), metric(result, "above_max")
        nulls, scope = metric(result, "null_values"), metric(result, "rows_in_scope")
        return f"{below:,} below min, {above:,} above max, {nulls:,} NULL in {rows(scope)}"

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """Numeric bounds need a number column; date bounds a date or timestamp one."""
        bounds = [b for b in (self.min, self.max) if b is not None]
        numeric = all(isinstance(b, int | float) for b in bounds)
        if numeric and have not in NUMBER_FAMILIES:
            need = "numeric min/max need a number column"
            return [(("column",), f"{self.column} is {column_type}: {need}")]
        if not numeric and have not in TEMPORAL_FAMILIES:
            return [
                (
                    ("column",),
                    f"{self.column} is {column_type}: date min/max need a date or timestamp column",
                )
            ]
        return []


def _bound_kind(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return "timestamp"
    if isinstance(value, dt.date):
        return "date"
    return "number"
