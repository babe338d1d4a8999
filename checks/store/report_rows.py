"""A run's report as the store's rows, and back: what ``Store`` writes and reads of a run.

``finished_columns`` are the ``runs`` columns a finished report sets (the
review list's columns with them), ``write_results`` inserts its checks,
evidence, row sets and series points, ``to_report`` and ``check_result``
read them back.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    BindParameter,
    Connection,
    bindparam,
    exists,
    insert,
    null,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, selectinload

from checks.clock import utcnow
from checks.report import (
    Anomaly,
    Buckets,
    CheckOutcome,
    CheckResult,
    Evidence,
    Finding,
    FindingSource,
    RunReport,
    Segments,
    Status,
    json_value,
    outcome_of,
)
from checks.store.list_columns import definition_columns, urgency_column, usage_columns
from checks.store.row_sets import write_row_sets
from checks.store.run_tables import (
    CheckRow,
    EvidenceRow,
    RunRow,
    SeriesRow,
    table_of,
)
from checks.store.series import series_rows


def last_completed(
    session: Session, automation: str, *, before_run: int | None = None
) -> RunReport | None:
    """``Store.last_completed`` in an open session: the newest completed run, with its results."""
    query = (
        select(RunRow)
        .where(RunRow.automation == automation, RunRow.status == str(Status.COMPLETED))
        .order_by(RunRow.scheduled_for.desc(), RunRow.id.desc())
        .limit(1)
        .options(selectinload(RunRow.checks), selectinload(RunRow.evidence))
    )
    if before_run is not None:
        query = query.where(RunRow.id != before_run)
    row = session.scalars(query).first()
    return None if row is None else to_report(row, full=True)


def flags_column(second_opinion: dict[str, Any] | None) -> str:
    """Return the ``runs.flags`` text for a second opinion: ``,a,b,`` or ``""``."""
    flags = (second_opinion or {}).get("flags") or []
    return f",{','.join(flags)}," if flags else ""


def _json(value: Any) -> Any:
    """A JSON column's value in a plain update: SQL NULL for None, as the ORM leaves it.

    (The ORM writes nothing for a None that was already None, and these
    columns are NULL until a run finishes; a plain update would write JSON ``null``.)
    """
    return null() if value is None else value


def finished_columns(report: RunReport) -> dict[str, Any]:
    """The ``runs`` columns ``finish_run`` sets from a report, the review list's columns with them.

    What ``RunRow``'s validators keep in step on an ORM write (``checks.store.list_columns``)
    is set here too; ``definition`` and ``started_at`` are kept when the report has none.
    """
    values: dict[str, Any] = {
        "status": str(report.status),
        "finding": str(report.finding) if report.finding else None,
        "finding_source": str(report.finding_source) if report.finding_source else None,
        "summary": report.summary,
        "error": report.error,
        "finished_at": report.finished_at or utcnow(),
        "agent": _json(report.agent),
        "second_opinion": _json(report.second_opinion),
        "pinning": _json(report.pinning),
        "scanned": _json(report.scanned),
        "flags": flags_column(report.second_opinion),
        "lease_expires_at": None,
        "urgency": urgency_column(report.second_opinion),
        **usage_columns("decision", report.second_opinion),
        **usage_columns("agent", report.agent),
    }
    if report.started_at:
        values["started_at"] = report.started_at
    if report.definition:
        values["definition"] = report.definition
        values.update(definition_columns(report.definition))
    return values


RESULT_TABLES = (CheckRow, EvidenceRow, SeriesRow)
"""The tables holding a run's results, each row with its ``run_id``."""


def _finish_statement() -> Any:
    """``Store.finish_run``'s fenced ``UPDATE runs … RETURNING`` (see ``FINISH``).

    It returns the run's automation and slot, and whether results of an
    earlier write of this run exist.
    """
    runs = table_of(RunRow)
    run_id: BindParameter[int] = bindparam("b_run_id")
    earlier = or_(*(exists().where(table_of(t).c.run_id == run_id) for t in RESULT_TABLES))
    return (
        update(runs)
        .where(
            runs.c.id == run_id,
            runs.c.attempt == bindparam("b_attempt"),
            runs.c.status == str(Status.RUNNING),
        )
        .returning(runs.c.automation, runs.c.scheduled_for, earlier.label("earlier"))
    )


FINISH = _finish_statement()
"""``finish_run``'s fenced update, built once: its SET clause is the parameters' columns."""


