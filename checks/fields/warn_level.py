"""A check's warning level: ``warn:`` beside ``expect:``, stricter than it, and what breaks it.

``warn`` takes the forms of ``expect`` (``checks.fields.expectation``). A
value that meets ``expect`` but not ``warn`` makes the check ``warned``: it
still holds, the run stays Clear, and the summary counts the warning.

``warn_problem`` says at load why a ``warn`` cannot stand beside its
``expect``. The rule: ``warn`` must allow only values ``expect`` allows,
and not all of them, so that some value can warn and none that breaks
``expect`` is only a warning. Both are read as sets of values over the
unit's own range (a percent 0 to 100, a duration or a row count 0 and up, a
number any real), so ``warn: "<= 1%"`` with ``expect: "<= 5%"`` stands,
``warn: "<= 5%"`` with ``expect: "<= 1%"`` is refused (``expect`` is the
stricter one), and ``warn: "between 2 and 8"`` with ``expect: "<= 5"`` is
refused (6 would warn yet fail). The two must compare the same unit. An
``anomaly`` expectation has no second level: ``warn`` beside ``expect:
anomaly`` (or ``warn: anomaly``) is refused.

``breaks_warning`` judges a passed check's value against ``warn`` with the
exactness of ``checks.fields.judgement``: a percent from its two counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from checks.fields.expectation import Expectation
from checks.fields.judgement import (
    Judgement,
    judge_boolean,
    judge_number,
    judge_percent,
    judge_rows,
    judge_seconds,
)

_UNIT_WORDS = {
    "number": "a number",
    "percent": "a percent",
    "duration": "a duration",
    "boolean": "a boolean",
    "rows": "rows ('empty' / 'not empty')",
    "anomaly": "against its history",
}
_RANGE: dict[str, tuple[Decimal | None, Decimal | None]] = {
    "number": (None, None),
    "percent": (Decimal(0), Decimal(100)),
    "duration": (Decimal(0), None),
    "rows": (Decimal(0), None),
}


@dataclass(frozen=True)
class _Span:
    """An interval of values; a None end is unbounded."""

    low: Decimal | None
    low_closed: bool
    high: Decimal | None
    high_closed: bool

    def clipped(self, low: Decimal | None, high: Decimal | None) -> _Span | None:
        """This span within the closed range [low, high]; None when nothing is left."""
        lo, lo_closed = self.low, self.low_closed
        if low is not None and (lo is None or lo < low):
            lo, lo_closed = low, True
        hi, hi_closed = self.high, self.high_closed
        if high is not None and (hi is None or hi > high):
            hi, hi_closed = high, True
        if (
            lo is not None
            and hi is not None
            and (lo > hi or (lo == hi and not (lo_closed and hi_closed)))
        ):
            return None
        return _Span(lo, lo_closed, hi, hi_closed)

    def within(self, other: _Span) -> bool:
        """Whether every value of this span is in ``other``."""
        if other.low is not None:
            if self.low is None or self.low < other.low:
                return False
            if self.low == other.low and self.low_closed and not other.low_closed:
                return False
        if other.high is not None:
            if self.high is None or self.high > other.high:
                return False
            if self.high == other.high and self.high_closed and not other.high_closed:
                return False
        return True


def _spans(expectation: Expectation) -> list[_Span]:
    """The values an expectation allows, as disjoint spans within its unit's range."""
    low, high, op = expectation.low, expectation.high, expectation.op
    spans: list[_Span]
    if op == "empty":
        spans = [_Span(Decimal(0), True, Decimal(0), True)]
    elif op == "not_empty":
        spans = [_Span(Decimal(1), True, None, False)]
    elif op == "==":
        spans = [_Span(low, True, low, True)]
    elif op == "!=":
        spans = [_Span(None, False, low, False), _Span(low, False, None, False)]
    elif op in ("<", "<="):
        spans = [_Span(None, False, low, op == "<=")]
    elif op in (">", ">="):
        spans = [_Span(low, op == ">=", None, False)]
    else:  # between, inclusive
        spans = [_Span(low, True, high, True)]
    bottom, top = _RANGE[expectation.unit]
    return [s for s in (span.clipped(bottom, top) for span in spans) if s is not None]


