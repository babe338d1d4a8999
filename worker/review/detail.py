"""One report as the review page shows it, and its agent trace.

The view holds the finding, the second opinion, checks, evidence, the diff
against the previous run, recent runs, the incident, the review state, the
alert timeline and each check's history (``worker.review.history``); the
trace comes apart (``trace_of``).

Text that reaches a person is redacted with the settings' secrets first
(``checks.settings.config.redact``), as ``lookout show`` does. The summary stays
Markdown here; the web layer renders it to sanitised HTML.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from checks.agent.trace import read_trace, redacted
from checks.declared.wording import segment_words
from checks.opinion.evidence_diff import diff_evidence
from checks.opinion.row_diff import stored_row_changes
from checks.report import Evidence, Status
from checks.settings.config import redact
from checks.sources.scan import scanned_words
from checks.store.alert_tables import AttemptRow, DeliveryRow, IncidentRow
from checks.store.run_tables import CheckRow, RunRow
from checks.store.store import Store, check_result
from worker.alerts.delivery_log import DeliveryRecord, record_of
from worker.review.board import opinion_fields
from worker.review.history import run_histories
from worker.review.state import actions_for, fold, incident_of, needs_me
from worker.review.timeline import timeline
from worker.review.views import (
    CalibratedView,
    ChangeView,
    CheckView,
    DiffView,
    EvidenceView,
    IncidentView,
    OpinionView,
    RecentRun,
    ReportView,
    TraceEventView,
)
from worker.review.vocabulary import NotFound

RECENT_RUNS = 20


def _calibrated(raw: Any) -> dict[str, CalibratedView]:
    """The ``calibrated`` answers of a stored second opinion (runs before it have none)."""
    views = {}
    for question, item in (raw or {}).items() if isinstance(raw, dict) else []:
        try:
            reviews = int(item["reviews"])
            views[str(question)] = CalibratedView(
                float(item["p"]),
                float(item["raw"]),
                reviews,
                f"calibrated on {reviews} review{'s' if reviews != 1 else ''}",
            )
        except (KeyError, TypeError, ValueError):
            continue
    return views


def _opinion(raw: dict[str, Any] | None, secrets: Sequence[str]) -> OpinionView | None:
    if not raw:
        return None
    probabilities = raw.get("urgency_probabilities")
    flags, urgency, goal_met = opinion_fields(raw)
    same = raw.get("same_as_last_run")
    error = raw.get("error")
    return OpinionView(
        backend=str(raw.get("backend") or "none"),
        model=str(raw["model"]) if raw.get("model") else None,
        goal_met=goal_met,
        same_as_last_run=float(same) if isinstance(same, int | float) else None,
        urgency=urgency,
        urgency_probabilities=(
            {str(k): float(v) for k, v in probabilities.items()}
            if isinstance(probabilities, dict)
            else None
        ),
        flags=list(flags),
        calibrated=_calibrated(raw.get("calibrated")),
        error=redact(str(error), list(secrets)) if error else None,
        input_tokens=int(raw.get("input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cost_usd=raw.get("cost_usd"),
    )


def _changes(items: Any) -> list[ChangeView]:
    return [
        ChangeView(str(c.get("id")), str(c.get("sql") or ""), c.get("before"), c.get("after"))
        for c in items or []
        if isinstance(c, dict)
    ]


def _previous(session: Session, run: RunRow) -> RunRow | None:
    query = (
        select(RunRow)
        .where(
            RunRow.automation == run.automation,
            RunRow.status == str(Status.COMPLETED),
            RunRow.scheduled_for < run.scheduled_for,
        )
        .order_by(RunRow.scheduled_for.desc())
        .limit(1)
        .options(selectinload(RunRow.evidence))
    )
    return session.scalars(query).first()


def _evidence(rows: Sequence[Any]) -> list[Evidence]:
    return [
        Evidence(e.query_id, e.sql, e.columns, e.rows, e.row_count, e.truncated, e.fingerprint)
        for e in rows
    ]


def _diff(session: Session, run: RunRow) -> DiffView:
    """The stored diff (what the decision model saw), else one computed now."""
    previous = _previous(session, run)
    stored = (run.second_opinion or {}).get("evidence_diff")
    if not isinstance(stored, dict):
        computed = diff_evidence(
            _evidence(run.evidence),
            _evidence(previous.evidence) if previous else None,
            previous_run_id=previous.id if previous else None,
        )
        stored = computed.to_dict()
    return DiffView(
        first_run=bool(stored.get("first_run")),
        previous_run_id=stored.get("previous_run_id") or (previous.id if previous else None),
        previous_finding=previous.finding if previous else None,
        added=_changes(stored.get("added")),
        removed=_changes(stored.get("removed")),
        changed=_changes(stored.get("changed")),
        unchanged=[str(i) for i in stored.get("unchanged") or []],
        rows=stored_row_changes(run.second_opinion),
    )


def _recent(session: Session, run: RunRow) -> list[RecentRun]:
    query = (
        select(RunRow)
        .where(RunRow.automation == run.automation)
        .order_by(RunRow.scheduled_for.desc(), RunRow.id.desc())
        .limit(RECENT_RUNS)
    )
    strip = []
    for row in session.scalars(query):
        flags, urgency, _ = opinion_fields(row.second_opinion)
        strip.append(
            RecentRun(
                row.id,
                row.scheduled_for,
                row.status,
                row.finding,
                list(flags),
                urgency,
                row.id == run.id,
            )
        )
    return list(reversed(strip))


def _deliveries(session: Session, run_id: int) -> tuple[list[DeliveryRecord], list[AttemptRow]]:
    rows = list(
        session.scalars(
            select(DeliveryRow).where(DeliveryRow.run_id == run_id).order_by(DeliveryRow.id)
        )
    )
    ids = [r.id for r in rows]
    attempts = (
        list(
            session.scalars(
                select(AttemptRow).where(AttemptRow.delivery_id.in_(ids)).order_by(AttemptRow.id)
            )
        )
        if ids
        else []
    )
    return [record_of(r) for r in rows], attempts


def _incident(row: IncidentRow | None) -> IncidentView | None:
    if row is None:
        return None
    return IncidentView(
        row.id,
        row.kind,
        row.opened_at,
        row.opened_run_id,
        row.closed_at,
        row.closed_run_id,
        row.reminders,
    )


def report_view(
    store: Store, run_id: int, *, secrets: Sequence[str], now: dt.datetime
) -> ReportView:
    """Return the report page's content for one run.

    Raises:
        NotFound: no run has this id.
    """
    keys = list(secrets)
    with store.session() as session:
        run = session.get(
            RunRow, run_id, options=[selectinload(RunRow.checks), selectinload(RunRow.evidence)]
        )
        if run is None:
            raise NotFound(f"no run with id {run_id}")
        incident_row = incident_of(session, run.automation, run.id, run.status, run.finding)
        incident = _incident(incident_row)
        actions = actions_for(session, [run.id], [incident.id] if incident else [])
        review = fold(actions)
        deliveries, attempts = _deliveries(session, run.id)
        definition = run.definition or {}
        return ReportView(
            run_id=run.id,
            automation=run.automation,
            description=definition.get("description"),
            goal=definition.get("goal"),
            instructions=definition.get("instructions"),
            owner=definition.get("owner"),
            tags=[str(t) for t in definition.get("tags") or []],
            source=run.source or definition.get("source"),
            severity=definition.get("severity"),
            scheduled_for=run.scheduled_for,
            trigger=run.trigger,
            status=run.status,
            finding=run.finding,
            finding_source=run.finding_source,
            summary=redact(run.summary or "", keys),
            error=redact(run.error, keys) if run.error else None,
            started_at=run.started_at,
            finished_at=run.finished_at,
            agent=redacted(run.agent, keys) if run.agent else None,
            pinning=redacted(run.pinning, keys) if run.pinning else None,
            checks=[_check_view(c) for c in run.checks],
            declared_checks=len(definition.get("checks") or []),
            scanned=scanned_words(run.scanned),
            evidence=[
                EvidenceView(
                    e.query_id,
                    e.origin,
                    e.sql,
                    e.columns,
                    e.rows,
                    e.row_count,
                    e.truncated,
                    e.fingerprint,
                )
                for e in run.evidence
            ],
            opinion=_opinion(run.second_opinion, keys),
            diff=_diff(session, run),
            recent=_recent(session, run),
            incident=incident,
            review=review,
            needs_me=needs_me(run.status, run.finding, review, now),
            actions=actions,
            deliveries=deliveries,
            timeline=timeline(run, incident_row, deliveries, attempts, actions),
            history=run_histories(session, run),
        )


def trace_of(store: Store, run_id: int, *, secrets: Sequence[str]) -> list[TraceEventView]:
    """Return the run's agent trace, in order, each payload redacted (empty: no agent ran).

    Raises:
        NotFound: no run has this id.
    """
    with store.session() as session:
        if session.get(RunRow, run_id) is None:
            raise NotFound(f"no run with id {run_id}")
    keys = list(secrets)
    return [
        TraceEventView(e.seq, e.at, e.kind, redacted(e.payload, keys))
        for e in read_trace(store, run_id)
    ]


def _check_view(row: CheckRow) -> CheckView:
    """A stored check as the page shows it (rows stored before outcomes existed derive one)."""
    check = check_result(row)
    return CheckView(
        check.name,
        check.sql,
        check.expect,
        check.value,
        check.passed,
        check.error,
        check.evidence_id,
        kind=check.kind,
        outcome=str(check.outcome),
        reason=check.reason,
        metrics=check.metrics,
        warnings=check.warnings,
        sample_id=check.sample_id,
        segments_by=check.segments.by if check.segments else None,
        failed_segments=(
            [(s.name, segment_words(check, s)) for s in check.segments.failed]
            if check.segments
            else None
        ),
    )
