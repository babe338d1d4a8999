"""A check's result in words: ``12 of 1,000 rows missing (1.20 %)``, ``3h 12m old``.

Used by the finding's Markdown summary (``checks.finding.check_lines``), the
agent's override text and the alerts. Numbers come from the check's metrics;
a percent is shown rounded, but never as 0 % when the count is not 0, nor as
100 % when it is not all rows (``< 0.01 %``, ``> 99.99 %``): the comparison
itself was exact.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from checks.automation.expectation import parse_expectation
from checks.declared import anomaly
from checks.report import Buckets, CheckOutcome, CheckResult, json_value


def number(value: Any) -> str:
    """A value as JSON shows it (``8255``, ``0.0245``, ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(json_value(value))


def percent(count: int, total: int) -> str:
    """``count`` of ``total`` as a percent for people: 2 decimals, never falsely 0 or 100."""
    if total == 0:
        return "undefined (0 rows)"
    return percent_text(Fraction(count, total) * 100)


def percent_text(value: float | Fraction) -> str:
    """A percent (``2.45`` is 2.45 %) for people: 2 decimals, never falsely 0 or 100.

    ``< 0.01 %`` for a value above 0 that rounds to 0, ``> 99.99 %`` for one
    under 100 that rounds to 100 (and their negatives alike).
    """
    shown = f"{float(value):.2f}"
    if value != 0 and float(shown) == 0:
        return "< 0.01 %" if value > 0 else "> -0.01 %"
    if value != 100 and float(shown) == 100:
        return "> 99.99 %"
    return f"{shown} %"


def duration(seconds: float) -> str:
    """``3h 12m``, ``2d 4h``, ``45s``; negative ages read ``… in the future``."""
    if seconds < 0:
        return f"{duration(-seconds)} in the future"
    whole = int(seconds)
    parts: list[str] = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if whole >= size or (unit == "s" and not parts):
            amount, whole = divmod(whole, size)
            parts.append(f"{amount}{unit}")
    return " ".join(parts[:2])


def _unit(expect: str) -> str | None:
    try:
        return parse_expectation(expect).unit
    except ValueError:
        return None


def _metric(check: CheckResult, name: str) -> int:
    value = check.metrics.get(name)
    return int(value) if isinstance(value, int | float) else 0


def _rows(n: int) -> str:
    return f"{n:,} row{'' if n == 1 else 's'}"


def _sql(check: CheckResult) -> str:
    if check.expect in ("empty", "not empty"):
        rows = int(check.value or 0)
        return f"{rows} row{'' if rows == 1 else 's'}"
    if "count" in check.metrics and "total" in check.metrics:
        count, total = _metric(check, "count"), _metric(check, "total")
        return f"{count:,} of {total:,} ({percent(count, total)})"
    if isinstance(check.value, float) and _unit(check.expect) == "duration":
        return duration(check.value)
    return number(check.value)


def _missing(check: CheckResult) -> str:
    missing, scope = _metric(check, "missing"), _metric(check, "rows_in_scope")
    return f"{missing:,} of {_rows(scope)} missing ({percent(missing, scope)})"


def _duplicates(check: CheckResult) -> str:
    groups, surplus = _metric(check, "duplicate_groups"), _metric(check, "surplus_rows")
    within, scope = _metric(check, "rows_in_duplicate_groups"), _metric(check, "rows_in_scope")
    return (
        f"{groups:,} duplicate group{'' if groups == 1 else 's'} holding {_rows(within)} "
        f"({surplus:,} surplus) in {_rows(scope)}"
    )


def _accepted_values(check: CheckResult) -> str:
    invalid, nulls = _metric(check, "invalid_values"), _metric(check, "null_values")
    return f"{invalid:,} invalid and {nulls:,} NULL in {_rows(_metric(check, 'rows_in_scope'))}"


def _relationships(check: CheckResult) -> str:
    orphans, keys = _metric(check, "orphans"), _metric(check, "orphan_keys")
    nulls = _metric(check, "null_keys")
    return (
        f"{_rows(orphans)} with no match ({keys:,} distinct key{'' if keys == 1 else 's'}),"
        f" {nulls:,} NULL key{'' if nulls == 1 else 's'} skipped,"
        f" in {_rows(_metric(check, 'rows_in_scope'))}"
    )


def _freshness(check: CheckResult) -> str:
    age, latest = check.metrics.get("age_s"), check.metrics.get("latest")
    if isinstance(age, int | float) and latest:
        return f"newest {str(latest)[:19].replace('T', ' ')} UTC, {duration(age)} old"
    return f"{_rows(_metric(check, 'rows_in_scope'))} in scope"


def _range(check: CheckResult) -> str:
    below, above = _metric(check, "below_min"), _metric(check, "above_max")
    nulls, scope = _metric(check, "null_values"), _metric(check, "rows_in_scope")
    return f"{below:,} below min, {above:,} above max, {nulls:,} NULL in {_rows(scope)}"


def _schema(check: CheckResult) -> str:
    problems, expected = _metric(check, "problems"), _metric(check, "columns_expected")
    return f"{problems:,} problem{'' if problems == 1 else 's'} in {expected:,} columns"


_MEASURED: dict[str, Callable[[CheckResult], str]] = {
    "sql": _sql,
    "row_count": lambda c: f"{_rows(_metric(c, 'rows_in_scope'))} in scope",
    "missing": _missing,
    "duplicates": _duplicates,
    "accepted_values": _accepted_values,
    "relationships": _relationships,
    "freshness": _freshness,
    "range": _range,
    "schema": _schema,
}


_SHOWS_ITS_PERCENT = frozenset({"missing"})
"""Kinds whose words already give the compared count as a percent of the rows in scope."""


def measured(check: CheckResult) -> str:
    """What a judged check measured, in words (its kind's numbers).

    A typed check compared as a percent (``expect: < 5%``) also gives the
    compared count (``metrics["compared"]``) as a percent of its rows in
    scope, e.g. ``… in 334,264 rows (14.99 %)``.
    """
    words = _MEASURED.get(check.kind)
    text = words(check) if words else number(check.value)
    compared = check.metrics.get("compared")
    if (
        check.kind not in _SHOWS_ITS_PERCENT
        and isinstance(compared, str)
        and _unit(check.expect) == "percent"
    ):
        text += f" ({percent(_metric(check, compared), _metric(check, 'rows_in_scope'))})"
    return text


def buckets_text(found: Buckets) -> str:
    """Which bucket was tested and which is still filling, in words."""
    filling = (
        "" if found.filling_value is None else f" ({anomaly.figure(found.filling_value)} so far)"
    )
    return (
        f"tested the {found.bucket} from {_when(found.tested_start)} ({found.timezone});"
        f" the {found.bucket} from {_when(found.filling_start)} is still filling{filling}"
        " and is not tested"
    )


def _when(iso: str) -> str:
    return iso[:16].replace("T", " ")


def describe_value(check: CheckResult) -> str:
    """The check's result in words, e.g. ``722 rows``, ``0.0245``, ``not evaluated: …``."""
    if check.outcome is CheckOutcome.ERROR:
        return f"error: {check.error}"
    if check.outcome is CheckOutcome.NOT_EVALUATED:
        return f"not evaluated: {check.reason}"
    text = measured(check)
    if check.anomaly is not None:
        text += f"; {anomaly.describe(check.anomaly)}"
    if check.buckets is not None:
        text += f"; {buckets_text(check.buckets)}"
    if check.reason:
        text += f"; {check.reason}"
    return text
