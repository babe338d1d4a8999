"""Incidents: every stored run opens, continues or resolves them; and the events it announces.

An incident is one problem of one automation, so that a problem gets one
message and one review state, not one per run:

- ``attention``: opens at the first Needs attention and closes at the next
  Clear run.
- ``error``: opens at the first run in error and closes at the next
  completed run.

Incidents move on **every** stored run, whether or not alerts are sent
(``lookout run`` without ``--notify``, a service with no channel): what
people do about a problem (``worker.review``) is recorded with its incident
and follows it across runs.

Announcing is separate. A run planned with ``announce`` (the service, ``lookout
run --notify``) announces: the incident's opening (``needs_attention``,
``run_error``) the first time it is announced at all — at its opening, or at
the first announcing run after runs that did not announce; then a reminder
only when ``repeat_interval`` (the automation's, default 24 h) has passed since
the last announcement; ``resolved`` when it closes an incident that was
announced (a Clear run closing an error incident counts, and so does a Needs
attention run: its error incident is over, and a pager closes that page while
the run opens another; a chat channel gets the run's one message, Needs
attention). ``double_check_disagrees``
and ``changed_since_last_run`` come from the run's second opinion and are
announced on every announcing run that has them; ``warned`` on every
announcing Clear run with a check that broke its ``warn:`` level (no
incident opens for it; ``alerts.on_warning`` says who hears of it). A run planned without
``announce`` moves the incidents and announces nothing (its note says so).

``decide_run_events`` decides a run's events in one transaction that first inserts the
run's ``alert_runs`` row (primary key: the run) and then moves its incidents,
so a redelivered task, a retry or a second worker finds the events decided and
reuses them: incidents move and events are decided exactly once, when the run
is stored (``checks.run_lifecycle.run_and_store``, for every trigger). A run older
than one already planned for the same automation announces nothing and moves
nothing (its note says so).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from checks.errors import StoreError
from checks.opinion.second_opinion import read_opinion
from checks.report import CheckOutcome, Finding, RunReport, Status
from checks.settings.alerts import ALL_EVENTS, EventKind
from checks.store import list_rows
from checks.store.alert_tables import AlertRunRow, IncidentRow

DEFAULT_REPEAT_INTERVAL_S = 86_400.0
_FLAG_EVENTS = (EventKind.DOUBLE_CHECK_DISAGREES, EventKind.CHANGED_SINCE_LAST_RUN)
_DECIDE_TRIES = 5


@dataclass(frozen=True)
class AlertEvent:
    """One event a run announces.

    Attributes:
        kind: the event.
        reminder: a repeat of an open incident's announcement.
        incident_id: the incident it belongs to (None for flag events with no
            open incident).
        thread_key: the incident's thread (``lookout-{automation}-{incident_id}``).
        opened_at: ISO 8601 UTC time the incident opened.
    """

    kind: EventKind
    reminder: bool = False
    incident_id: int | None = None
    thread_key: str | None = None
    opened_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return a JSON-safe dict (stored in ``alert_runs.events``)."""
        return {**asdict(self), "kind": str(self.kind)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AlertEvent:
        """Rebuild an event stored by ``to_json``."""
        return cls(**{**data, "kind": EventKind(data["kind"])})


@dataclass(frozen=True)
class RunEvents:
    """A run's events; ``new`` is True when this call decided them (else they were reused)."""

    run_id: int
    events: list[AlertEvent] = field(default_factory=list)
    note: str | None = None
    new: bool = True


def thread_key(incident: IncidentRow) -> str:
    """Return the incident's thread key (stable for the incident's life)."""
    return f"lookout-{incident.automation}-{incident.id}"


def repeat_interval_s(report: RunReport) -> float:
    """Return the automation's ``repeat_interval`` in seconds (stored with the run)."""
    value = report.definition.get("repeat_interval")
    return (
        float(value) if isinstance(value, int | float) and value > 0 else DEFAULT_REPEAT_INTERVAL_S
    )


NOT_ANNOUNCED = "not announced: the run was made without alerts (lookout run without --notify)"


def decide_run_events(
    engine: Engine,
    report: RunReport,
    *,
    now: dt.datetime,
    enabled: tuple[EventKind, ...] | list[EventKind] = ALL_EVENTS,
    announce: bool = True,
) -> RunEvents:
    """Move the incidents for ``report``'s run and return its events, unless already done.

    Args:
        engine: the store's engine.
        report: a stored run (``run_id`` set).
        now: the current time (aware); reminders are due by it. Injectable for tests.
        enabled: the events sent at all (``alerts.events``); incidents move regardless.
        announce: whether this run announces (see the module docstring); without it
            the incidents move and it holds no event.

    Raises:
        ValueError: the report has no ``run_id``.
        StoreError: concurrent writers kept conflicting (after 5 tries).
    """
    if report.run_id is None:
        raise ValueError("decide_run_events needs a stored run (run_id is None)")
    for _ in range(_DECIDE_TRIES):
        try:
            with Session(engine, expire_on_commit=False) as session, session.begin():
                row = AlertRunRow(
                    run_id=report.run_id,
                    automation=report.automation,
                    scheduled_for=report.scheduled_for,
                    planned_at=now,
                    events=[],
                )
                session.add(row)
                session.flush()  # the run's claim: a second planner stops here
                events, note = _move_incidents(session, report, now, announce)
                events = [e for e in events if e.kind in enabled]
                row.events = [e.to_json() for e in events]
                row.note = note
                return RunEvents(report.run_id, events, note, new=True)
        except IntegrityError:
            existing = load_run_events(engine, report.run_id)
            if existing is not None:
                return existing
            # another run of the automation opened the same incident first: decide again
    raise StoreError(f"could not plan the alerts of run {report.run_id}: conflicting writers")


def load_run_events(engine: Engine, run_id: int) -> RunEvents | None:
    """Return the stored events of a run, or None when they have not been decided."""
    with Session(engine) as session:
        row = session.get(AlertRunRow, run_id)
        if row is None:
            return None
        events = [AlertEvent.from_json(e) for e in row.events]
        return RunEvents(run_id, events, row.note, new=False)


def open_incidents(engine: Engine, automation: str | None = None) -> list[IncidentRow]:
    """Return the open incidents, oldest first (of one automation when named)."""
    query = select(IncidentRow).where(IncidentRow.open_key.is_not(None)).order_by(IncidentRow.id)
    if automation is not None:
        query = query.where(IncidentRow.automation == automation)
    with Session(engine, expire_on_commit=False) as session:
        return list(session.scalars(query))


class _Opened:
    """An automation's open incidents by kind: read once per run, kept as its events move them.

    Each move keeps the review list's rows too (``checks.store.list_rows``), in
    the transaction deciding the events, after locking the automation's report row once.
    """

    def __init__(self, session: Session, automation: str) -> None:
        keys = [f"{automation}:{kind}" for kind in ("error", "attention")]
        query = select(IncidentRow).where(IncidentRow.open_key.in_(keys))
        self.by_kind = {row.kind: row for row in session.scalars(query)}
        self.session = session
        self.automation = automation
        self.locked = False

    def get(self, kind: str) -> IncidentRow | None:
        """The open incident of this kind, or None."""
        return self.by_kind.get(kind)

    def _moving(self) -> None:
        if not self.locked:
            list_rows.lock(self.session.connection(), self.automation)
            self.locked = True

    def open(
        self, report: RunReport, kind: str, now: dt.datetime, *, announced: bool
    ) -> IncidentRow:
        """Open an incident of this kind (``_start``) and list its newest run."""
        self._moving()
        incident = self.by_kind[kind] = _start(self.session, report, kind, now, announced=announced)
        list_rows.incident_opened(self.session.connection(), incident.id)
        return incident

    def close(self, incident: IncidentRow, report: RunReport, now: dt.datetime) -> None:
        """Close it (``_close``): it is open no longer, nor listed."""
        self._moving()
        _close(incident, report, now)
        list_rows.incident_closed(self.session.connection(), incident.id)
        self.by_kind.pop(incident.kind, None)


def _start(
    session: Session, report: RunReport, kind: str, now: dt.datetime, *, announced: bool
) -> IncidentRow:
    """Open an incident (flushed: its id names its thread); ``announced``: by this run, now."""
    incident = IncidentRow(
        automation=report.automation,
        kind=kind,
        open_key=f"{report.automation}:{kind}",
        opened_at=now,
        opened_run_id=report.run_id,
        last_notified_at=now if announced else None,
        reminders=0,
    )
    session.add(incident)
    session.flush()
    return incident


def _close(incident: IncidentRow, report: RunReport, now: dt.datetime) -> None:
    incident.open_key = None
    incident.closed_at = now
    incident.closed_run_id = report.run_id


def _event(kind: EventKind, incident: IncidentRow | None, *, reminder: bool = False) -> AlertEvent:
    if incident is None:
        return AlertEvent(kind)
    return AlertEvent(
        kind, reminder, incident.id, thread_key(incident), incident.opened_at.isoformat()
    )


def _open_or_continue(
    opened: _Opened,
    report: RunReport,
    kind: str,
    event: EventKind,
    now: dt.datetime,
    announce: bool,
) -> AlertEvent | None:
    """Open the incident or continue it; announce it first, or remind once the interval passed."""
    incident = opened.get(kind)
    if incident is None:  # a new incident: this run announces it first, when it announces
        incident = opened.open(report, kind, now, announced=announce)
        return _event(event, incident) if announce else None
    if not announce:
        return None
    last = incident.last_notified_at
    if last is None:  # never announced: this run says it first
        incident.last_notified_at = now
        return _event(event, incident)
    if (now - last).total_seconds() >= repeat_interval_s(report):
        incident.last_notified_at = now
        incident.reminders += 1
        return _event(event, incident, reminder=True)
    return None


def _newer_run_planned(session: Session, report: RunReport) -> bool:
    newest = session.scalar(
        select(func.max(AlertRunRow.scheduled_for)).where(
            AlertRunRow.automation == report.automation, AlertRunRow.run_id != report.run_id
        )
    )
    return newest is not None and newest > report.scheduled_for


def _move_incidents(
    session: Session, report: RunReport, now: dt.datetime, announce: bool
) -> tuple[list[AlertEvent], str | None]:
    """Move the automation's incidents for this run and return its events and a note."""
    if _newer_run_planned(session, report):
        return [], "a newer run of this automation was planned first: nothing moved or sent"
    if report.status not in (Status.ERROR, Status.COMPLETED):
        return [], f"run status {report.status}: nothing to announce"
    events: list[AlertEvent] = []
    opened = _Opened(session, report.automation)  # one read; the moves below keep it current
    if report.status == Status.ERROR:
        found = _open_or_continue(opened, report, "error", EventKind.RUN_ERROR, now, announce)
        events += [found] if found else []
    else:  # completed
        failing = opened.get("error")
        if failing is not None:
            opened.close(failing, report, now)
        if report.finding == Finding.NEEDS_ATTENTION:
            if failing is not None and failing.last_notified_at is not None:
                events.append(_event(EventKind.RESOLVED, failing))  # a pager closes its page
            found = _open_or_continue(
                opened, report, "attention", EventKind.NEEDS_ATTENTION, now, announce
            )
            events += [found] if found else []
        elif report.finding == Finding.CLEAR:
            attention = opened.get("attention")
            if attention is not None:
                opened.close(attention, report, now)
            closed = attention or failing
            if closed is not None and closed.last_notified_at is not None:
                events.append(_event(EventKind.RESOLVED, closed))
            if any(c.outcome is CheckOutcome.WARNED for c in report.checks):
                events.append(AlertEvent(EventKind.WARNED))
    if not announce:
        return [], NOT_ANNOUNCED
    attention = opened.get("attention")
    flags = read_opinion(report.second_opinion).flags
    events += [_event(kind, attention) for kind in _FLAG_EVENTS if kind in flags]
    return events, None
