"""Which incident a run belongs to, and a report's review state as the fold of its actions.

An action is taken on a run. When the run belongs to an incident — the
automation's ``attention`` incident for a Needs attention run, its ``error``
incident for a run in error, opened at or before the run and not closed
before it (by run id, which grows with time) — the action is recorded with
the incident too, and then holds for every run of that incident: an
acknowledged incident stays acknowledged through its reminders. Incidents
move on every stored run, alerts or not (``checks.store.incidents``). A run
outside any incident (a Clear or skipped run) has its own state. An
incident's state ends with it: the next incident starts unreviewed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import replace

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from checks.report import Finding, Status
from checks.store.alert_tables import IncidentRow
from checks.store.review_tables import ReviewActionRow
from worker.review.vocabulary import Action, ActionKind, ResolveReason, ReviewState


def incident_kind(status: str, finding: str | None) -> str | None:
    """Return the incident kind a run with this status and finding belongs to, or None."""
    if status == Status.ERROR:
        return "error"
    if status == Status.COMPLETED and finding == Finding.NEEDS_ATTENTION:
        return "attention"
    return None


def incident_of(
    session: Session, automation: str, run_id: int, status: str, finding: str | None
) -> IncidentRow | None:
    """Return the incident the run belongs to, or None (see the module docstring)."""
    kind = incident_kind(status, finding)
    if kind is None:
        return None
    query = (
        select(IncidentRow)
        .where(
            IncidentRow.automation == automation,
            IncidentRow.kind == kind,
            IncidentRow.opened_run_id <= run_id,
            or_(IncidentRow.closed_run_id.is_(None), IncidentRow.closed_run_id > run_id),
        )
        .order_by(IncidentRow.id.desc())
        .limit(1)
    )
    return session.scalars(query).first()


def to_action(row: ReviewActionRow) -> Action:
    """Return the action a row records."""
    return Action(
        id=row.id,
        run_id=row.run_id,
        automation=row.automation,
        incident_id=row.incident_id,
        kind=ActionKind(row.kind),
        actor=row.actor,
        at=row.at,
        assignee=row.assignee,
        until=row.until,
        reason=ResolveReason(row.reason) if row.reason else None,
        comment=row.comment,
        queued_run_id=row.queued_run_id,
    )


def actions_for(
    session: Session, run_ids: Iterable[int], incident_ids: Iterable[int]
) -> list[Action]:
    """Return the actions on any of these runs or incidents, oldest first."""
    runs, incidents = list(set(run_ids)), list(set(incident_ids))
    if not runs and not incidents:
        return []
    clauses = []
    if runs:
        clauses.append(ReviewActionRow.run_id.in_(runs))
    if incidents:
        clauses.append(ReviewActionRow.incident_id.in_(incidents))
    query = select(ReviewActionRow).where(or_(*clauses)).order_by(ReviewActionRow.id)
    return [to_action(row) for row in session.scalars(query)]


def subject_actions(
    actions: Sequence[Action], run_id: int, incident_id: int | None
) -> list[Action]:
    """Return the actions that shape one report's state: on its run, or on its incident."""
    return [
        a
        for a in actions
        if a.run_id == run_id or (incident_id is not None and a.incident_id == incident_id)
    ]


def fold(actions: Sequence[Action]) -> ReviewState:
    """Return the review state after ``actions`` (oldest first); the latest of each kind wins."""
    state = ReviewState(actions=len(actions))
    for action in actions:
        if action.kind == ActionKind.ACKNOWLEDGE:
            state = replace(state, acknowledged_by=action.actor, acknowledged_at=action.at)
        elif action.kind == ActionKind.ASSIGN:
            state = replace(state, assignee=action.assignee or None)
        elif action.kind == ActionKind.SNOOZE:
            state = replace(state, snoozed_until=action.until)
        elif action.kind == ActionKind.COMMENT:
            state = replace(state, comments=state.comments + 1)
        elif action.kind == ActionKind.RESOLVE:
            state = replace(
                state,
                resolved_reason=action.reason,
                resolved_by=action.actor,
                resolved_at=action.at,
                comments=state.comments + (1 if action.comment else 0),
            )
    return state


def needs_me(status: str, finding: str | None, review: ReviewState, now: dt.datetime) -> bool:
    """Whether a report waits for someone: a problem nobody acknowledged, resolved or snoozed."""
    problem = incident_kind(status, finding) is not None
    return (
        problem
        and review.acknowledged_by is None
        and review.resolved_reason is None
        and not review.snoozed(now)
    )
