"""dbt-utils' tests as checks: ``expression_is_true``, ``recency``, ``not_null_proportion``.

Each reads as its macro in dbt-utils' ``macros/generic_tests/`` does (``checks.dbt.translate``
gives the table of all tests and their checks).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlglot import exp

from checks.dbt.conditions import Untranslatable, is_default, level_pair, levels
from checks.dbt.manifest import DataTest, Manifest
from checks.dbt.where import condition, dialect_of

_DATEPARTS = {"second": "s", "minute": "m", "hour": "h", "day": "d", "week": "w"}


def column_of(test: DataTest) -> str:
    """The test's column.

    Raises:
        Untranslatable: it has none.
    """
    if not test.column:
        raise Untranslatable("no column_name")
    return test.column


def _one_row(test: DataTest) -> None:
    """A test whose failure is one row is read with the default conditions only."""
    if not (is_default(test.error_if) and is_default(test.warn_if)):
        raise Untranslatable("error_if or warn_if on a test whose failure is one row")


def expression_is_true(manifest: Manifest, test: DataTest, table: dict[str, Any]) -> dict[str, Any]:
    """``row_count`` over ``NOT (expr)`` (and the ``where:``), ``expect: == 0``, ``allow_empty``."""
    expression = str(test.kwargs.get("expression") or "")
    text = f"{test.column} {expression}" if test.column else expression
    dialect = dialect_of(manifest)
    failing: exp.Expr = exp.Not(this=exp.Paren(this=condition(text, dialect, "expression")))
    if "filter" in table:
        failing = exp.and_(condition(table["filter"], dialect, "where"), failing)
    body: dict[str, Any] = {"row_count": {**table, "filter": failing.sql(dialect=dialect)}}
    found = levels(test.severity, test.error_if, test.warn_if)
    body |= {"expect": found.expect, "allow_empty": True}
    if found.warn is not None:
        body["warn"] = found.warn
    return body


def recency(test: DataTest, table: dict[str, Any]) -> dict[str, Any]:
    """``freshness`` with ``expect: <= interval`` (second to week)."""
    _one_row(test)
    datepart, interval = str(test.kwargs.get("datepart", "")), test.kwargs.get("interval")
    if datepart not in _DATEPARTS:
        raise Untranslatable(f"datepart {datepart!r} is not a fixed length (second to week)")
    if not isinstance(interval, int) or isinstance(interval, bool) or interval < 0:
        raise Untranslatable(f"interval {interval!r} is not a whole number of {datepart}s")
    if test.kwargs.get("ignore_time_component"):
        raise Untranslatable("ignore_time_component compares dates, not ages")
    found = level_pair(test.severity, f"<= {interval}{_DATEPARTS[datepart]}", ">= 0s")
    body: dict[str, Any] = {"freshness": {**table, "column": str(test.kwargs.get("field"))}}
    body["expect"] = found.expect
    if found.warn is not None:
        body["warn"] = found.warn
    return body


def not_null_proportion(test: DataTest, table: dict[str, Any]) -> dict[str, Any]:
    """``missing`` with ``expect`` the percent between 1 - at_most and 1 - at_least."""
    _one_row(test)
    try:
        least = Decimal(str(test.kwargs["at_least"]))
        most = Decimal(str(test.kwargs.get("at_most", 1)))
    except (KeyError, ArithmeticError):
        raise Untranslatable("at_least and at_most are numbers") from None
    if not Decimal(0) <= least <= most <= Decimal(1):
        raise Untranslatable(f"at_least {least} and at_most {most} are not 0 ≤ least ≤ most ≤ 1")
    low, high = _percent(1 - most), _percent(1 - least)
    failing = f"<= {high}%" if low == "0" else f"between {low}% and {high}%"
    found = level_pair(test.severity, failing, "<= 100%")
    body: dict[str, Any] = {"missing": {**table, "column": column_of(test)}, "expect": found.expect}
    if found.warn is not None:
        body["warn"] = found.warn
    return body


def _percent(share: Decimal) -> str:
    text = format((share * 100).normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
