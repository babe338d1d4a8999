"""Running one typed check: its counts, its outcome, and a sample of the violating rows.

The counts query (``checks.declared.compile``) runs first and gives every
metric. A scope of 0 rows is **not evaluated** — never a pass — unless the
check says ``allow_empty: true``: it is then judged over the empty scope
(every count is 0; a percent is undefined and counts as passed) and its
``reason`` says the scope was empty. Otherwise the kind's compared metric is
judged against ``expect`` (``checks.fields.expectation``), and when the
check failed a bounded sample of its violating rows is read as evidence ``S<n>``.
A check with ``by:`` is judged per segment (``checks.declared.segments``); its
sample reads the failing segments only; over an empty scope with ``allow_empty``
it is judged as without ``by:``.

Metrics (``CheckResult.metrics``): each kind's are in its module's docstring
(``checks/kinds/``); ``compared`` names the one the expectation compares,
unless it is a percent of it over ``rows_in_scope``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from checks.automation.check import Check
from checks.declared import anomaly, buckets, schema_changes
from checks.declared.anomaly import History
from checks.declared.compile import Compiled, compile_check
from checks.declared.schema_changes import RecordedSchemas
from checks.declared.segment_sql import SegmentValues
from checks.declared.segments import judge_segments, judged_alone, rows_needed
from checks.declared.typed_judge import Judge, fill_result, metric_int, metric_value
from checks.errors import CheckDefinitionError, QueryError, SourceError
from checks.kinds.base import Clock, Judged, Kind
from checks.report import Buckets, CheckOutcome, CheckResult, Evidence, Metrics
from checks.settings.limits import Limits
from checks.sources import Source
from checks.sql.lint import lint_condition


def run_typed_check(
    check: Check,
    source: Source,
    limits: Limits,
    *,
    position: int,
    timeout_s: float,
    clock: Clock,
    timezone: str = "UTC",
    history: History | None = None,
    slot: dt.datetime | None = None,
    schemas: RecordedSchemas | None = None,
) -> tuple[CheckResult, list[Evidence]]:
    """Run one typed check; return its result and its evidence (``C<n>``, and ``S<n>``).

    Args:
        check: a check with a typed kind (``check.spec`` is set).
        source: where it runs; both queries go through ``Source.query``.
        limits: row and cell budgets (the sample holds at most ``max_rows``).
        position: the check's 1-based position: its evidence ids.
        timeout_s: the time limit of each query.
        clock: the current time, zone-aware (freshness ages are measured from it).
        timezone: the automation's time zone, for the lint of ``filter:`` and
            an anomaly's weekly seasonality.
        history: the check's values in past completed runs, for an anomaly
            expectation (None: no history, as for a first run).
        slot: the run's slot time: the tested point of an anomaly (default: ``clock()``).
        schemas: the schemas the automation's checks recorded in earlier runs, for
            a ``schema`` check's ``changes`` (None: no store to read them from).

    A problem with the check (an unknown column), a failing query or a value of
    the wrong kind is an error on the check, never a pass.
    """
    spec = check.spec
    assert spec is not None  # only typed checks come here
    expect = check.expectation
    result = CheckResult(
        check.name, "", expect.text, None, CheckOutcome.NOT_EVALUATED, kind=spec.KIND
    )
    now = slot or clock()
    found = buckets.window(check.over, timezone, now) if check.over else None
    try:
        compiled = compile_check(
            spec,
            source.catalog(),
            source.dialect,
            sample_rows=limits.max_rows,
            over=check.over,
            buckets=found,
        )
    except CheckDefinitionError as exc:
        return _errored(result, exc.message), []
    except SourceError as exc:
        return _errored(result, str(exc)), []
    result.sql = compiled.counts_sql
    result.warnings = _filter_warnings(spec, compiled, source, timezone)
    buckets_read = len(found.starts) + 1 if found else 1
    rows = rows_needed(limits.max_segments, buckets_read) if spec.by else buckets_read
    try:
        counts = source.query(compiled.counts_sql, max_rows=rows, timeout_s=timeout_s)
    except QueryError as exc:
        return _errored(result, str(exc)), []
    evidence = [
        Evidence.of_result(counts, evidence_id=f"C{position}", origin="check", limits=limits)
    ]
    result.evidence_id = evidence[0].id

    def judge_one(
        into: CheckResult,
        scope: Compiled,
        columns: list[str],
        found_rows: list[list[Any]],
        metric: str,
    ) -> Judged:
        if found is not None:
            return _judge_buckets(into, check, scope, columns, found_rows, found, source, clock)
        row = dict(zip(columns, found_rows[0], strict=True)) if found_rows else {}
        metrics: Metrics = {k: metric_value(v) for k, v in row.items() if k != "latest"}
        judged = Judge(spec, check, scope, metrics, source, clock).judge(row)
        fill_result(into, judged, metrics, spec)
        if expect.anomaly is not None:
            baseline = history(check.name, metric) if history else []
            anomaly.apply(into, expect.anomaly, now, baseline, source="runs", zone=timezone)
        return judged

    columns, found_rows = list(counts.columns), [list(r) for r in counts.rows]
    if spec.by and check.allow_empty and counts.row_count == 0:
        return judged_alone(
            check,
            lambda alone: run_typed_check(
                alone, source, limits, position=position, timeout_s=timeout_s, clock=clock,
                timezone=timezone, slot=slot,
            ),
        )  # fmt: skip
    failing: list[SegmentValues] | None = None
    if spec.by:
        sample_rows, failing = judge_segments(
            result, check, compiled, columns, found_rows, counts.row_count,
            limits.max_segments, judge_one,
        )  # fmt: skip
    else:
        sample_rows = judge_one(result, compiled, columns, found_rows, spec.compared).sample_rows
    problem = _compare_schema(result, spec, compiled, source, schemas)
    if problem is not None:
        return _errored(result, problem), evidence
    if result.outcome is CheckOutcome.FAILED and sample_rows and compiled.sample_sql:
        sample_sql: str | None = compiled.sample_sql
        if failing is not None:
            sample_sql = _failing_sample(check, source, limits, found, failing, result)
        _add_sample(result, evidence, sample_sql, sample_rows, source, limits, timeout_s, position)
    return result, evidence


def _add_sample(
    result: CheckResult,
    evidence: list[Evidence],
    sample_sql: str | None,
    sample_rows: int,
    source: Source,
    limits: Limits,
    timeout_s: float,
    position: int,
) -> None:
    """Read a failed check's sample of violating rows as evidence ``S<n>`` (else a warning).

    No SQL (the failing segments' could not be written): nothing is read.
    """
    if not sample_sql:
        return
    sample = _sample(sample_sql, sample_rows, source, limits, timeout_s)
    if isinstance(sample, str):
        result.warnings.append(sample)
    else:
        sample.id = f"S{position}"
        evidence.append(sample)
        result.sample_id = sample.id


def _filter_warnings(spec: Kind, compiled: Compiled, source: Source, timezone: str) -> list[str]:
    """The lint's warnings on a check's ``filter:`` (none without one)."""
    if not spec.filter:
        return []
    linted = lint_condition(
        spec.filter,
        table=compiled.table,
        dialect=source.dialect,
        catalog=source.catalog(),
        timezone=timezone,
    )
    return [f"filter: {w.message}" for w in linted]


def _compare_schema(
    result: CheckResult,
    spec: Kind,
    compiled: Compiled,
    source: Source,
    schemas: RecordedSchemas | None,
) -> str | None:
    """A ``schema`` check's table compared with the last run's; the error's text, or None.

    Nothing is compared for any other check, nor for one already in error.
    """
    if not schema_changes.compares(spec) or result.outcome is CheckOutcome.ERROR:
        return None
    try:
        table_columns = list(source.table_columns(compiled.table))
    except SourceError as exc:
        return str(exc)
    seen = schema_changes.recorded(compiled.table, source.dialect, table_columns)
    schema_changes.apply(result, spec, seen, schemas)
    return None


def _failing_sample(
    check: Check,
    source: Source,
    limits: Limits,
    found: buckets.Window | None,
    failing: list[SegmentValues],
    result: CheckResult,
) -> str | None:
    """The sample of the failing segments' violating rows (None, with a warning, when it can't)."""
    assert check.spec is not None
    try:
        return compile_check(
            check.spec,
            source.catalog(),
            source.dialect,
            sample_rows=limits.max_rows,
            over=check.over,
            buckets=found,
            failing=failing,
        ).sample_sql
    except (CheckDefinitionError, SourceError, ValueError) as exc:
        why = exc.message if isinstance(exc, CheckDefinitionError) else str(exc)
        result.warnings.append(f"the failing segments' sample was not read: {why}")
        return None


def _judge_buckets(
    result: CheckResult,
    check: Check,
    compiled: Compiled,
    columns: list[str],
    rows: list[list[Any]],
    found: buckets.Window,
    source: Source,
    clock: Clock,
) -> Judged:
    """Judge the tested bucket of an ``over:`` check, against the earlier ones for an anomaly.

    A bucket with no row in the result had no rows: its counts are 0. The
    tested bucket of a ``row_count`` is judged even when it is empty (a drop
    to nothing is a volume anomaly) as long as the window has rows; for the
    other kinds an empty tested bucket has nothing to look at: not evaluated.
    """
    spec, over = check.spec, check.over
    assert spec is not None and over is not None
    grouped = buckets.by_bucket(columns, rows)
    zeros = {name: 0 for name in columns if name != buckets.BUCKET}

    def measure(start: dt.datetime, scope: Compiled = compiled) -> tuple[Judge, dict[str, Any]]:
        row = grouped.get(buckets.Window.key(start), zeros)
        metrics: Metrics = {k: metric_value(v) for k, v in row.items()}
        return Judge(spec, check, scope, metrics, source, clock), row

    def value(start: dt.datetime) -> float:
        judge, row = measure(start)
        judge.by_kind(row)
        return float(metric_int(judge.metrics, spec.compared))

    total = sum(metric_int(measure(start)[0].metrics, "rows_in_scope") for start in found.starts)
    when = f"{over.bucket} from {_when(found.tested)}"
    if total == 0:
        when = f"{len(found.starts)} {over.bucket}s from {_when(found.starts[0])}"
    judge, row = measure(found.tested, replace(compiled, scope=f"{compiled.scope} in the {when}"))
    empty_allowed = total > 0 and spec.MEASURES_EMPTY  # the 0 is the measurement
    judged = judge.by_kind(row) if empty_allowed else judge.judge(row)
    fill_result(result, judged, judge.metrics, spec)
    result.buckets = Buckets(
        column=over.column,
        bucket=over.bucket,
        timezone=found.zone,
        tested_start=found.tested.isoformat(),
        tested_end=found.filling.isoformat(),
        filling_start=found.filling.isoformat(),
        filling_value=value(found.filling),
        count=len(found.starts),
    )
    rule = check.expectation.anomaly
    if rule is not None:
        baseline = [anomaly.Point(start, value(start)) for start in found.baseline]
        anomaly.apply(
            result,
            rule,
            found.tested,
            baseline,
            source="buckets",
            zone=found.zone,
            hourly=over.bucket == "hour",
        )
    return judged


def _when(start: dt.datetime) -> str:
    return start.strftime("%Y-%m-%d %H:%M")


def _errored(result: CheckResult, message: str) -> CheckResult:
    result.error = message
    result.outcome = CheckOutcome.ERROR
    return result


def _sample(
    sql: str, violating: int, source: Source, limits: Limits, timeout_s: float
) -> Evidence | str:
    """Read the sample of violating rows; a failure is a warning, the counts still stand."""
    try:
        found = source.query(sql, max_rows=limits.max_rows, timeout_s=timeout_s)
    except QueryError as exc:
        return f"the sample of violating rows could not be read: {exc}"
    return Evidence.of_result(
        found,
        evidence_id="S",
        origin="check",
        limits=limits,
        row_count=max(violating, found.row_count),
    )
