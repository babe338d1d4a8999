"""The service's side of the store: due slots, schedule cursors, claims, leases, the reaper.

``RunQueue`` wraps a ``checks.store.store.Store`` (same engine, same tables) with
the statements the Celery service needs; ``Store`` keeps the in-process API.
Every method opens and commits its own transaction. Rules from the design
notes §5:

- A slot is a ``runs`` row, unique on (automation, scheduled_for); rows are
  inserted with ``INSERT … ON CONFLICT DO NOTHING`` and only the rows actually
  inserted come back to be queued: the database, not a lock, stops duplicates
  (``worker.service.slot_records``).
- A worker claims a run with a lease and an attempt number (``take``), renews
  the lease while it runs (``renew``); every write of a result is fenced on
  the attempt. ``reap`` requeues runs whose lease ran out, and gives up after
  ``max_attempts`` with status ``error`` and the reason (``worker.service.reaper``).
- Per-source concurrency and ``overlap: buffer_one`` are enforced at claim
  time, in the same statement (plus a transaction-scoped advisory lock on
  PostgreSQL, released even when the worker is killed; ``worker.service.claims``).
- Every slot and lease time is the store's (``now``, ``checks.store.store_clock``):
  one clock for every process, so a worker's skewed clock neither drops slots
  nor ends leases early. This process's clock is only compared with it, and a
  difference beyond ``skew_warn_s`` is logged as a warning.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from checks.clock import utcnow
from checks.report import FRESH_TRIGGER, Status
from checks.store.list_rows import runs_ended
from checks.store.run_tables import RunRow
from checks.store.store import Store, retry_writes
from checks.store.store_clock import SkewWatch, store_now
from worker.service import reaper, slot_records
from worker.service.claims import ACTIVE, Admission, Claim, claim_run, run_info
from worker.service.queue_records import (
    ActiveRun,
    Cursor,
    NewRun,
    QueuedRun,
    Reaped,
    RunInfo,
)


class RunQueue:
    """The service's statements over a store's tables.

    Args:
        store: the open store (migrations applied); its engine is shared.
        clock: this process's clock (default ``checks.clock.utcnow``), only
            compared with the store's.
        skew_warn_s: the difference between the two clocks, in seconds, past
            which a warning is logged (``service.clock_skew_warn_s``).
    """

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], dt.datetime] = utcnow,
        skew_warn_s: float = 5.0,
    ) -> None:
        self.store = store
        self.clock = clock
        self.skew = SkewWatch(skew_warn_s)
        self._postgres = store.engine.dialect.name == "postgresql"

    # -- the clock ---------------------------------------------------------

    def now(self) -> dt.datetime:
        """Return the store's current time (zone-aware, UTC), checking this process's clock."""
        with self.store.engine.connect() as connection:
            return self._checked(store_now(connection))

    def _now_in(self, session: Session) -> dt.datetime:
        """The store's current time, read in ``session``'s transaction, this clock checked."""
        return self._checked(store_now(session.connection()))

    def _checked(self, store: dt.datetime) -> dt.datetime:
        self.skew.check(self.clock(), store)
        return store

    # -- dispatch ----------------------------------------------------------

    def cursors(self) -> dict[str, Cursor]:
        """Return every automation's schedule cursor, by automation name."""
        with self.store.session() as session:
            return slot_records.read_cursors(session)

    def active_runs(self, automations: Collection[str]) -> dict[str, list[ActiveRun]]:
        """Return the runs still queued or running of these automations, oldest first."""
        if not automations:
            return {}
        with self.store.session() as session:
            return slot_records.read_active_runs(session, automations)

    def record(
        self,
        runs: Sequence[NewRun],
        cursors: Mapping[str, Cursor],
        *,
        now: dt.datetime,
    ) -> list[QueuedRun]:
        """Insert slots and move cursors, in one transaction; return the queued runs inserted.

        A slot that already has a row is left alone (``ON CONFLICT DO NOTHING``)
        and not returned, so two dispatchers never queue the same slot. A cursor
        never moves back for the same schedule key; a new key replaces it.
        """
        with self.store.session() as session:
            queued = slot_records.insert_slots(session, runs, now=now, postgres=self._postgres)
            slot_records.move_cursors(session, cursors, now=now, postgres=self._postgres)
        return sorted(queued, key=lambda q: q.id)

    def mark_sent(self, run_ids: Collection[int], *, at: dt.datetime | None = None) -> None:
        """Record that these runs' messages were sent (``enqueued_at``, default the store's now)."""
        if not run_ids:
            return
        with self.store.session() as session:
            session.execute(
                update(RunRow)
                .where(RunRow.id.in_(list(run_ids)))
                .values(enqueued_at=at or self._now_in(session))
                .execution_options(synchronize_session=False)
            )

    def add_manual(
        self,
        automation: str,
        source: str,
        definition: dict[str, Any],
        *,
        now: dt.datetime,
        fresh: bool = False,
    ) -> QueuedRun | None:
        """Insert an on-demand run for ``now`` (``lookout run-now``); None if that time is taken.

        ``fresh``: its trigger is ``fresh`` (``checks.report.FRESH_TRIGGER``), and the
        worker asks the agent even when the pinned plan's evidence is unchanged.
        """
        trigger = FRESH_TRIGGER if fresh else "manual"
        run = NewRun(automation, now, source, definition, trigger=trigger)
        inserted = self.record([run], {}, now=now)
        return inserted[0] if inserted else None

    # -- workers -----------------------------------------------------------

    def run_info(self, run_id: int) -> RunInfo | None:
        """Return what a worker needs before claiming ``run_id``, or None when it does not exist."""
        with self.store.session() as session:
            return run_info(session, run_id)

    def take(
        self,
        run_id: int,
        admission: Callable[[RunInfo], Admission],
        *,
        lease_s: float,
        max_attempts: int,
    ) -> tuple[RunInfo | None, Claim]:
        """Read a run and claim it, in one transaction: ``run_info`` then the claim.

        ``admission`` is called with the run (queued or running) to give the
        claim's bounds: the source's concurrency limit (None: unbounded)
        and whether the run is exclusive. Returns the run (None when it does
        not exist) and the claim (``worker.service.claims.claim_run``; None
        without one: the run is missing or ended, or the claim said None).
        """
        with self.store.session() as session:
            run = run_info(session, run_id)
            if run is None or run.status not in ACTIVE:
                return run, None
            claim = claim_run(
                session,
                run,
                admission(run),
                now=self._now_in(session),
                lease_s=lease_s,
                max_attempts=max_attempts,
                postgres=self._postgres,
            )
            return run, claim

    def claim(
        self,
        run: RunInfo,
        *,
        lease_s: float,
        max_attempts: int,
        source_limit: int | None = None,
        exclusive: bool = False,
    ) -> Claim:
        """``take`` for a run already read, with fixed bounds: the claim alone.

        Returns ``"busy"`` when the run is claimable but its source already runs
        ``source_limit`` runs, or (``exclusive``) another run of the automation
        holds a live lease; None when the run is finished, missing, held by a
        live lease or out of attempts, so a duplicate or redelivered message
        does nothing.
        """
        bounds: Admission = (source_limit, exclusive)
        taken = self.take(run.id, lambda _: bounds, lease_s=lease_s, max_attempts=max_attempts)
        return taken[1]

    def renew(self, run_id: int, attempt: int, *, lease_s: float) -> bool:
        """Extend the lease of ``attempt``; False when the run is no longer that attempt's.

        The lease ends ``lease_s`` after the store's now, the clock the reaper judges it by.
        """
        with self.store.session() as session:
            now = self._now_in(session)
            result = session.execute(
                update(RunRow)
                .where(
                    RunRow.id == run_id,
                    RunRow.attempt == attempt,
                    RunRow.status == str(Status.RUNNING),
                )
                .values(lease_expires_at=now + dt.timedelta(seconds=lease_s))
                .returning(RunRow.id)
                .execution_options(synchronize_session=False)
            )
            return result.first() is not None

    @retry_writes
    def fail(self, run_id: int, reason: str, *, attempt: int | None = None) -> bool:
        """End a running run in ``error`` with ``reason``; fenced on ``attempt`` when given.

        Returns whether the run was changed (False: it had ended, or another
        attempt holds it).
        """
        fence = [RunRow.id == run_id, RunRow.status == str(Status.RUNNING)]
        if attempt is not None:
            fence.append(RunRow.attempt == attempt)
        with self.store.session() as session:
            now = self._now_in(session)
            result = session.execute(
                update(RunRow)
                .where(*fence)
                .values(
                    status=str(Status.ERROR),
                    error=reason,
                    summary=f"**Error** — {reason}.",
                    finished_at=now,
                    lease_expires_at=None,
                )
                .returning(RunRow.id)
                .execution_options(synchronize_session=False)
            )
            if result.first() is None:
                return False
            runs_ended(session.connection(), [run_id])  # the review list's rows
            return True

    # -- the reaper --------------------------------------------------------

    def reap(self, now: dt.datetime, *, max_attempts: int) -> Reaped:
        """Requeue running runs whose lease ran out; give up on those out of attempts.

        A requeued run goes back to ``queued`` with ``enqueued_at`` cleared: send
        it and call ``mark_sent`` (``worker.service.reaper.reap``).
        """
        with self.store.session() as session:
            return reaper.reap(session, now, max_attempts=max_attempts)

    def to_resend(
        self, now: dt.datetime, *, unsent_grace_s: float, resend_after_s: float
    ) -> list[QueuedRun]:
        """Return queued runs unsent after ``unsent_grace_s``, or unclaimed ``resend_after_s``."""
        with self.store.session() as session:
            return reaper.to_resend(
                session, now, unsent_grace_s=unsent_grace_s, resend_after_s=resend_after_s
            )
