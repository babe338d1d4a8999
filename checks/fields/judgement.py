"""Whether a measured value meets its ``Expectation``, and the ``Judgement`` that says so.

How a value is judged (``judge_number``, ``judge_percent``,
``judge_duration``, ``judge_boolean``, ``judge_rows``):

- Integers and decimals are compared exactly with the bound as written (a
  ``Decimal``); nothing goes through ``float``.
- A floating-point value equals a bound when they differ by at most one part
  in 10^10 of the larger (``math.isclose(rel_tol=1e-10, abs_tol=0)``),
  whatever the operator. So a DOUBLE ``0.1 + 0.2`` (0.30000000000000004)
  meets ``== 0.3`` and ``<= 0.3`` but not ``< 0.3``; an average of 0.15 over
  a million rows, which PostgreSQL's float8 sum leaves about 2e-11 off,
  meets ``between 0.15 and 0.15``; and 99.9999999 (one part in 10^9 below
  100) meets ``< 100``. The comparison is made on exact decimals (the float's
  exact binary value against the bound as written), so a bound no float can
  hold keeps its value (``== 1e-400`` is not met by 0.0). There is no absolute
  tolerance: near zero, compare with ``between -1e-9 and 1e-9``.
- A percent is computed from the counts, exactly (``count / total * 100`` as
  a fraction), never from a rounded share: 3 of 1,000,000 is ``> 0%``, and
  999,999 of 1,000,000 is ``< 100%``. Over a total of 0 it is undefined:
  never 0 % and never 100 %; the check is not evaluated.
- A duration is compared exactly in microseconds. An interval holding months
  counts each month as 30 days (as DuckDB and psycopg give it to Python).
- NULL, no row, several rows or columns, and a value of the wrong kind (text,
  a date for a number, a number for a duration, NaN, infinities) are errors,
  never a pass; the message names the SQL kind of value, never a Python repr.

A check's ``value`` keeps one JSON type from run to run: a number for number
and percent expectations (the percent itself), seconds for durations, a
boolean for ``is true``/``is false``, the row count for ``empty``; ``null``
when there is none (an error, or not evaluated).
"""

from __future__ import annotations

import datetime as dt
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Context, Decimal, localcontext
from fractions import Fraction
from typing import Any, assert_never

from checks.fields.expectation import Expectation
from checks.fields.value_words import describe, finite, non_finite_name

FLOAT_REL_TOL = 1e-10
"""Relative tolerance for floating-point values (see the module docstring)."""

Value = bool | int | float | None
"""A check's value as JSON keeps it (see the module docstring)."""


@dataclass(frozen=True)
class Judgement:
    """How one measured value came out against its expectation.

    Attributes:
        value: the value compared, JSON-safe (see ``Value``); ``None`` when
            there was none.
        passed: whether the expectation held; ``None`` when it could not be
            judged (``error`` or ``not_evaluated`` says why).
        error: why the value could not be judged, e.g. ``"returned NULL"``.
        not_evaluated: why there was nothing to judge, e.g. a percent over a
            total of 0 rows; never an error, never a pass.

    """

    value: Value
    passed: bool | None
    error: str | None = None
    not_evaluated: str | None = None


def failure(message: str) -> Judgement:
    """A ``Judgement`` that could not be judged, with its reason."""
    return Judgement(value=None, passed=None, error=message)


_SHAPE_RULE = "a scalar expectation needs exactly one row with one column"
_PERCENT_SHAPE = "a percent needs one row with two columns: the count and the total"


