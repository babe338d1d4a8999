"""A dbt test's severity, ``error_if`` and ``warn_if`` as Lookout's ``expect:`` and ``warn:``.

dbt judges a test's failures (the rows its query returns, ``fail_calc``
``count(*)``) thus (dbt's test materialization, ``should_warn`` and
``should_error``; https://docs.getdbt.com/reference/resource-configs/severity):
with ``severity: error`` (the default) the test is an error when ``error_if``
holds (default ``!= 0``), else a warning when ``warn_if`` holds (default
``!= 0``), else it passes; with ``severity: warn`` only ``warn_if`` is read,
and the test at worst warns. A check passes where dbt's test is not an error,
and is warned where dbt's is a warning, so ``expect`` is ``error_if`` negated
and ``warn`` is ``warn_if`` negated; a warn-only test expects every value
(``>= 0`` of a count) and warns as ``warn_if`` says (an upper bound as a
range from 0: ``warn_if: ">3"`` is ``warn: between 0 and 3``, since a count is
never negative).

Only a comparison with a number (``> 5``, ``!=0``, ``>= 10``, ``= 0``, ``<> 0``) is
read: dbt pastes the text after ``failures`` in SQL, and anything else is not
translated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from checks.fields.expectation import parse_expectation
from checks.fields.warn_level import warn_problem

_CONDITION = re.compile(r"\s*(!=|<>|>=|<=|==|=|>|<)\s*(-?\d+(?:\.\d+)?)\s*")
_NEGATED = {
    ">": "<=",
    ">=": "<",
    "<": ">=",
    "<=": ">",
    "=": "!=",
    "==": "!=",
    "!=": "==",
    "<>": "==",
}
DEFAULT_CONDITION = "!= 0"


class Untranslatable(ValueError):
    """A dbt test or setting Lookout cannot judge exactly as dbt does; the message says why."""


@dataclass(frozen=True)
class Levels:
    """``expect`` and ``warn`` texts (``warn`` None: no warning level)."""

    expect: str
    warn: str | None


def negated(condition: str, setting: str) -> str:
    """The Lookout expectation that holds exactly where dbt's ``condition`` does not.

    ``condition`` is ``error_if`` or ``warn_if`` as written (``">5"``); the
    result is ``"<= 5"``.

    Raises:
        Untranslatable: not one comparison with a number.
    """
    found = _CONDITION.fullmatch(condition)
    if found is None:
        raise Untranslatable(
            f"{setting}: {condition!r} is not a comparison with a number (> 5, != 0)"
        )
    try:
        number = Decimal(found.group(2))
    except InvalidOperation:  # the pattern admits only numbers; kept for safety
        raise Untranslatable(f"{setting}: {condition!r} is not a number") from None
    return f"{_NEGATED[found.group(1)]} {number}"


def is_default(condition: str) -> bool:
    """Whether ``condition`` is dbt's default ``!= 0`` (however spaced)."""
    return _CONDITION.fullmatch(condition) is not None and negated(condition, "") == "== 0"


def levels(severity: str, error_if: str, warn_if: str) -> Levels:
    """``expect`` and ``warn`` of a count of failures under dbt's rules (module docstring).

    Raises:
        Untranslatable: a condition that is not a comparison, or a ``warn_if``
            that cannot stand beside its ``error_if`` as a warning level
            (``checks.fields.warn_level.warn_problem`` says why).
    """
    warn = negated(warn_if, "warn_if")
    warn_text: str | None
    if severity == "warn":
        expect, warn_text = ">= 0", _counted(warn)
    elif severity == "error":
        expect = negated(error_if, "error_if")
        warn_text = None if warn == expect else warn
    else:
        raise Untranslatable(f"severity: {severity!r} is neither error nor warn")
    if warn_text is not None:
        problem = warn_problem(parse_expectation(warn_text), parse_expectation(expect))
        if problem is not None:
            raise Untranslatable(f"warn_if {warn_if!r} beside error_if {error_if!r}: {problem}")
    return Levels(expect, warn_text)


def _counted(text: str) -> str:
    """An upper bound on a count as a range from 0 (failures are never negative)."""
    op, number = text.split(" ", 1)
    if op == "<=":
        return f"between 0 and {number}"
    if op == "<" and Decimal(number) == Decimal(number).to_integral_value() and Decimal(number) > 0:
        return f"between 0 and {Decimal(number) - 1}"
    return text


def level_pair(severity: str, failing: str, everything: str) -> Levels:
    """``expect`` and ``warn`` of a test whose failure is one row (recency, a proportion).

    ``failing`` is the expectation the check's value meets when dbt's query
    returns no row; ``everything`` one every value meets (the expectation of a
    warn-only test).
    """
    if severity == "warn":
        return Levels(everything, failing)
    return Levels(failing, None)
