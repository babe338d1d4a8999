"""The store's alert tables: what each run decided to announce, incidents, deliveries, attempts.

Written by ``checks.store.incidents`` (on every stored run) and ``worker.alerts.delivery``;
migrations ``0004`` and ``0011``.
Times are naive UTC in the database and aware UTC in Python (``UTCDateTime``).

- ``alert_runs``: one row per stored run (the run's events, decided once, in
  the same transaction that moved its incidents; none when it did not announce).
- ``alert_incidents``: one per problem of one automation (``attention``: from the
  first Needs attention to the Clear run that resolves it; ``error``: from the
  first run in error to the next completed run). ``open_key`` is
  ``automation:kind`` while open and NULL once closed; its unique constraint
  keeps at most one open incident per automation and kind.
- ``alert_deliveries``: one per (run, event, channel), unique, inserted before
  anything is sent: the idempotency key.
- ``alert_attempts``: every HTTP attempt of a delivery, with its outcome.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from checks.store.run_tables import Base, UTCDateTime


class AlertRunRow(Base):
    """The alert plan of one run: its events (JSON list), decided once."""

    __tablename__ = "alert_runs"

    run_id: Mapped[int] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    automation: Mapped[str] = mapped_column(String(64), index=True)
    scheduled_for: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    planned_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    events: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    note: Mapped[str | None] = mapped_column(Text)


class IncidentRow(Base):
    """One problem of one automation, open until a run resolves it.

    ``last_notified_at`` is when it was last announced (opening or reminder);
    None while no run that announces has seen it.
    """

    __tablename__ = "alert_incidents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    automation: Mapped[str] = mapped_column(String(64), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    open_key: Mapped[str | None] = mapped_column(String(100), unique=True)
    opened_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    opened_run_id: Mapped[int | None] = mapped_column(Integer)
    last_notified_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    reminders: Mapped[int] = mapped_column(Integer, default=0)
    closed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    closed_run_id: Mapped[int | None] = mapped_column(Integer)


class DeliveryRow(Base):
    """One message for one (run, event, channel); the row is the idempotency key.

    ``status``: ``sending`` (claimed, in flight), ``deferred`` (quiet hours, due at
    ``not_before``), ``sent``, ``fallback_sent`` (the full message was refused
    with a permanent 4xx and the minimal fallback went out), ``failed``.
    ``alert`` holds the rendered-independent message content, so a deferred
    delivery can be sent later without the run.
    """

    __tablename__ = "alert_deliveries"
    __table_args__ = (
        UniqueConstraint("run_id", "event", "channel", name="uq_alert_deliveries_key"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), index=True
    )
    event: Mapped[str] = mapped_column(String(32))
    channel: Mapped[str] = mapped_column(String(64))
    channel_type: Mapped[str] = mapped_column(String(16))
    reminder: Mapped[bool] = mapped_column(Boolean, default=False)
    incident_id: Mapped[int | None] = mapped_column(Integer, index=True)
    status: Mapped[str] = mapped_column(String(16), index=True)
    not_before: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    alert: Mapped[dict[str, Any]] = mapped_column(JSON)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    http_status: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    claimed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())


class AttemptRow(Base):
    """One HTTP attempt of a delivery: ``kind`` message or fallback; ``outcome`` and code."""

    __tablename__ = "alert_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    delivery_id: Mapped[int] = mapped_column(
        ForeignKey("alert_deliveries.id", ondelete="CASCADE"), index=True
    )
    number: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    outcome: Mapped[str] = mapped_column(String(16))
    http_status: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    duration_ms: Mapped[int | None] = mapped_column(Integer)
