"""What a check's result must be: the ``expect`` forms, read into an ``Expectation``.

An automation file gives each check an ``expect`` string; ``parse_expectation``
reads it when the file is loaded. The accepted forms::

    == N    != N    < N    <= N    > N    >= N    between A and B
    <= 1%   > 0%    between 1% and 5%           a percent of a count
    < 3h    <= 30m  between 1h and 2d           a duration (s, m, h, d)
    is true         is false                    a boolean
    empty           not empty                   rows (a query listing violations)
    anomaly         {anomaly: {…}}              against the value's own history
                                                (``checks.fields.anomaly_rule``)

Keywords are case-insensitive; numbers may be negative, decimal or scientific
(``-3``, ``0.05``, ``1e-3``); percents and durations are never negative, and
a percent (of a count) is at most 100%. ``between`` is inclusive at both ends,
and both of its bounds carry the same unit.

Whether a measured value meets it is ``checks.fields.judgement``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from checks.fields.anomaly_rule import AnomalyRule, parse_rule

Op = Literal[
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "between",
    "empty",
    "not_empty",
    "is_true",
    "is_false",
    "anomaly",
]
Unit = Literal["number", "percent", "duration", "boolean", "rows", "anomaly"]
"""What an expectation measures: a plain number, a percent of a count, a
duration (bounds in seconds), a boolean, the rows a query returns, or a
number judged against its own history (``anomaly``)."""

ACCEPTED_FORMS = (
    "'== N', '!= N', '< N', '<= N', '> N', '>= N', 'between A and B' "
    "(N may be a percent like '1%' or a duration like '3h'), 'is true', 'is false', "
    "'empty', 'not empty' or 'anomaly'"
)
DURATION_UNITS_S: dict[str, int] = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
"""Seconds per duration unit, for ``expect:`` bounds and every duration of a file."""

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_BOUND = rf"({_NUMBER})\s*(%|[smhdw])?"
_COMPARE = re.compile(rf"(==|!=|<=|>=|<|>)\s*{_BOUND}")
_BETWEEN = re.compile(rf"between\s+{_BOUND}\s+and\s+{_BOUND}", re.IGNORECASE)
_EMPTY = re.compile(r"(not\s+)?empty", re.IGNORECASE)
_BOOLEAN = re.compile(r"is\s+(true|false)", re.IGNORECASE)
_COMPARE_OPS: dict[str, Op] = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


@dataclass(frozen=True)
class Expectation:
    """A parsed ``expect`` string.

    Attributes:
        op: the comparison; ``empty``/``not_empty`` look at the row count,
            ``is_true``/``is_false`` at a boolean.
        low: the N of a comparison, or A of ``between``; ``None`` otherwise.
            A percent's N is the percent (``1`` for ``1%``); a duration's is
            in seconds (``10800`` for ``3h``).
        high: B of ``between``; ``None`` otherwise.
        unit: what is measured (``Unit``).
        text: the normalised text, e.g. ``"<= 0.05"``, ``"<= 1%"``,
            ``"between 1h and 2d"``, ``"not empty"``, ``"anomaly: mad"``.
            Filled in from the other fields when left empty.
        anomaly: the rule of an ``anomaly`` expectation; None for the others.

    Raises:
        ValueError: the bounds do not fit the operator (a missing bound, a
            non-finite one, a negative percent or duration, a percent above
            100, or ``between``
            with A above B).

    """

    op: Op
    low: Decimal | None = None
    high: Decimal | None = None
    unit: Unit = "number"
    text: str = ""
    anomaly: AnomalyRule | None = None

    def __post_init__(self) -> None:
        if self.op == "anomaly" or self.anomaly is not None:
            if self.op != "anomaly" or self.low is not None or self.high is not None:
                raise ValueError("'anomaly' takes no number")
            rule = self.anomaly or AnomalyRule()
            object.__setattr__(self, "anomaly", rule)
            object.__setattr__(self, "unit", "anomaly")
            object.__setattr__(self, "text", rule.text)
            return
        if self.op in ("empty", "not_empty", "is_true", "is_false"):
            if self.low is not None or self.high is not None:
                raise ValueError(f"'{self.op.replace('_', ' ')}' takes no number")
            want: Unit = "rows" if self.op in ("empty", "not_empty") else "boolean"
            object.__setattr__(self, "unit", want)
        else:
            self._check_bounds()
        if not self.text:
            object.__setattr__(self, "text", self._normalised_text())

    def _check_bounds(self) -> None:
        if self.unit not in ("number", "percent", "duration"):
            raise ValueError(f"'{self.op}' compares a number, a percent or a duration")
        if self.low is None or not self.low.is_finite():
            raise ValueError(f"'{self.op}' needs a finite number")
        bounds = [self.low]
        if self.op == "between":
            if self.high is None or not self.high.is_finite():
                raise ValueError("'between' needs two finite numbers")
            bounds.append(self.high)
            if self.low > self.high:
                raise ValueError(
                    f"between {self._bound(self.low)} and {self._bound(self.high)}: "
                    "the first bound is above the second"
                )
        elif self.high is not None:
            raise ValueError(f"'{self.op}' takes one number")
        if self.unit != "number" and any(b < 0 for b in bounds):
            raise ValueError(f"a {self.unit} is never negative")
        over = [b for b in bounds if self.unit == "percent" and b > 100]
        if over:  # a percent of a count: above 100% it is always met, or never
            raise ValueError(f"a percent of a count is at most 100% (got {self._bound(over[0])})")

    @property
    def scalar(self) -> bool:
        """Whether the value is one number, percent, duration or boolean (not rows)."""
        return self.unit != "rows"

    def __str__(self) -> str:
        return self.text

    def _bound(self, value: Decimal) -> str:
        if self.unit == "percent":
            return f"{value}%"
        if self.unit == "duration":
            return duration_text(value)
        return str(value)

    def _normalised_text(self) -> str:
        if self.op in ("empty", "not_empty", "is_true", "is_false"):
            return self.op.replace("_", " ")
        assert self.low is not None  # checked in __post_init__
        if self.op == "between":
            assert self.high is not None
            return f"between {self._bound(self.low)} and {self._bound(self.high)}"
        return f"{self.op} {self._bound(self.low)}"


def duration_text(seconds: Decimal | float | int) -> str:
    """Write seconds in the largest unit that holds them whole: ``3h``, ``90m``, ``1.5s``."""
    exact = Decimal(seconds) if not isinstance(seconds, float) else Decimal(repr(seconds))
    for unit in ("d", "h", "m"):
        size = DURATION_UNITS_S[unit]
        if exact and exact % size == 0:
            return f"{exact // size}{unit}"
    return f"{exact.normalize():f}s" if exact else "0s"


def _bound(number: str, suffix: str | None) -> tuple[Decimal, Unit]:
    value = Decimal(number)
    if suffix is None:
        return value, "number"
    if suffix == "%":
        return value, "percent"
    return value * DURATION_UNITS_S[suffix.lower()], "duration"


def _compare_form(cleaned: str) -> Expectation | None:
    match = _COMPARE.fullmatch(cleaned)
    if not match:
        return None
    value, unit = _bound(match.group(2), match.group(3))
    return Expectation(_COMPARE_OPS[match.group(1)], value, unit=unit)


def _between_form(cleaned: str) -> Expectation | None:
    match = _BETWEEN.fullmatch(cleaned)
    if not match:
        return None
    low, low_unit = _bound(match.group(1), match.group(2))
    high, high_unit = _bound(match.group(3), match.group(4))
    if low_unit != high_unit:
        raise ValueError(
            f"between {match.group(1)}{match.group(2) or ''} and "
            f"{match.group(3)}{match.group(4) or ''}: both bounds need the same unit"
        )
    return Expectation("between", low, high, unit=low_unit)


def _word_form(cleaned: str) -> Expectation | None:
    if match := _EMPTY.fullmatch(cleaned):
        return Expectation("not_empty" if match.group(1) else "empty")
    if match := _BOOLEAN.fullmatch(cleaned):
        return Expectation("is_true" if match.group(1).lower() == "true" else "is_false")
    return None


FORMS: list[Callable[[str], Expectation | None]] = [_compare_form, _between_form, _word_form]
"""The readers ``parse_expectation`` tries in order; each returns None when the
text is not its form, or raises ``ValueError`` for a form it owns but cannot accept."""


def parse_expectation(text: str) -> Expectation:
    """Read an ``expect`` string (the forms are in the module docstring).

    Raises:
        ValueError: the text is not one of the accepted forms; the one-line
            message lists them.

    """
    if not isinstance(text, str):
        raise ValueError(f"expect must be text such as '== 0'; the forms are {ACCEPTED_FORMS}")
    cleaned = " ".join(text.split())
    if not cleaned:
        raise ValueError(
            f"expect is empty; use {ACCEPTED_FORMS} (in YAML, quote a value starting with '>')"
        )
    rule = parse_rule(cleaned)
    if rule is not None:
        return Expectation("anomaly", anomaly=rule)
    for form in FORMS:
        found = form(cleaned)
        if found is not None:
            return found
    raise ValueError(f"cannot read expect '{cleaned}'; use {ACCEPTED_FORMS}")
