"""A worker's claim on a run: read it, admit it (source limit, exclusive), lease and attempt.

Per-source concurrency and ``overlap: buffer_one`` are enforced at claim time,
in the same statement (plus a transaction-scoped advisory lock on PostgreSQL,
released even when the worker is killed). The statements are built once per
kind of claim; ``worker.service.run_queue.RunQueue.take`` runs them.
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any, Literal

from sqlalchemy import Select, Update, and_, bindparam, exists, func, or_, select, text, update
from sqlalchemy.orm import Session

from checks.report import Status
from checks.store.run_tables import RunRow, UTCDateTime, table_of
from worker.service.queue_records import RunInfo

Claim = int | Literal["busy"] | None
"""What a claim gives: the new attempt, ``"busy"`` (may not start yet), or None."""

Admission = tuple[int | None, bool]
"""A claim's bounds: the source's concurrency limit (None: unbounded), and exclusive or not."""

ACTIVE = (str(Status.QUEUED), str(Status.RUNNING))
"""The statuses of a run still to finish: queued or running."""

_RUN_INFO = select(
    RunRow.id,
    RunRow.automation,
    RunRow.status,
    RunRow.attempt,
    RunRow.scheduled_for,
    RunRow.trigger,
    RunRow.source,
    RunRow.definition,
).where(RunRow.id == bindparam("run_id"))


def run_info(session: Session, run_id: int) -> RunInfo | None:
    """What a worker needs before claiming ``run_id``, or None when it does not exist."""
    row = session.connection().execute(_RUN_INFO, {"run_id": run_id}).first()
    if row is None:
        return None
    return RunInfo(
        row.id,
        row.automation,
        row.status,
        row.attempt,
        row.scheduled_for,
        row.trigger,
        row.source,
        dict(row.definition or {}),
    )


_ADVISORY_LOCK = text("SELECT pg_advisory_xact_lock(hashtext(:k))")


@functools.cache
def _claim_statements(bounded: bool, exclusive: bool) -> tuple[Update, Select[Any], Update]:
    """The claim's statements (admit, still claimable, mark busy), built once per kind.

    Parameters (``b_`` and): ``run_id``, ``max_attempts``, ``now``, ``until`` (the
    lease's end), ``source`` and ``source_limit`` (``bounded``), ``automation`` (``exclusive``).
    """
    runs = table_of(RunRow)
    other = runs.alias("other")
    now = bindparam("b_now", type_=UTCDateTime())
    live = and_(other.c.status == str(Status.RUNNING), other.c.lease_expires_at >= now)
    claimable = [
        runs.c.id == bindparam("b_run_id"),
        runs.c.attempt < bindparam("b_max_attempts"),
        or_(
            runs.c.status == str(Status.QUEUED),
            and_(runs.c.status == str(Status.RUNNING), runs.c.lease_expires_at < now),
        ),
    ]
    admitted = list(claimable)
    if bounded:
        count = (
            select(func.count())
            .select_from(other)
            .where(
                live, other.c.source == bindparam("b_source"), other.c.id != bindparam("b_run_id")
            )
            .scalar_subquery()
        )
        admitted.append(count < bindparam("b_source_limit"))
    if exclusive:
        admitted.append(
            ~exists().where(
                live,
                other.c.automation == bindparam("b_automation"),
                other.c.id != bindparam("b_run_id"),
            )
        )
    admit = (
        update(runs)
        .where(*admitted)
        .values(
            status=str(Status.RUNNING),
            attempt=runs.c.attempt + 1,
            started_at=now,
            lease_expires_at=bindparam("b_until", type_=UTCDateTime()),
        )
        .returning(runs.c.attempt)
    )
    waiting = select(runs.c.id).where(*claimable)
    busy = update(runs).where(runs.c.id == bindparam("b_run_id")).values(enqueued_at=now)
    return admit, waiting, busy


def claim_run(
    session: Session,
    run: RunInfo,
    admission: Admission,
    *,
    now: dt.datetime,
    lease_s: float,
    max_attempts: int,
    postgres: bool,
) -> Claim:
    """Mark ``run`` running under a new attempt and a lease of ``lease_s`` seconds.

    Claimable: queued, or running with its lease run out, and fewer than
    ``max_attempts`` attempts so far. Returns ``"busy"`` when the run is
    claimable but its source already runs its limit of runs (``admission``'s
    first part), or (its second part, exclusive) another run of the
    automation holds a live lease; None when the run is finished, missing,
    held by a live lease or out of attempts, so a duplicate or redelivered
    message does nothing. Runs in ``session``'s transaction. ``now`` is the
    store's time (``checks.store.store_clock``), the clock leases are judged by.
    """
    source_limit, exclusive = admission
    bounded = source_limit is not None and run.source is not None
    admit, waiting, busy = _claim_statements(bounded, exclusive)
    params = {
        "b_run_id": run.id,
        "b_max_attempts": max_attempts,
        "b_now": now,
        "b_until": now + dt.timedelta(seconds=lease_s),
        "b_source": run.source,
        "b_source_limit": source_limit,
        "b_automation": run.automation,
    }
    locks = [f"lookout.source.{run.source}"] if bounded else []
    locks += [f"lookout.automation.{run.automation}"] if exclusive else []
    connection = session.connection()
    for key in locks if postgres else ():  # admission: source first, then automation
        connection.execute(_ADVISORY_LOCK, {"k": key})
    attempt = connection.execute(admit, params).scalar()
    if attempt is not None:
        return int(attempt)
    if connection.execute(waiting, params).first() is None:
        return None
    connection.execute(busy, params)
    return "busy"
