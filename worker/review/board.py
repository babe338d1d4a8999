"""The review list: one row per open incident, else the latest report per automation.

The rows: every automation's latest report (its newest completed or errored
run; a skipped one only when it has nothing else), replaced by one row per
open incident when it has any (each showing the incident's newest run of its
kind). Each row has its review state (``worker.review.state``), its alerts'
delivery status, and what is wrong in one line (``worker.review.what_is_wrong``).

Order: the decision model's urgency, most urgent first (a row without one, a
run in error or no decision model, ranks as ``worth_a_look`` when it is a
problem, else as ``nothing_to_do``); then the automation's severity (high,
medium, low; none given counts as the default, medium); then problems (Needs
attention, error) before the rest; then newest first.

Everything over all rows — the rows themselves, the filters, the order, the
page, the counts of each quick filter, the facets' choices — is one SQL
statement (``worker.review.board_query``) over the rows the store keeps for
the list (``checks.store.list_rows``) and plain columns of ``runs``
(``checks.store.list_columns``), never a JSON document parsed per row. A
request sends a fixed number of statements whatever the number of rows: the
counts and facets, the page's run ids, then for those runs only their
columns, actions, deliveries, checks with a problem and each automation's last run.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session, load_only

from checks.opinion.second_opinion import read_opinion
from checks.report import CheckOutcome, CheckResult
from checks.store.alert_tables import DeliveryRow, IncidentRow
from checks.store.list_columns import split_tags
from checks.store.run_tables import CheckRow, RunRow
from checks.store.store import Store, check_result
from worker.alerts.delivery_log import FAILED_STATUSES
from worker.review.board_query import Shape, parameters, statement
from worker.review.state import actions_for, fold, needs_me, subject_actions
from worker.review.vocabulary import (
    BoardPage,
    BoardRow,
    DeliveryStatus,
    Filters,
    QuickFilter,
)
from worker.review.what_is_wrong import what_is_wrong

_SHOWN = [  # what a row shows of its run: never the definition, agent or evidence JSON
    getattr(RunRow, c)
    for c in (
        "automation",
        "status",
        "finding",
        "scheduled_for",
        "finished_at",
        "second_opinion",
        "owner",
        "tags",
        "source",
        "definition_source",
        "description",
        "severity",
        "error",
        "summary",
    )
]
_SENT = [getattr(DeliveryRow, c) for c in ("run_id", "incident_id", "channel", "status")]


def opinion_fields(
    opinion: dict[str, Any] | None,
) -> tuple[tuple[str, ...], str | None, float | None]:
    """Return (flags, urgency, P(goal met)) from a stored ``second_opinion``; absent parts empty."""
    read = read_opinion(opinion)
    return read.flags, read.urgency, read.goal_met


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


def _problem_checks(session: Session, run_ids: Sequence[int]) -> dict[int, list[CheckResult]]:
    """The checks of these runs that did not pass, in order, by run (one statement)."""
    not_passed = or_(
        CheckRow.outcome.in_([str(o) for o in CheckOutcome if o is not CheckOutcome.PASSED]),
        and_(
            CheckRow.outcome.is_(None), or_(CheckRow.passed.is_(None), CheckRow.passed.is_(False))
        ),
    )
    query = (
        select(CheckRow)
        .where(CheckRow.run_id.in_(run_ids), not_passed)
        .order_by(CheckRow.run_id, CheckRow.position)
    )
    found: dict[int, list[CheckResult]] = {}
    for row in session.scalars(query):
        found.setdefault(row.run_id, []).append(check_result(row))
    return found


def _page_rows(
    session: Session, picked: Sequence[tuple[int, int | None]], now: dt.datetime
) -> list[BoardRow]:
    """The page's rows in full, in the order given: a fixed number of statements for any page."""
    if not picked:
        return []
    run_ids = [run_id for run_id, _ in picked]
    incident_ids = [i for _, i in picked if i is not None]
    shown = select(RunRow).options(load_only(*_SHOWN)).where(RunRow.id.in_(run_ids))
    runs = {r.id: r for r in session.scalars(shown)}
    query = select(IncidentRow).where(IncidentRow.id.in_(incident_ids))
    incidents = {i.id: i for i in session.scalars(query)}
    actions = actions_for(session, run_ids, incident_ids)
    clause = or_(DeliveryRow.run_id.in_(run_ids), DeliveryRow.incident_id.in_(incident_ids))
    by_run: dict[int, list[DeliveryRow]] = {}
    by_incident: dict[int, list[DeliveryRow]] = {}
    for d in session.scalars(select(DeliveryRow).options(load_only(*_SENT)).where(clause)):
        if d.run_id is not None:
            by_run.setdefault(d.run_id, []).append(d)
        if d.incident_id is not None:
            by_incident.setdefault(d.incident_id, []).append(d)
    checks = _problem_checks(session, run_ids)
    automations = sorted({r.automation for r in runs.values()})
    last_run = dict(
        session.execute(
            select(RunRow.automation, func.max(RunRow.finished_at))
            .where(RunRow.automation.in_(automations))
            .group_by(RunRow.automation)
        ).all()
    )
    rows: list[BoardRow] = []
    for run_id, incident_id in picked:
        run = runs[run_id]
        incident = incidents.get(incident_id) if incident_id is not None else None
        review = fold(subject_actions(actions, run_id, incident_id))
        sent = by_run.get(run_id, [])
        if incident_id is not None:
            sent = sent + by_incident.get(incident_id, [])
        mine = {d.id: d for d in sent}  # a delivery of both the run and the incident: once
        flags, urgency, goal_met = opinion_fields(run.second_opinion)
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
                owner=run.owner,
                tags=split_tags(run.tags),
                source=run.source or run.definition_source,
                description=run.description,
                severity=run.severity,
                what_is_wrong=what_is_wrong(
                    run.status, run.finding, run.error, run.summary or "", checks.get(run.id, [])
                ),
                delivery=_delivery_status(list(mine.values())),
                review=review,
                needs_me=needs_me(run.status, run.finding, review, now),
            )
        )
    return rows