def write_results(
    connection: Connection,
    run_id: int,
    automation: str,
    scheduled_for: dt.datetime,
    report: RunReport,
) -> None:
    """Insert a run's check results, evidence (ids returned for its row sets) and series points."""
    if report.checks:
        connection.execute(
            insert(table_of(CheckRow)),
            [
                {
                    "run_id": run_id,
                    "position": i,
                    "name": c.name,
                    "sql": c.sql,
                    "expect": c.expect,
                    "value": json_value(c.value),
                    "passed": c.passed,
                    "error": c.error,
                    "evidence_id": c.evidence_id,
                    "kind": c.kind,
                    "outcome": str(c.outcome),
                    "reason": c.reason,
                    "metrics": stored_metrics(c),
                    "warnings": list(c.warnings),
                    "sample_id": c.sample_id,
                    "anomaly": json_value(c.anomaly.to_dict()) if c.anomaly else None,
                    "buckets": c.buckets.to_dict() if c.buckets else None,
                    "recorded_schema": c.recorded_schema,
                }
                for i, c in enumerate(report.checks)
            ],
        )
    if report.evidence:
        table = table_of(EvidenceRow)
        ids = connection.execute(
            insert(table).returning(table.c.id, sort_by_parameter_order=True),
            [
                {
                    "run_id": run_id,
                    "position": i,
                    "query_id": e.id,
                    "origin": e.origin,
                    "sql": e.sql,
                    "columns": e.columns,
                    "rows": json_value(e.rows),
                    "row_count": e.row_count,
                    "truncated": e.truncated,
                    "fingerprint": e.fingerprint,
                    "row_count_exact": e.row_count_exact,
                    "query_key": e.query_key,
                }
                for i, e in enumerate(report.evidence)
            ],
        ).scalars()
        write_row_sets(connection, run_id, automation, list(ids), report.evidence)
    series = series_rows(report, automation, scheduled_for)
    if series:
        connection.execute(insert(table_of(SeriesRow)), [{"run_id": run_id, **p} for p in series])


def to_report(row: RunRow, *, full: bool) -> RunReport:
    """The ``RunReport`` a stored run holds; with its checks and evidence when ``full``."""
    report = RunReport(
        run_id=row.id,
        automation=row.automation,
        scheduled_for=row.scheduled_for,
        trigger=row.trigger,
        status=Status(row.status),
        finding=Finding(row.finding) if row.finding else None,
        finding_source=FindingSource(row.finding_source) if row.finding_source else None,
        summary=row.summary or "",
        agent=row.agent,
        second_opinion=row.second_opinion,
        error=row.error,
        started_at=row.started_at,
        finished_at=row.finished_at,
        definition=row.definition or {},
        attempt=row.attempt,
        pinning=row.pinning,
        scanned=row.scanned,
    )
    if full:
        report.checks = [check_result(c) for c in row.checks]
        _warn_levels(report)
        report.evidence = [
            Evidence(
                e.query_id,
                e.sql,
                e.columns,
                e.rows,
                e.row_count,
                e.truncated,
                e.fingerprint,
                e.origin,
                e.row_count_exact,
                e.query_key,
            )
            for e in row.evidence
        ]
    return report


def _warn_levels(report: RunReport) -> None:
    """Give each check the ``warn:`` level its run's definition declared (the rows keep none)."""
    declared = report.definition.get("checks") if isinstance(report.definition, dict) else None
    levels = {
        c.get("name"): c.get("warn")
        for c in declared or []
        if isinstance(c, dict) and isinstance(c.get("warn"), str)
    }
    for check in report.checks:
        check.warn = levels.get(check.name)


SEGMENTS_KEY = "lookout__segments"
"""Where a segmented check's segments are kept in its row's ``metrics`` JSON (no metric
is named so): ``Segments.to_dict``, taken out again when the row is read."""


def stored_metrics(check: CheckResult) -> Any:
    """A check's ``metrics`` as its row keeps them: with its segments, when it has them."""
    data = json_value(check.metrics)
    if check.segments is not None and isinstance(data, dict):
        data[SEGMENTS_KEY] = json_value(check.segments.to_dict())
    return data


def check_result(row: CheckRow) -> CheckResult:
    """The ``CheckResult`` a stored check row holds (what ``load_report`` gives back)."""
    metrics = dict(row.metrics or {})
    kept = metrics.pop(SEGMENTS_KEY, None)
    return CheckResult(
        row.name,
        row.sql,
        row.expect,
        row.value,
        # a row stored before outcomes were kept has only passed and error
        CheckOutcome(row.outcome) if row.outcome else outcome_of(row.passed, row.error),
        row.error,
        row.evidence_id,
        kind=row.kind or "sql",
        reason=row.reason,
        metrics=metrics,
        warnings=row.warnings or [],
        sample_id=row.sample_id,
        anomaly=Anomaly.from_dict(row.anomaly) if row.anomaly else None,
        buckets=Buckets.from_dict(row.buckets) if row.buckets else None,
        segments=Segments.from_dict(kept) if isinstance(kept, dict) else None,
        recorded_schema=row.recorded_schema,
    )
