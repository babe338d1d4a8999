"""The sqlglot terms several kinds' queries are made of: counts, NULL tests, literals.

Counts use ``count(CASE WHEN … THEN 1 END)``, which is 0, never NULL, over
no rows, and runs in every dialect; values are literals built by sqlglot,
never string formatting.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlglot import exp

ROWS = "rows"
"""Name of the per-value row count in value samples (``accepted_values``, …)."""

SEGMENT = "segment_"
"""The prefix of a segmented check's segment columns in its counts (``segment_1``…)."""


def count(value: exp.Expr) -> exp.Count:
    """``count(value)`` as a 64-bit count in every dialect.

    T-SQL's ``COUNT`` is a 32-bit ``int`` that fails past 2,147,483,647 rows, and the
    ``SUM`` of it too; sqlglot writes this as ``COUNT_BIG`` there, ``COUNT`` elsewhere.
    """
    return exp.Count(this=value, big_int=True)


def count_when(condition: exp.Expr) -> exp.Expr:
    """``count(CASE WHEN condition THEN 1 END)``: 0 over no rows."""
    return count(exp.Case().when(condition, exp.Literal.number(1)))


def nulls_last(value: exp.Expr) -> exp.Ordered:
    """``value`` ascending with NULLs last on every engine (SQLite sorts them first by default).

    sqlglot writes ``NULLS LAST`` only where the dialect's default differs.
    """
    return exp.Ordered(this=value.copy(), nulls_first=False)


def is_null(column: exp.Expr) -> exp.Expr:
    """``column IS NULL``."""
    return exp.Is(this=column.copy(), expression=exp.Null())


def not_null(column: exp.Expr) -> exp.Expr:
    """``NOT column IS NULL``."""
    return exp.Not(this=is_null(column))


def count_distinct_when(condition: exp.Expr, value: exp.Expr) -> exp.Expr:
    """``count(DISTINCT CASE WHEN condition THEN value END)``."""
    return count(exp.Distinct(expressions=[exp.Case().when(condition.copy(), value.copy())]))


def literal(value: Any, *, as_text: bool = False) -> exp.Expr:
    """A YAML value as a SQL literal; ``as_text`` writes numbers as text (a text column)."""
    if isinstance(value, bool):
        return exp.Literal.string(str(value).lower()) if as_text else exp.Boolean(this=value)
    if isinstance(value, int | float | Decimal):
        text = repr(value) if isinstance(value, float) else str(value)
        return exp.Literal.string(text) if as_text else exp.Literal.number(text)
    if isinstance(value, dt.datetime):
        to = "TIMESTAMPTZ" if value.tzinfo else "TIMESTAMP"
        return exp.Cast(
            this=exp.Literal.string(value.isoformat(sep=" ")), to=exp.DataType.build(to)
        )
    if isinstance(value, dt.date):
        return exp.Cast(this=exp.Literal.string(value.isoformat()), to=exp.DataType.build("DATE"))
    return exp.Literal.string(str(value))
