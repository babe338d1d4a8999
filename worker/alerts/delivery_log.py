"""Reading the record of deliveries and their attempts (for the CLI, the API and tests).

Every delivery — sent, failed, deferred or still sending — and every HTTP
attempt behind it is in the store; nothing is dropped silently. Errors are
stored redacted (``checks.settings.config.redact``): no webhook URL or token appears.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from checks.store.alert_tables import AttemptRow, DeliveryRow

DELIVERY_STATUSES = ("sending", "deferred", "sent", "fallback_sent", "failed")
"""Every status a delivery is stored with (``DeliveryRow.status``)."""
FAILED_STATUSES = ("failed", "fallback_sent")
"""Statuses where the full message did not go out (shown by ``lookout reports``)."""


@dataclass(frozen=True)
class DeliveryRecord:
    """One (run, event, channel) delivery as stored.

    Attributes:
        status: ``sending``, ``deferred``, ``sent``, ``fallback_sent`` or ``failed``.
        attempts: HTTP attempts made, fallback included.
        http_status: the last attempt's HTTP status (None: no response, or none yet).
        error: why the full message did not go out (redacted), else None.
        not_before: for a deferred delivery, when quiet hours end (UTC).
    """

    id: int
    run_id: int | None
    event: str
    channel: str
    channel_type: str
    status: str
    reminder: bool
    attempts: int
    http_status: int | None
    error: str | None
    not_before: dt.datetime | None
    created_at: dt.datetime
    finished_at: dt.datetime | None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict (times as ISO 8601)."""
        return {
            "id": self.id,
            "run_id": self.run_id,
            "event": self.event,
            "channel": self.channel,
            "channel_type": self.channel_type,
            "status": self.status,
            "reminder": self.reminder,
            "attempts": self.attempts,
            "http_status": self.http_status,
            "error": self.error,
            "not_before": self.not_before.isoformat() if self.not_before else None,
            "created_at": self.created_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }


@dataclass(frozen=True)
class AttemptRecord:
    """One HTTP attempt of a delivery.

    ``kind`` is ``message`` or ``fallback``; ``outcome`` is ``sent``,
    ``rate_limited``, ``transient`` or ``permanent``; ``duration_ms`` in milliseconds.
    """

    number: int
    kind: str
    at: dt.datetime
    outcome: str
    http_status: int | None
    error: str | None
    duration_ms: int | None


def record_of(row: DeliveryRow) -> DeliveryRecord:
    """Return the record of a delivery row."""
    return DeliveryRecord(
        id=row.id,
        run_id=row.run_id,
        event=row.event,
        channel=row.channel,
        channel_type=row.channel_type,
        status=row.status,
        reminder=row.reminder,
        attempts=row.attempts,
        http_status=row.http_status,
        error=row.error,
        not_before=row.not_before,
        created_at=row.created_at,
        finished_at=row.finished_at,
    )


def get_delivery(engine: Engine, delivery_id: int) -> DeliveryRecord | None:
    """Return one delivery, or None."""
    with Session(engine) as session:
        row = session.get(DeliveryRow, delivery_id)
        return None if row is None else record_of(row)


def list_deliveries(
    engine: Engine,
    *,
    run_id: int | None = None,
    status: str | None = None,
    limit: int = 50,
) -> list[DeliveryRecord]:
    """Return deliveries, newest first, optionally of one run or one status."""
    query = select(DeliveryRow).order_by(DeliveryRow.id.desc()).limit(limit)
    if run_id is not None:
        query = query.where(DeliveryRow.run_id == run_id)
    if status is not None:
        query = query.where(DeliveryRow.status == status)
    with Session(engine) as session:
        return [record_of(row) for row in session.scalars(query)]


def deliveries_by_run(engine: Engine, run_ids: Iterable[int]) -> dict[int, list[DeliveryRecord]]:
    """Return the deliveries of each of ``run_ids`` (oldest first); runs without any are absent.

    For ``lookout reports``: a run whose deliveries include ``failed`` or
    ``fallback_sent`` (``FAILED_STATUSES``) should say so.
    """
    ids = list(run_ids)
    found: dict[int, list[DeliveryRecord]] = {}
    if not ids:
        return found
    query = select(DeliveryRow).where(DeliveryRow.run_id.in_(ids)).order_by(DeliveryRow.id)
    with Session(engine) as session:
        for row in session.scalars(query):
            assert row.run_id is not None
            found.setdefault(row.run_id, []).append(record_of(row))
    return found


def attempts_of(engine: Engine, delivery_id: int) -> list[AttemptRecord]:
    """Return a delivery's attempts in order."""
    query = (
        select(AttemptRow)
        .where(AttemptRow.delivery_id == delivery_id)
        .order_by(AttemptRow.number, AttemptRow.id)
    )
    with Session(engine) as session:
        return [
            AttemptRecord(a.number, a.kind, a.at, a.outcome, a.http_status, a.error, a.duration_ms)
            for a in session.scalars(query)
        ]


def summarize(records: list[DeliveryRecord]) -> str | None:
    """Return a one-line note on a run's deliveries for ``lookout reports``, or None if none.

    E.g. ``alerts: 2 sent, 1 failed (ops-slack: HTTP 400: invalid_blocks)``;
    failures name their channel and redacted error, so none goes unnoticed.
    """
    if not records:
        return None
    counts: dict[str, int] = {}
    for record in records:
        counts[record.status] = counts.get(record.status, 0) + 1
    parts = [f"{n} {status}" for status, n in sorted(counts.items())]
    failed = [r for r in records if r.status in FAILED_STATUSES]
    detail = "; ".join(f"{r.channel}: {r.error or r.status}" for r in failed)
    return "alerts: " + ", ".join(parts) + (f" ({detail})" if detail else "")
