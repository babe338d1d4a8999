"""A typed check's counts judged: the empty scope, the NULL rule's nothing compared, the kind's own.

``Judge`` reads one row of counts (``checks.declared.compile``) as the
check's metrics; an empty scope is not evaluated (unless allowed), and
otherwise its kind judges them (``Kind.judged``, ``Kind.nothing_compared``:
outcome, reason, the sample's size); ``fill_result`` writes what it found into the
check's result. ``checks.declared.typed`` runs the queries around it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from checks.automation.check import Check
from checks.declared.compile import Compiled
from checks.fields.judgement import Judgement
from checks.kinds.base import Clock, Counts, Judged, Kind
from checks.report import CheckOutcome, CheckResult, Metrics
from checks.sources import Source


class Judge:
    """Judges one typed check's counts: an empty scope, a NULL rule that left nothing, its kind."""

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
        self.in_scope = metric_int(metrics, "rows_in_scope")

    def judge(self, row: dict[str, Any]) -> Judged:
        """Judge the counts query's one row (column name → value)."""
        empty = self.in_scope == 0
        if empty and (not self.check.allow_empty or self.spec.UNDEFINED_WHEN_EMPTY):
            note = f"0 rows in scope: {self.compiled.scope}"
            self.spec.unmeasured(self.metrics)
            return Judged(Judgement(value=None, passed=None, not_evaluated=note))
        judged = self.by_kind(row)
        nothing = self.nothing_compared(row)
        if nothing is not None:
            return Judged(Judgement(value=None, passed=None, not_evaluated=nothing))
        if empty:
            note = f"0 rows in scope: {self.compiled.scope} (allowed: allow_empty)"
            judged.reason = "; ".join(part for part in (judged.reason, note) if part)
            if judged.outcome.not_evaluated is not None:  # a percent over nothing
                judged.outcome = Judgement(value=None, passed=True)
        return judged

    def counts(self, row: dict[str, Any]) -> Counts:
        """The row and the metrics as the kind judges them."""
        return Counts(
            row=row,
            metrics=self.metrics,
            in_scope=self.in_scope,
            scope=self.compiled.scope,
            table=self.compiled.table,
            expect=self.check.expectation,
            source=self.source,
            clock=self.clock,
        )

    def nothing_compared(self, row: dict[str, Any]) -> str | None:
        """Why no value in scope was compared, when the kind's NULL rule skipped every row.

        A NULL is no orphan (``relationships``), has no magnitude (``range``, ``null:
        allowed``), is not judged (``accepted_values``, ``null: allowed``) and makes a key
        never a duplicate (``duplicates``, ``nulls: distinct``): when every row in scope
        holds one, the check looked at no value, which is never a pass (as ``freshness``
        over NULLs only). None when a value was compared, or the scope is empty.
        """
        if self.in_scope == 0:
            return None
        return self.spec.nothing_compared(self.counts(row))

    def by_kind(self, row: dict[str, Any]) -> Judged:
        """The kind's counts judged (``Kind.judged``)."""
        return self.spec.judged(self.counts(row))


def fill_result(result: CheckResult, judged: Judged, metrics: Metrics, spec: Kind) -> None:
    """Write what judging found into ``result``: value, outcome, error, reason and metrics."""
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


def metric_int(metrics: Metrics, name: str) -> int:
    """A metric as an int (0 when absent or not a number)."""
    value = metrics.get(name)
    return int(value) if isinstance(value, int | float) else 0


def metric_value(value: Any) -> int | float | str | None:
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