def evaluate(
    expectation: Expectation,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    row_count: int,
) -> Judgement:
    """Judge a query's result (a raw ``sql`` check) against an expectation.

    ``empty``/``not empty`` look at ``row_count``; a percent needs one row of
    two columns, the count and the total; every other form needs one row with
    one column.

    Args:
        expectation: what the result must satisfy.
        columns: the result's column names.
        rows: the rows fetched (may be fewer than ``row_count`` when truncated).
        row_count: how many rows the query returned in all.

    Returns:
        A ``Judgement``. Shape problems (no row, several rows or columns), NULL
        and values of the wrong kind give an ``Judgement`` with ``error`` set and
        ``passed=None``; this function does not raise for them.

    """
    if expectation.unit == "rows":
        return judge_rows(expectation, row_count)
    if row_count == 0 or not rows:
        return failure("returned no row")
    rule = _PERCENT_SHAPE if expectation.unit == "percent" else _SHAPE_RULE
    if row_count > 1:
        return failure(f"returned {row_count} rows; {rule}")
    width = len(columns) if len(columns) == len(rows[0]) else len(rows[0])
    wanted = 2 if expectation.unit == "percent" else 1
    if width != wanted:
        return failure(f"returned {width} column{'' if width == 1 else 's'}; {rule}")
    row = rows[0]
    if expectation.unit == "percent":
        return judge_percent(expectation, row[0], row[1])
    if expectation.unit == "duration":
        return judge_duration(expectation, row[0])
    if expectation.unit == "anomaly":
        return measure_for_history(row[0])
    if expectation.unit == "boolean":
        return judge_boolean(expectation, row[0])
    return judge_number(expectation, row[0])


def judge_rows(expectation: Expectation, row_count: int) -> Judgement:
    """Judge ``empty``/``not empty`` on the number of rows a query returned."""
    if expectation.op == "empty":
        return Judgement(value=row_count, passed=row_count == 0)
    if expectation.op == "not_empty":
        return Judgement(value=row_count, passed=row_count > 0)
    raise ValueError(f"'{expectation.text}' does not look at rows")


def judge_count(expectation: Expectation, count: int, total: int | None) -> Judgement:
    """Judge a count: with a number, a percent of ``total``, or ``empty`` (0) / ``not empty``.

    Args:
        expectation: a number, percent or rows expectation.
        count: how many rows (or groups) were counted.
        total: the rows the count is a part of (the percent's denominator);
            needed for a percent.

    Returns:
        For a percent over ``total == 0``, an ``Judgement`` with ``not_evaluated``
        set: the percent is undefined.

    """
    if expectation.unit == "rows":
        return judge_rows(expectation, count)
    if expectation.unit == "anomaly":
        return measure_for_history(count)
    if expectation.unit == "percent":
        if total is None:
            return failure("a percent needs a total to divide by")
        return judge_percent(expectation, count, total)
    return judge_number(expectation, count)


AWAITING_HISTORY = "judged against its history"
"""The ``not_evaluated`` reason of a value measured for an anomaly expectation and not
yet set against its baseline (``checks.declared.anomaly`` replaces it)."""


def measure_for_history(value: Any) -> Judgement:
    """A number for an ``anomaly`` expectation: not judged here (never a pass by itself).

    Returns an ``Judgement`` with ``not_evaluated`` = ``AWAITING_HISTORY`` and the
    value, or an error for NULL and values that are not finite numbers.
    """
    problem = _not_a_number(value)
    if problem:
        return failure(problem)
    return Judgement(value=_json_number(value), passed=None, not_evaluated=AWAITING_HISTORY)


def judge_number(expectation: Expectation, value: Any) -> Judgement:
    """Judge one value against a number expectation (see the module docstring)."""
    if expectation.unit != "number":
        raise ValueError(f"'{expectation.text}' does not compare a plain number")
    problem = _not_a_number(value)
    if problem:
        return failure(problem)
    return Judgement(value=_json_number(value), passed=_holds(expectation, _exact(value)))


def judge_percent(expectation: Expectation, count: Any, total: Any) -> Judgement:
    """Judge ``count`` as a percent of ``total``, computed exactly from the two counts."""
    for what, number in (("count", count), ("total", total)):
        if number is None:
            return failure(f"the {what} is NULL")
        if isinstance(number, bool) or not _is_whole(number):
            return failure(f"the {what} is {describe(number)}, not a count of rows")
    whole_count, whole_total = int(count), int(total)
    if whole_count < 0 or whole_total < 0:
        return failure(f"counts are never negative ({whole_count} of {whole_total})")
    if whole_total == 0:
        return Judgement(
            value=None,
            passed=None,
            not_evaluated="a percent over 0 rows is undefined (the total is 0)",
        )
    percent = Fraction(whole_count, whole_total) * 100
    return Judgement(value=float(percent), passed=_holds(expectation, percent))


