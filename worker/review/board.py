"""The review list: one row per open incident, else the latest report per automation.

Rows are built from the store at each call: every automation's latest
report (its newest completed or errored run; a skipped one only when it has
nothing else), replaced by one row per open incident when it has any (each
showing the incident's latest run). Then each row gets its review state
(``worker.review.state``) and delivery status, the filters are applied, and
the rows are sorted by urgency (the second opinion's, most urgent first;
see ``sort_key`` for rows without one), then problems before Clear, then
newest first.

The work is one row per automation or open incident, so it is bounded by the
number of automations, not of runs; filtering and paging happen in Python.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session

from checks.opinion.second_opinion import read_opinion
from checks.report import Status
from checks.store.alert_tables import DeliveryRow, IncidentRow
from checks.store.run_tables import RunRow
from checks.store.store import Store
from worker.alerts.delivery_log import FAILED_STATUSES
from worker.review.state import actions_for, fold, incident_kind, needs_me, subject_actions
from worker.review.vocabulary import (
    URGENCY_ORDER,
    BoardPage,
    BoardRow,
    DeliveryStatus,
    Filters,
    QuickFilter,
)

_REPORTED = (str(Status.COMPLETED), str(Status.ERROR))


def opinion_fields(
    opinion: dict[str, Any] | None,
) -> tuple[tuple[str, ...], str | None, float | None]:
    """Return (flags, urgency, P(goal met)) from a stored ``second_opinion``; absent parts empty."""
    read = read_opinion(opinion)
    return read.flags, read.urgency, read.goal_met


def _latest(session: Session, statuses: Sequence[str], skip: Iterable[str] = ()) -> list[RunRow]:
    newest = (
        select(RunRow.automation, func.max(RunRow.scheduled_for).label("at"))
        .where(RunRow.status.in_(list(statuses)))
        .group_by(RunRow.automation)
        .subquery()
    )
    query = select(RunRow).join(
        newest, and_(RunRow.automation == newest.c.automation, RunRow.scheduled_for == newest.c.at)
    )
    skipped = set(skip)
    return [row for row in session.scalars(query) if row.automation not in skipped]


def _incident_run(session: Session, incident: IncidentRow) -> RunRow | None:
    """Return the newest run of the incident's kind since it opened."""
    query = (
        select(RunRow)
        .where(RunRow.automation == incident.automation, RunRow.id >= (incident.opened_run_id or 0))
        .order_by(RunRow.scheduled_for.desc(), RunRow.id.desc())
    )
    if incident.kind == "error":
        query = query.where(RunRow.status == str(Status.ERROR))
    else:
        query = query.where(
            RunRow.status == str(Status.COMPLETED), RunRow.finding == "needs_attention"
        )
    return session.scalars(query.limit(1)).first()


def _delivery_status(rows: Sequence[DeliveryRow]) -> DeliveryStatus:
    """Count each channel by its latest delivery (by id)."""
    latest: dict[str, DeliveryRow] = {}
    for row in sorted(rows, key=lambda r: r.id):
        latest[row.channel] = row
    failed = tuple(sorted(c for c, r in latest.items() if r.status in FAILED_STATUSES))
    pending = sum(1 for r in latest.values() if r.status in ("sending", "deferred"))
    sent = sum(1 for r in latest.values() if r.status == "sent")
    if failed:
        state = "failed"
    elif pending:
        state = "pending"
    else:
        state = "sent" if sent else "none"
    return DeliveryStatus(state, sent, len(failed), pending, failed)


def _candidates(session: Session) -> list[tuple[RunRow, IncidentRow | None]]:
    reports = _latest(session, _REPORTED)
    reported = {r.automation for r in reports}
    reports += _latest(session, [str(Status.SKIPPED)], skip=reported)
    open_query = select(IncidentRow).where(IncidentRow.open_key.is_not(None))
    by_automation: dict[str, list[tuple[RunRow, IncidentRow]]] = {}
    for incident in session.scalars(open_query.order_by(IncidentRow.id)):
        run = _incident_run(session, incident)
        if run is not None:
            by_automation.setdefault(incident.automation, []).append((run, incident))
    found: list[tuple[RunRow, IncidentRow | None]] = []
    for report in reports:
        incidents = by_automation.pop(report.automation, [])
        found.extend(incidents or [(report, None)])
    for pairs in by_automation.values():
        found.extend(pairs)
    return found