def _subset(inner: list[_Span], outer: list[_Span]) -> bool:
    # the outer spans are disjoint and never touch, so a span inside their union is inside one
    return all(any(span.within(o) for o in outer) for span in inner)


def warn_problem(warn: Expectation, expect: Expectation) -> str | None:
    """Why ``warn`` cannot be the warning level of a check expecting ``expect``, or None.

    Args:
        warn: the parsed ``warn:``.
        expect: the check's expectation (written or its kind's default).

    Returns:
        One sentence naming both texts and which one is the stricter (the
        rule is in the module docstring), or None when ``warn`` stands.
    """
    if expect.unit == "anomaly" or warn.unit == "anomaly":
        return (
            f"warn: does not go with an anomaly (warn: '{warn.text}', expect: '{expect.text}'); "
            "an anomaly is judged against the check's history with one band, so use fixed "
            "bounds in both, or leave warn out"
        )
    if warn.unit != expect.unit:
        return (
            f"warn: '{warn.text}' compares {_UNIT_WORDS[warn.unit]} but expect: "
            f"'{expect.text}' compares {_UNIT_WORDS[expect.unit]}; warn takes the same "
            "kind of bound as expect"
        )
    if expect.unit == "boolean":
        return (
            f"warn: '{warn.text}' cannot be stricter than expect: '{expect.text}': "
            "a boolean has no warning level"
        )
    warned, expected = _spans(warn), _spans(expect)
    if not _subset(warned, expected):
        if _subset(expected, warned):
            return (
                f"warn: '{warn.text}' is looser than expect: '{expect.text}'; expect is the "
                "stricter one, so every value breaking warn fails first and none would warn. "
                f"warn is the stricter bound: swap them (warn: '{expect.text}', "
                f"expect: '{warn.text}')"
            )
        return (
            f"warn: '{warn.text}' allows values that expect: '{expect.text}' fails, so it is "
            "not stricter; a warning level allows only values expect allows"
        )
    if _subset(expected, warned):
        return (
            f"warn: '{warn.text}' allows the same values as expect: '{expect.text}', so it "
            "would never warn; make warn the stricter bound"
        )
    return None


def breaks_warning(warn: Expectation, value: Any, metrics: dict[str, Any]) -> Judgement:
    """Judge a passed check's ``value`` against its warning level ``warn``.

    Args:
        warn: the ``warn:`` expectation (same unit as the check's ``expect``).
        value: the check's value as its result keeps it (``CheckResult.value``).
        metrics: the check's metrics; a percent is recomputed exactly from
            ``count`` and ``total`` (a raw query) or from the compared metric
            and ``rows_in_scope`` (a typed kind), else judged from ``value``.

    Returns:
        A ``Judgement``: ``passed`` False when ``value`` breaks ``warn``;
        ``passed`` None (with ``error``) when it cannot be judged.
    """
    if warn.unit == "rows":
        return judge_rows(warn, int(value))
    if warn.unit == "boolean":
        return judge_boolean(warn, value)
    if warn.unit == "duration":
        return judge_seconds(warn, value)
    if warn.unit == "percent":
        count, total = metrics.get("count"), metrics.get("total")
        compared = metrics.get("compared")
        if count is None and isinstance(compared, str):
            count, total = metrics.get(compared), metrics.get("rows_in_scope")
        if isinstance(count, int) and isinstance(total, int):
            return judge_percent(warn, count, total)
        return judge_number(_as_number(warn), value)
    return judge_number(warn, value)


def _as_number(warn: Expectation) -> Expectation:
    """A percent bound as a plain number of percent (``<= 1%`` as ``<= 1``)."""
    return Expectation(warn.op, warn.low, warn.high, unit="number")
