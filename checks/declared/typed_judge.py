"""A typed check's counts judged: per kind, its outcome, the reason, and the sample's size.

``_Judge`` reads one row of counts (``checks.declared.compile``) as the
check's metrics and judges the kind's compared one against ``expect``
(``checks.automation.expectation``); ``_fill`` writes what it found into the
check's result. ``checks.declared.typed`` runs the queries around it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any
from zoneinfo import ZoneInfo

from checks.automation.check_kinds import (
    AcceptedValues,
    Duplicates,
    Freshness,
    Kind,
    Missing,
    Range,
    Relationships,
    Schema,
)
from checks.automation.judgement import (
    Outcome,
    failure,
    judge_count,
    judge_duration,
)
from checks.automation.model import Check
from checks.automation.value_words import describe
from checks.declared.compile import Compiled
from checks.report import CheckOutcome, CheckResult, Metrics
from checks.sources import Source
from checks.sql.types import matches

Clock = Callable[[], dt.datetime]


class _Judged:
    """What judging found: the outcome, a reason, and how many rows the sample would hold."""

    def __init__(self, outcome: Outcome, reason: str | None = None, sample_rows: int = 0) -> None:
        self.outcome = outcome
        self.reason = reason
        self.sample_rows = sample_rows


class _Judge:
    def __init__(
        self,
        spec: Kind,
        check: Check,
        compiled: Compiled,
        metrics: Metrics,
        source: Source,
        clock: Clock,
    ) -> None:
        self.spec = spec
        self.check = check
        self.compiled = compiled
        self.metrics = metrics
        self.source = source
        self.clock = clock
        self.in_scope = _int(metrics, "rows_in_scope")

    def judge(self, row: dict[str, Any]) -> _Judged:
        empty = self.in_scope == 0
        if empty and not self.check.allow_empty:
            note = f"0 rows in scope: {self.compiled.scope}"
            if isinstance(self.spec, Freshness):
                self.metrics.update(latest=None, age_s=None)
            if isinstance(self.spec, Missing):
                self.metrics["missing_percent"] = None
            return _Judged(Outcome(value=None, passed=None, not_evaluated=note))
        judged = self.by_kind(row)
        nothing = self.nothing_compared()
        if nothing is not None:
            return _Judged(Outcome(value=None, passed=None, not_evaluated=nothing))
        if empty:
            note = f"0 rows in scope: {self.compiled.scope} (allowed: allow_empty)"
            judged.reason = "; ".join(part for part in (judged.reason, note) if part)
            if judged.outcome.not_evaluated is not None:  # a percent over nothing
                judged.outcome = Outcome(value=None, passed=True)
        return judged

    def nothing_compared(self) -> str | None:
        """Why no value in scope was compared, when the kind's NULL rule skipped every row.

        A NULL is no orphan (``relationships``), has no magnitude (``range``, ``null:
        allowed``), is not judged (``accepted_values``, ``null: allowed``) and makes a key
        never a duplicate (``duplicates``, ``nulls: distinct``): when every row in scope
        holds one, the check looked at no value, which is never a pass (as ``freshness``
        over NULLs only). None when a value was compared, or the scope is empty.
        """
        spec, metrics, rows = self.spec, self.metrics, self.in_scope
        scope = self.compiled.scope
        if rows == 0:
            return None
        if isinstance(spec, Relationships):
            nulls, column = _int(metrics, "null_keys"), spec.column
        elif isinstance(spec, Range | AcceptedValues) and spec.null == "allowed":
            nulls, column = _int(metrics, "null_values"), spec.column
        elif isinstance(spec, Duplicates) and spec.nulls == "distinct":
            nulls = _int(metrics, "rows_with_null_key")
            if nulls < rows:
                return None
            key = ", ".join(spec.columns)
            return f"the key ({key}) holds a NULL in all {rows} rows in scope: {scope}"
        else:
            return None
        if nulls < rows:
            return None
        return f"{column} is NULL in all {rows} rows in scope: {scope}"

    def by_kind(self, row: dict[str, Any]) -> _Judged:
        spec, metrics, expect = self.spec, self.metrics, self.check.expectation
        if isinstance(spec, Freshness):
            return self.freshness(row.get("latest"))
        if isinstance(spec, Schema):
            return self.schema(spec)
        if isinstance(spec, Missing):
            metrics["missing_percent"] = _percent(_int(metrics, "missing"), self.in_scope)
            sample = _int(metrics, "missing")
        elif isinstance(spec, AcceptedValues):
            nulls = _int(metrics, "null_values") if spec.null == "violation" else 0
            metrics["violations"] = _int(metrics, "invalid_values") + nulls
            sample = _int(metrics, "distinct_invalid_values") + (1 if nulls else 0)
        elif isinstance(spec, Relationships):
            sample = _int(metrics, "orphan_keys")
        elif isinstance(spec, Range):
            nulls = _int(metrics, "null_values") if spec.null == "violation" else 0
            below, above = _int(metrics, "below_min"), _int(metrics, "above_max")
            metrics["violations"] = below + above + nulls
            sample = _int(metrics, "violations")
        elif isinstance(spec, Duplicates):
            sample = _int(metrics, "duplicate_groups")
        else:  # row_count
            sample = 0
        metrics["compared"] = spec.compared
        count = _int(metrics, spec.compared)
        total = self.in_scope if spec.compared != "rows_in_scope" else None
        return _Judged(judge_count(expect, count, total), sample_rows=sample)

    def freshness(self, latest: Any) -> _Judged:
        spec = self.spec
        assert isinstance(spec, Freshness)
        self.metrics["compared"] = spec.compared
        self.metrics.update(latest=None, age_s=None)
        if self.in_scope == 0:
            return _Judged(Outcome(value=None, passed=True))
        if latest is None:
            note = (
                f"{spec.column} is NULL in all {self.in_scope} rows in scope: {self.compiled.scope}"
            )
            return _Judged(Outcome(value=None, passed=None, not_evaluated=note))
        zone = ZoneInfo(spec.timezone or "UTC")
        if isinstance(latest, dt.datetime):
            instant = latest if latest.tzinfo else latest.replace(tzinfo=zone)
        elif isinstance(latest, dt.date):
            instant = dt.datetime.combine(latest, dt.time(), tzinfo=zone)
        else:
            return _Judged(failure(f"{spec.column} holds {describe(latest)}, not a timestamp"))
        now = self.clock()
        self.metrics["latest"] = instant.astimezone(dt.UTC).isoformat()
        outcome = judge_duration(self.check.expectation, now - instant)
        self.metrics["age_s"] = outcome.value if isinstance(outcome.value, float) else None
        return _Judged(outcome)

    def schema(self, spec: Schema) -> _Judged:
        live = {c.name.lower(): c for c in self.source.table_columns(self.compiled.table)}
        missing: list[str] = []
        wrong: list[str] = []
        for name, wanted in spec.columns.items():
            found = live.get(name.lower())
            if found is None:
                missing.append(name)
            elif not matches(found.type, wanted, self.source.dialect):
                wrong.append(f"{found.name} is {found.type}, not {wanted}")
        self.metrics.update(
            columns_expected=len(spec.columns),
            missing_columns=len(missing),
            wrong_types=len(wrong),
            problems=len(missing) + len(wrong),
            compared=spec.compared,
        )
        parts = []
        if missing:
            parts.append(f"missing column{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
        parts += wrong
        outcome = judge_count(self.check.expectation, len(missing) + len(wrong), None)
        return _Judged(outcome, "; ".join(parts) or None)


def _fill(result: CheckResult, judged: _Judged, metrics: Metrics, spec: Kind) -> None:
    outcome = judged.outcome
    result.metrics = metrics
    result.value = outcome.value
    result.error = outcome.error
    result.reason = outcome.not_evaluated or judged.reason
    if outcome.error is not None:
        result.outcome = CheckOutcome.ERROR
    elif outcome.passed is None:
        result.outcome = CheckOutcome.NOT_EVALUATED
    else:
        result.outcome = CheckOutcome.PASSED if outcome.passed else CheckOutcome.FAILED
    metrics.setdefault("compared", spec.compared)


def _int(metrics: Metrics, name: str) -> int:
    value = metrics.get(name)
    return int(value) if isinstance(value, int | float) else 0


def _count(value: Any) -> int | float | str | None:
    """A counts cell as a metric: whole numbers (PostgreSQL sums are NUMERIC) as ints."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    if isinstance(value, float | Decimal):
        return float(value)
    return str(value)


def _percent(count: int, total: int) -> float | None:
    return float(Fraction(count, total) * 100) if total else None
