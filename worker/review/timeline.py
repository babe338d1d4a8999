"""A report's alert timeline: its run, incident, alerts, attempts and actions, in time order.

Every entry is a line a person reads (``text``) plus the facts behind it, so
the page and the API show the same thing. Errors of deliveries are stored
redacted (``worker.alerts.delivery_log``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from checks.store.alert_tables import AttemptRow, IncidentRow
from checks.store.run_tables import RunRow
from worker.alerts.delivery_log import DeliveryRecord
from worker.review.vocabulary import RESOLVE_LABELS, Action, ActionKind

_FINDINGS = {"needs_attention": "Needs attention", "clear": "Clear"}
_EVENTS = {
    "needs_attention": "Needs attention",
    "double_check_disagrees": "Double-check disagrees",
    "changed_since_last_run": "Changed since last run",
    "run_error": "Run error",
    "resolved": "Resolved",
}


@dataclass(frozen=True)
class TimelineEntry:
    """One event of the timeline.

    Attributes:
        at: when it happened (UTC).
        kind: ``run``, ``incident``, ``alert``, ``attempt`` or ``action``.
        text: one line saying what happened.
        actor: who acted (``action`` entries only).
        status: the outcome where there is one: a run's status, a delivery's
            status or an attempt's outcome.
        failed: the entry is a failure someone should see.
    """

    at: dt.datetime
    kind: str
    text: str
    actor: str | None = None
    status: str | None = None
    failed: bool = False


def describe(action: Action) -> str:
    """Return a short line saying what an action did, e.g. ``resolved: False positive``."""
    if action.kind == ActionKind.ACKNOWLEDGE:
        return "acknowledged"
    if action.kind == ActionKind.ASSIGN:
        return f"assigned to {action.assignee}" if action.assignee else "unassigned"
    if action.kind == ActionKind.SNOOZE:
        until = action.until.strftime("%Y-%m-%d %H:%M UTC") if action.until else "?"
        return f"snoozed until {until}"
    if action.kind == ActionKind.COMMENT:
        return f"commented: {action.comment}"
    if action.kind == ActionKind.RESOLVE:
        label = RESOLVE_LABELS[action.reason] if action.reason else "?"
        return f"resolved: {label}" + (f" — {action.comment}" if action.comment else "")
    return f"ran it now (run {action.queued_run_id})"


def _run_entries(run: RunRow) -> list[TimelineEntry]:
    entries = []
    if run.started_at:
        entries.append(
            TimelineEntry(run.started_at, "run", f"run {run.id} started ({run.trigger})")
        )
    if run.finished_at:
        outcome = _FINDINGS.get(run.finding or "", run.status)
        entries.append(
            TimelineEntry(
                run.finished_at,
                "run",
                f"run {run.id} finished: {outcome}",
                status=run.status,
                failed=run.status == "error",
            )
        )
    return entries


def _incident_entries(incident: IncidentRow | None) -> list[TimelineEntry]:
    if incident is None:
        return []
    what = "needs attention" if incident.kind == "attention" else "runs in error"
    entries = [
        TimelineEntry(
            incident.opened_at,
            "incident",
            f"incident {incident.id} opened ({what}) by run {incident.opened_run_id}",
        )
    ]
    if incident.closed_at:
        entries.append(
            TimelineEntry(
                incident.closed_at,
                "incident",
                f"incident {incident.id} closed by run {incident.closed_run_id}",
            )
        )
    return entries


def _delivery_entries(
    deliveries: Sequence[DeliveryRecord], attempts: Sequence[AttemptRow]
) -> list[TimelineEntry]:
    entries = []
    channels = {d.id: d.channel for d in deliveries}
    for d in deliveries:
        note = " (reminder)" if d.reminder else ""
        detail = f": {d.error}" if d.error else ""
        event = _EVENTS.get(d.event, d.event)
        entries.append(
            TimelineEntry(
                d.created_at,
                "alert",
                f"{event} alert to {d.channel}{note}: {d.status.replace('_', ' ')}{detail}",
                status=d.status,
                failed=d.status in ("failed", "fallback_sent"),
            )
        )
    for a in attempts:
        code = f" (HTTP {a.http_status})" if a.http_status is not None else ""
        detail = f": {a.error}" if a.error else code
        entries.append(
            TimelineEntry(
                a.at,
                "attempt",
                f"attempt {a.number} ({a.kind}) to {channels.get(a.delivery_id, '?')}: "
                f"{a.outcome.replace('_', ' ')}{detail}",
                status=a.outcome,
                failed=a.outcome != "sent",
            )
        )
    return entries


def timeline(
    run: RunRow,
    incident: IncidentRow | None,
    deliveries: Sequence[DeliveryRecord],
    attempts: Sequence[AttemptRow],
    actions: Sequence[Action],
) -> list[TimelineEntry]:
    """Return the run's timeline, oldest first."""
    entries = _run_entries(run) + _incident_entries(incident)
    entries += _delivery_entries(deliveries, attempts)
    entries += [TimelineEntry(a.at, "action", describe(a), actor=a.actor) for a in actions]
    return sorted(entries, key=lambda e: e.at)
