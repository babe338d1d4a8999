"""What the run queue hands around: slots to insert, runs to send, claims' facts, reap results."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Cursor:
    """Every slot at or before ``at`` is decided, for the schedule ``key``."""

    key: str
    at: dt.datetime


@dataclass(frozen=True)
class NewRun:
    """A slot to insert: a queued run, or a skipped record when ``reason`` is set."""

    automation: str
    scheduled_for: dt.datetime
    source: str | None
    definition: dict[str, Any]
    trigger: str = "schedule"
    reason: str | None = None


@dataclass(frozen=True)
class QueuedRun:
    """A run whose Celery message is to be sent: to the source's queue, with its time limit."""

    id: int
    automation: str
    source: str | None
    timeout_s: float


@dataclass(frozen=True)
class ActiveRun:
    """A run still queued or running."""

    id: int
    status: str
    scheduled_for: dt.datetime


@dataclass(frozen=True)
class RunInfo:
    """What a worker needs to know about a run before it claims it."""

    id: int
    automation: str
    status: str
    attempt: int
    scheduled_for: dt.datetime
    trigger: str
    source: str | None
    definition: dict[str, Any]


@dataclass
class Reaped:
    """What ``RunQueue.reap`` did: runs requeued (to send again) and runs given up."""

    requeued: list[QueuedRun] = field(default_factory=list)
    gave_up: list[int] = field(default_factory=list)


def timeout_s_of(definition: Mapping[str, Any] | None) -> float:
    """The soft time limit of a stored definition, in seconds (300 when unset or not a number)."""
    value = (definition or {}).get("timeout_s", 300.0)
    return float(value) if isinstance(value, int | float) else 300.0


def queued_run(row: Any) -> QueuedRun:
    """The ``QueuedRun`` of a ``runs`` row (id, automation, source, definition)."""
    return QueuedRun(row.id, row.automation, row.source, timeout_s_of(row.definition))