def _facets(found: Iterable[Any]) -> tuple[list[str], list[str], list[str]]:
    owners: set[str] = set()
    tags: set[str] = set()
    sources: set[str] = set()
    for facet, value in found:
        if facet == "owner":
            owners.add(value)
        elif facet == "tags":
            tags.update(split_tags(value))
        else:
            sources.add(value)
    return sorted(owners), sorted(tags), sorted(sources)


def board(store: Store, filters: Filters, *, now: dt.datetime) -> BoardPage:
    """Return one page of the list.

    Args:
        store: the report store.
        filters: what to show; a page past the last gives the last page.
        now: the current time (aware); decides whether a snooze still runs.
    """
    size = max(1, filters.page_size)
    with store.session() as session:
        overview = statement(Shape.of(filters))
        found = session.execute(
            overview, parameters(filters, now, (filters.page - 1) * size, size)
        ).all()
        counted = {r.name: int(r.n) for r in found if r.part == "count"}
        total = counted["total"]
        pages = max(1, math.ceil(total / size))
        page = min(max(1, filters.page), pages)
        if page != filters.page:  # past the last page (rare): the last page instead
            again = parameters(filters, now, (page - 1) * size, size)
            found = session.execute(overview, again).all()
        picked = [
            (int(r.run_id), r.incident_id)
            for r in sorted((r for r in found if r.part == "row"), key=lambda r: r.position)
        ]
        owners, tags, sources = _facets(
            (r.part, r.name) for r in found if r.part not in ("row", "count")
        )
        rows = _page_rows(session, picked, now)
    return BoardPage(
        rows=rows,
        total=total,
        page=page,
        page_size=size,
        pages=pages,
        owners=owners,
        tags=tags,
        sources=sources,
        counts={str(q): counted[str(q)] for q in QuickFilter},
    )
