"""A segmented check's SQL (``by:``): its segment columns in the grouped counts, and the sample's.

The counts query of a check with ``by: [region]`` is its kind's counts query
grouped by the segment columns, each returned as ``segment_1``, ``segment_2``…
(``GROUP BY`` puts NULLs in one group: NULL is a segment of its own). The
sample of violating rows reads only the failing segments: a condition built
from each failing segment's values as sqlglot literals (``t.region = 'EU'``,
``t.region IS NULL``), never as text pasted into SQL.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlglot import exp

from checks.kinds.sql_terms import SEGMENT, is_null, literal

SegmentValues = tuple[Any, ...]
"""One segment's values, one per ``by:`` column, as the driver returned them (None: NULL)."""


def result_names(count: int) -> list[str]:
    """The names of ``count`` segment columns in the counts' result."""
    return [f"{SEGMENT}{i}" for i in range(1, count + 1)]


def projections(refs: Sequence[exp.Column]) -> list[exp.Expr]:
    """Each segment column as ``ref AS segment_<i>``."""
    return [
        exp.alias_(ref.copy(), name)
        for ref, name in zip(refs, result_names(len(refs)), strict=True)
    ]


def writable(value: Any) -> bool:
    """Whether a segment value can be written back as a literal (to sample its segment)."""
    return value is None or isinstance(
        value, str | bool | int | float | Decimal | dt.date | dt.datetime
    )


NON_FINITE_DIALECTS = frozenset(
    {"duckdb", "postgres", "spark", "databricks", "clickhouse", "snowflake", "bigquery", "trino"}
)
"""Dialects whose ``CAST('NaN' AS DOUBLE)`` (and ``'Infinity'``, ``'-Infinity'``) is that value.

MySQL and MariaDB store no NaN nor infinity; SQLite reads ``'NaN'`` as 0.
"""


def value_literal(value: Any, dialect: str) -> exp.Expr:
    """One segment value as a SQL literal; NaN and ±infinity as a typed cast.

    ``CAST('NaN' AS DOUBLE)`` (``DECIMAL`` for a Decimal): a bare ``nan`` would be
    a column reference.

    Raises:
        ValueError: NaN or infinity in a dialect that cannot write it (``NON_FINITE_DIALECTS``).
    """
    if isinstance(value, float | Decimal) and not math.isfinite(value):
        if dialect not in NON_FINITE_DIALECTS:
            raise ValueError(f"{value} cannot be written as a literal in {dialect} SQL")
        text = "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        to = "DECIMAL" if isinstance(value, Decimal) else "DOUBLE"
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build(to))
    return literal(value)


def matching(
    refs: Sequence[exp.Column], segments: Sequence[SegmentValues], dialect: str
) -> exp.Expr:
    """The rows of any of ``segments``: ``(a = 'x' AND b IS NULL) OR …``, in ``dialect``.

    Raises:
        ValueError: a value that cannot be written as a literal (``writable``,
            ``value_literal``).
    """
    choices: list[exp.Expr] = []
    for values in segments:
        terms: list[exp.Expr] = []
        for ref, value in zip(refs, values, strict=True):
            if not writable(value):
                raise ValueError(f"a segment value of type {type(value).__name__}")
            if value is None:
                terms.append(is_null(ref))
            else:
                terms.append(exp.EQ(this=ref.copy(), expression=value_literal(value, dialect)))
        choices.append(exp.and_(*terms) if len(terms) > 1 else terms[0])
    if not choices:
        return exp.false()
    return exp.or_(*(exp.paren(c) for c in choices)) if len(choices) > 1 else choices[0]