def judge_duration(expectation: Expectation, value: Any) -> Judgement:
    """Judge an interval (``datetime.timedelta``) against a duration expectation."""
    if not isinstance(value, dt.timedelta):
        if value is None:
            return failure("returned NULL")
        return failure(f"returned {describe(value)}, not an interval; a duration needs one")
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    seconds = Fraction(micros, 1_000_000)
    return Judgement(value=float(seconds), passed=_holds(expectation, seconds))


def judge_seconds(expectation: Expectation, value: Any) -> Judgement:
    """Judge a duration already in seconds (a check's kept ``value``) against a duration."""
    problem = _not_a_number(value)
    if problem:
        return failure(problem)
    return Judgement(value=_json_number(value), passed=_holds(expectation, _exact(value)))


def judge_boolean(expectation: Expectation, value: Any) -> Judgement:
    """Judge a boolean against ``is true`` / ``is false``."""
    if value is None:
        return failure("returned NULL")
    if not isinstance(value, bool):
        return failure(f"returned {describe(value)}, not a boolean")
    return Judgement(value=value, passed=value is (expectation.op == "is_true"))


def _is_whole(value: Any) -> bool:
    if isinstance(value, numbers.Integral):
        return True
    if isinstance(value, Decimal):
        return value.is_finite() and value == value.to_integral_value()
    return False


def _not_a_number(value: Any) -> str | None:
    """Return why ``value`` cannot be compared as a number, or ``None`` when it can."""
    if value is None:
        return "returned NULL"
    if isinstance(value, bool):
        return f"returned {describe(value)}, not a number; compare it with 'is true' or 'is false'"
    if isinstance(value, Decimal | float):
        if not finite(value):
            return f"returned {non_finite_name(value)}, not a finite number"
        return None
    if isinstance(value, numbers.Integral | numbers.Real):
        return None
    if isinstance(value, dt.timedelta):
        return f"returned {describe(value)}; compare it with a duration such as '< 3h'"
    return f"returned {describe(value)}, not a number"


def _json_number(value: Any) -> int | float:
    """A number as JSON keeps it: integers exact, everything else a float."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return float(value)


Exact = Decimal | Fraction | float


def _exact(value: Any) -> Exact:
    if isinstance(value, Decimal | float):
        return value
    if isinstance(value, numbers.Integral):
        return Decimal(int(value))
    return float(value)


_FLOAT_REL_TOL = Decimal(repr(FLOAT_REL_TOL))
_CONTEXT = Context(prec=60, Emin=-999_999, Emax=999_999)


def _compare(value: Exact, bound: Decimal) -> int:
    """Return -1, 0 or 1 as ``value`` is below, equal to or above ``bound``.

    Decimals and fractions compare exactly; a float equals a bound within
    ``FLOAT_REL_TOL`` of it. Both sides stay exact: the float's exact value
    against the bound, so a bound beyond the range of floats (1e-400, 1e309)
    is not rounded to 0.0 or infinity first.
    """
    if isinstance(value, Fraction):
        exact = Fraction(bound)
        return (value > exact) - (value < exact)
    if isinstance(value, Decimal):
        return (value > bound) - (value < bound)
    number = Decimal(value)  # exact: every finite float is a decimal
    if number == bound:
        return 0
    # |a - b| <= rel_tol * max(|a|, |b|), as math.isclose(abs_tol=0), in a
    # context of our own: 60 digits cannot move a result across the margin.
    with localcontext(_CONTEXT):
        if abs(number - bound) <= _FLOAT_REL_TOL * max(abs(number), abs(bound)):
            return 0
    return 1 if number > bound else -1


def _holds(expectation: Expectation, value: Exact) -> bool:
    low = expectation.low
    assert low is not None  # guaranteed for comparisons by Expectation.__post_init__
    order = _compare(value, low)
    op = expectation.op
    if op == "==":
        return order == 0
    if op == "!=":
        return order != 0
    if op == "<":
        return order < 0
    if op == "<=":
        return order <= 0
    if op == ">":
        return order > 0
    if op == ">=":
        return order >= 0
    if op == "between":
        assert expectation.high is not None
        return order >= 0 and _compare(value, expectation.high) <= 0
    if op == "empty" or op == "not_empty" or op == "is_true" or op == "is_false":
        raise ValueError(f"'{expectation.text}' is not a comparison")
    if op == "anomaly":
        raise ValueError(f"'{expectation.text}' is not a comparison")
    assert_never(op)
