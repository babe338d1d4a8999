"""What a declared check's SQL must return, and whether a result meets it.

An automation file gives each check an ``expect`` string; ``parse_expectation``
reads it when the file is loaded, and ``evaluate`` judges the rows the check's
query returned. The accepted forms::

    == N    != N    < N    <= N    > N    >= N    between A and B    empty    not empty

Keywords are case-insensitive; numbers may be negative, decimal or scientific
(``-3``, ``0.05``, ``1e-3``). ``between`` is inclusive at both ends.

Comparison rules (from the issue that specified expectations):

- Exact values (``int``, ``Decimal``) are compared exactly with the
  expectation's ``Decimal``; nothing goes through ``float``.
- Floating-point values are compared within a relative tolerance of 1e-9
  (as ``math.isclose(rel_tol=1e-9, abs_tol=0)``): a value that close to a bound
  counts as equal to it, for every operator. So a DOUBLE ``0.1 + 0.2``
  (0.30000000000000004) meets ``== 0.3`` and ``<= 0.3`` but not ``< 0.3``.
  The comparison is done on exact decimals (the float's exact binary value,
  ``Decimal(float)``, against the bound as written): the bound is never
  turned into a float, so one that a float cannot hold still compares by its
  true value. ``== 1e-400`` is not met by a DOUBLE 0.0 (as a float, 1e-400
  would be 0.0), and ``< 1e309`` is met by 1e308 (as a float, 1e309 would be
  infinite).
- NULL, no row, more than one row or column, booleans, strings (even numeric
  ones), NaN and infinities are errors, never a pass.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Context, Decimal, localcontext
from typing import Any, Literal, assert_never

Op = Literal["==", "!=", "<", "<=", ">", ">=", "between", "empty", "not_empty"]

ACCEPTED_FORMS = (
    "'== N', '!= N', '< N', '<= N', '> N', '>= N', 'between A and B', 'empty' or 'not empty'"
)
FLOAT_REL_TOL = 1e-9

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_COMPARE = re.compile(rf"(==|!=|<=|>=|<|>)\s*({_NUMBER})")
_BETWEEN = re.compile(rf"between\s+({_NUMBER})\s+and\s+({_NUMBER})", re.IGNORECASE)
_EMPTY = re.compile(r"(not\s+)?empty", re.IGNORECASE)
_COMPARE_OPS: dict[str, Op] = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_SHAPE_RULE = "a scalar expectation needs exactly one row with one column"


@dataclass(frozen=True)
class Expectation:
    """A parsed ``expect`` string.

    Attributes:
        op: the comparison; ``empty`` and ``not_empty`` look at the row count.
        low: the N of a comparison, or A of ``between``; ``None`` otherwise.
        high: B of ``between``; ``None`` otherwise.
        text: the normalised text, e.g. ``"<= 0.05"``, ``"between 1 and 2"``,
            ``"not empty"``. Filled in from the other fields when left empty.

    Raises:
        ValueError: the bounds do not fit the operator (a missing bound, a
            non-finite one, or ``between`` with A above B).

    """

    op: Op
    low: Decimal | None = None
    high: Decimal | None = None
    text: str = ""

    def __post_init__(self) -> None:
        if self.op in ("empty", "not_empty"):
            if self.low is not None or self.high is not None:
                raise ValueError(f"'{self.op}' takes no number")
        elif self.low is None or not self.low.is_finite():
            raise ValueError(f"'{self.op}' needs a finite number")
        elif self.op == "between":
            if self.high is None or not self.high.is_finite():
                raise ValueError("'between' needs two finite numbers")
            if self.low > self.high:
                raise ValueError(
                    f"between {self.low} and {self.high}: the first bound is above the second"
                )
        elif self.high is not None:
            raise ValueError(f"'{self.op}' takes one number")
        if not self.text:
            object.__setattr__(self, "text", self._normalised_text())

    @property
    def scalar(self) -> bool:
        """Whether the query must return one value (``False`` for ``empty``/``not empty``)."""
        return self.op not in ("empty", "not_empty")

    def __str__(self) -> str:
        return self.text

    def _normalised_text(self) -> str:
        if self.op == "empty":
            return "empty"
        if self.op == "not_empty":
            return "not empty"
        if self.op == "between":
            return f"between {self.low} and {self.high}"
        return f"{self.op} {self.low}"


def parse_expectation(text: str) -> Expectation:
    """Read an ``expect`` string (the forms are in the module docstring).

    Raises:
        ValueError: the text is not one of the accepted forms; the one-line
            message lists them.

    """
    if not isinstance(text, str):
        raise ValueError(
            f"expect must be text such as '== 0', got {text!r}; the forms are {ACCEPTED_FORMS}"
        )
    cleaned = " ".join(text.split())
    if not cleaned:
        raise ValueError(
            f"expect is empty; use {ACCEPTED_FORMS} (in YAML, quote a value starting with '>')"
        )
    if match := _COMPARE.fullmatch(cleaned):
        return Expectation(_COMPARE_OPS[match.group(1)], Decimal(match.group(2)))
    if match := _BETWEEN.fullmatch(cleaned):
        return Expectation("between", Decimal(match.group(1)), Decimal(match.group(2)))
    if match := _EMPTY.fullmatch(cleaned):
        return Expectation("not_empty" if match.group(1) else "empty")
    raise ValueError(f"cannot read expect {cleaned!r}; use {ACCEPTED_FORMS}")


@dataclass(frozen=True)
class Outcome:
    """How one check's result measured up to its expectation.

    Attributes:
        value: the scalar the query returned, as the driver gave it (``Decimal``,
            ``int``, ``float``, …), or the row count for ``empty``/``not empty``;
            ``None`` when there was no single value.
        passed: whether the expectation held; ``None`` when ``error`` is set.
        error: why the result could not be judged, e.g. ``"returned NULL"``.

    """

    value: Any
    passed: bool | None
    error: str | None = None


def evaluate(
    expectation: Expectation,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    row_count: int,
) -> Outcome:
    """Judge a query result against an expectation.

    Args:
        expectation: what the result must satisfy.
        columns: the result's column names.
        rows: the rows fetched (may be fewer than ``row_count`` when truncated).
        row_count: how many rows the query returned in all.

    Returns:
        An ``Outcome``. Shape problems (no row, several rows or columns), NULL
        and non-numeric values give an ``Outcome`` with ``error`` set and
        ``passed=None``; this function does not raise for them.

    """
    if not expectation.scalar:
        passed = row_count == 0 if expectation.op == "empty" else row_count > 0
        return Outcome(value=row_count, passed=passed)
    if row_count == 0 or not rows:
        return _error("returned no row")
    if row_count > 1:
        return _error(f"returned {row_count} rows; {_SHAPE_RULE}")
    if len(columns) != 1 or len(rows[0]) != 1:
        width = len(columns) if len(columns) != 1 else len(rows[0])
        noun = "column" if width == 1 else "columns"
        return _error(f"returned {width} {noun}; {_SHAPE_RULE}")
    value = rows[0][0]
    problem = _not_a_number(value)
    if problem:
        return _error(problem, value)
    return Outcome(value=value, passed=_holds(expectation, value))


def _error(message: str, value: Any = None) -> Outcome:
    return Outcome(value=value, passed=None, error=message)


def _not_a_number(value: Any) -> str | None:
    """Return why ``value`` cannot be compared, or ``None`` when it can."""
    if value is None:
        return "returned NULL"
    if isinstance(value, bool):
        return f"value {value!r} is a boolean, not a number"
    if isinstance(value, Decimal):
        return None if value.is_finite() else f"value {value} is not a finite number"
    if isinstance(value, numbers.Integral):
        return None
    if isinstance(value, numbers.Real):
        return None if math.isfinite(float(value)) else f"value {value} is not a finite number"
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"value {shown} is not a number"


_FLOAT_REL_TOL = Decimal(str(FLOAT_REL_TOL))
_CONTEXT = Context(prec=60, Emin=-999_999, Emax=999_999)


def _compare(value: Any, bound: Decimal) -> int:
    """Return -1, 0 or 1 as ``value`` is below, equal to or above ``bound``.

    Exact types compare exactly; floats are equal to a bound within
    ``FLOAT_REL_TOL`` of it. Both sides stay decimals: the float's exact
    value against the bound, so a bound beyond the range of floats (1e-400,
    1e309) is not rounded to 0.0 or infinity first.
    """
    if isinstance(value, Decimal | numbers.Integral):
        exact = value if isinstance(value, Decimal) else Decimal(int(value))
        return (exact > bound) - (exact < bound)
    number = Decimal(float(value))  # exact: every finite float is a decimal
    if number == bound:
        return 0
    # |a - b| <= rel_tol * max(|a|, |b|), as math.isclose(abs_tol=0), in a
    # context of our own: 60 digits cannot move a result across a 1e-9 margin.
    with localcontext(_CONTEXT):
        if abs(number - bound) <= _FLOAT_REL_TOL * max(abs(number), abs(bound)):
            return 0
    return 1 if number > bound else -1


def _holds(expectation: Expectation, value: Any) -> bool:
    low = expectation.low
    assert low is not None  # guaranteed for scalar expectations by Expectation.__post_init__
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
    if op == "empty" or op == "not_empty":
        raise ValueError(f"'{op}' is not a scalar expectation")
    assert_never(op)
