"""The reaper's statements: runs whose lease ran out, requeued or given up; messages to resend.

Each change is fenced on the attempt seen, so a worker claiming at the same
moment wins or loses cleanly. Each function runs in the session it is given
(``worker.service.run_queue`` opens and commits them).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session

from checks.report import Status
from checks.store.list_rows import runs_ended
from checks.store.run_tables import RunRow
from worker.service.queue_records import QueuedRun, Reaped, queued_run

_IN_PROCESS = (
    "the process running it in-process (lookout run) stopped or lost"
    " the store before the run ended; such runs are never queued"
)


def reap(session: Session, now: dt.datetime, *, max_attempts: int) -> Reaped:
    """Requeue running runs whose lease ran out; give up on those out of attempts.

    A run made in-process (``lookout run``, no ``source``) is never queued:
    its lease running out means its process is gone, so it ends in error. A
    requeued run goes back to ``queued`` (attempt kept; the next claim counts
    the next attempt) with ``enqueued_at`` cleared.
    """
    reaped = Reaped()
    query = select(
        RunRow.id, RunRow.automation, RunRow.attempt, RunRow.source, RunRow.definition
    ).where(RunRow.status == str(Status.RUNNING), RunRow.lease_expires_at < now)
    for row in session.execute(query).all():
        fence = update(RunRow).where(
            RunRow.id == row.id,
            RunRow.attempt == row.attempt,
            RunRow.status == str(Status.RUNNING),
            RunRow.lease_expires_at < now,
        )
        in_process = row.source is None  # lookout run: no worker may take it over
        gives_up = in_process or row.attempt >= max_attempts
        if gives_up:
            reason = (
                _IN_PROCESS
                if in_process
                else f"gave up after {row.attempt} attempts: each attempt's lease ran out "
                "(the worker was killed, lost or stuck)"
            )
            values: dict[str, Any] = {
                "status": str(Status.ERROR),
                "error": reason,
                "summary": f"**Error** — {reason}.",
                "finished_at": now,
                "lease_expires_at": None,
            }
        else:
            values = {"status": str(Status.QUEUED), "lease_expires_at": None, "enqueued_at": None}
        done = session.execute(
            fence.values(**values).returning(RunRow.id).execution_options(synchronize_session=False)
        )
        if done.first() is None:
            continue
        if gives_up:
            reaped.gave_up.append(row.id)
        else:
            reaped.requeued.append(queued_run(row))
    runs_ended(session.connection(), reaped.gave_up)  # the review list's rows
    return reaped


def to_resend(
    session: Session, now: dt.datetime, *, unsent_grace_s: float, resend_after_s: float
) -> list[QueuedRun]:
    """Queued runs unsent after ``unsent_grace_s``, or sent and unclaimed ``resend_after_s``."""
    unsent = and_(
        RunRow.enqueued_at.is_(None),
        RunRow.created_at < now - dt.timedelta(seconds=unsent_grace_s),
    )
    stale = RunRow.enqueued_at < now - dt.timedelta(seconds=resend_after_s)
    query = (
        select(RunRow.id, RunRow.automation, RunRow.source, RunRow.definition)
        .where(RunRow.status == str(Status.QUEUED), or_(unsent, stale))
        .order_by(RunRow.id)
    )
    return [queued_run(row) for row in session.execute(query)]