def _rows(session: Session, now: dt.datetime) -> tuple[list[BoardRow], dict[int, str]]:
    """Return every row, unfiltered, and each row's run summary (for the text search)."""
    candidates = _candidates(session)
    run_ids = [run.id for run, _ in candidates]
    incident_ids = [i.id for _, i in candidates if i is not None]
    actions = actions_for(session, run_ids, incident_ids)
    last_run = dict(
        session.execute(
            select(RunRow.automation, func.max(RunRow.finished_at)).group_by(RunRow.automation)
        ).all()
    )
    deliveries: list[DeliveryRow] = []
    if run_ids:
        clause = or_(DeliveryRow.run_id.in_(run_ids), DeliveryRow.incident_id.in_(incident_ids))
        deliveries = list(session.scalars(select(DeliveryRow).where(clause)))
    rows: list[BoardRow] = []
    summaries: dict[int, str] = {}
    for run, incident in candidates:
        incident_id = incident.id if incident else None
        review = fold(subject_actions(actions, run.id, incident_id))
        mine = [
            d
            for d in deliveries
            if d.run_id == run.id or (incident_id is not None and d.incident_id == incident_id)
        ]
        flags, urgency, goal_met = opinion_fields(run.second_opinion)
        definition = run.definition or {}
        tags = definition.get("tags") or []
        rows.append(
            BoardRow(
                automation=run.automation,
                run_id=run.id,
                status=run.status,
                finding=run.finding,
                scheduled_for=run.scheduled_for,
                finished_at=run.finished_at,
                last_run_at=last_run.get(run.automation),
                incident_id=incident_id,
                incident_kind=incident.kind if incident else None,
                opened_at=incident.opened_at if incident else None,
                flags=flags,
                urgency=urgency,
                goal_met=goal_met,
                owner=definition.get("owner"),
                tags=tuple(str(t) for t in tags),
                source=run.source or definition.get("source"),
                description=definition.get("description"),
                severity=definition.get("severity"),
                delivery=_delivery_status(mine),
                review=review,
                needs_me=needs_me(run.status, run.finding, review, now),
            )
        )
        summaries[run.id] = run.summary or ""
    return rows, summaries


def quick_match(row: BoardRow, quick: QuickFilter) -> bool:
    """Whether a row passes one quick filter (``QuickFilter`` says what each means)."""
    if quick == QuickFilter.NEEDS_ME:
        return row.needs_me
    if quick == QuickFilter.DISAGREEMENTS:
        return "double_check_disagrees" in row.flags
    if quick == QuickFilter.CHANGED:
        return "changed_since_last_run" in row.flags
    if quick == QuickFilter.UNREVIEWED:
        return row.review.actions == 0
    return row.delivery.state == "failed"


def _matches(row: BoardRow, filters: Filters, summary: str) -> bool:
    if not all(quick_match(row, q) for q in filters.quick):
        return False
    if filters.owner and (row.owner or "").casefold() != filters.owner.casefold():
        return False
    if filters.tag and filters.tag not in row.tags:
        return False
    if filters.source and row.source != filters.source:
        return False
    if filters.q:
        text = " ".join([row.automation, row.description or "", row.owner or "", summary])
        return filters.q.casefold() in text.casefold()
    return True


def sort_key(row: BoardRow) -> tuple[int, int, float]:
    """Most urgent first, then problems (Needs attention, error) before the rest, newest first.

    A row without an urgency (no second opinion: a run in error, or no decision
    model) ranks as ``worth_a_look`` when it is a problem, else as ``nothing_to_do``.
    """
    problem = 1 if incident_kind(row.status, row.finding) else 0
    urgency = row.urgency or ("worth_a_look" if problem else "nothing_to_do")
    at = row.finished_at or row.scheduled_for
    return (-URGENCY_ORDER.index(urgency), -problem, -at.timestamp())


def board(store: Store, filters: Filters, *, now: dt.datetime) -> BoardPage:
    """Return one page of the list.

    Args:
        store: the report store.
        filters: what to show; a page past the last gives the last page.
        now: the current time (aware); decides whether a snooze still runs.
    """
    with store.session() as session:
        rows, summaries = _rows(session, now)
    chosen = sorted((r for r in rows if _matches(r, filters, summaries[r.run_id])), key=sort_key)
    size = max(1, filters.page_size)
    pages = max(1, math.ceil(len(chosen) / size))
    page = min(max(1, filters.page), pages)
    return BoardPage(
        rows=chosen[(page - 1) * size : page * size],
        total=len(chosen),
        page=page,
        page_size=size,
        pages=pages,
        owners=sorted({r.owner for r in rows if r.owner}),
        tags=sorted({t for r in rows for t in r.tags}),
        sources=sorted({r.source for r in rows if r.source}),
        counts={str(q): sum(1 for r in rows if quick_match(r, q)) for q in QuickFilter},
    )
