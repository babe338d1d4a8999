"""The service's side of the store: due slots, schedule cursors, claims, leases, the reaper.

``RunQueue`` wraps a ``checks.store.store.Store`` (same engine, same tables) with
the statements the Celery service needs; ``Store`` keeps the in-process API.
Every method opens and commits its own transaction. Rules from the design
notes §5:

- A slot is a ``runs`` row, unique on (automation, scheduled_for); rows are
  inserted with ``INSERT … ON CONFLICT DO NOTHING`` and only the rows actually
  inserted come back to be queued: the database, not a lock, stops duplicates.
- A worker claims a run with a lease and an attempt number (``claim``), renews
  the lease while it runs (``renew``); every write of a result is fenced on
  the attempt. ``reap`` requeues runs whose lease ran out, and gives up after
  ``max_attempts`` with status ``error`` and the reason.
- Per-source concurrency and ``overlap: buffer_one`` are enforced at claim
  time, in the same statement (plus a transaction-scoped advisory lock on
  PostgreSQL, released even when the worker is killed).
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Literal

from sqlalchemy import (
    Select,
    String,
    Text,
    Update,
    and_,
    bindparam,
    case,
    exists,
    func,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from checks.report import FRESH_TRIGGER, Status
from checks.store.list_columns import definition_columns
from checks.store.list_rows import runs_ended
from checks.store.run_tables import RunRow, ScheduleCursorRow, UTCDateTime, table_of
from checks.store.store import Store, retry_writes, utcnow
from worker.service.queue_records import (
    ActiveRun,
    Cursor,
    NewRun,
    QueuedRun,
    Reaped,
    RunInfo,
    queued_run,
    timeout_s_of,
)

Claim = int | Literal["busy"] | None
"""What ``RunQueue.claim`` gives: the new attempt, ``"busy"`` (may not start yet), or None."""

Admission = tuple[int | None, bool]
"""A claim's bounds: the source's concurrency limit (None: unbounded), and exclusive or not."""

_ACTIVE = (str(Status.QUEUED), str(Status.RUNNING))


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


def _run_info(session: Session, run_id: int) -> RunInfo | None:
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
    """``claim``'s statements (admit, still claimable, mark busy), built once per kind.

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


class RunQueue:
    """The service's statements over a store's tables.

    Args:
        store: the open store (migrations applied); its engine is shared.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._postgres = store.engine.dialect.name == "postgresql"

    def _insert(self, table: Any) -> Any:
        dialect = postgresql if self._postgres else sqlite
        return dialect.insert(table)

    # -- dispatch ----------------------------------------------------------

    def cursors(self) -> dict[str, Cursor]:
        """Return every automation's schedule cursor, by automation name.

        Columns, not ORM objects: a tick reads all of them (10,000 rows cost
        ~1 s as objects, a tenth of that as rows).
        """
        table = ScheduleCursorRow
        query = select(table.automation, table.schedule_key, table.cursor_at)
        with self.store.session() as session:
            return {
                r.automation: Cursor(r.schedule_key, r.cursor_at) for r in session.execute(query)
            }

    def active_runs(self, automations: Collection[str]) -> dict[str, list[ActiveRun]]:
        """Return the runs still queued or running of these automations, oldest first."""
        if not automations:
            return {}
        query = (
            select(RunRow.id, RunRow.automation, RunRow.status, RunRow.scheduled_for)
            .where(RunRow.status.in_(_ACTIVE), RunRow.automation.in_(list(automations)))
            .order_by(RunRow.scheduled_for, RunRow.id)
        )
        found: dict[str, list[ActiveRun]] = {}
        with self.store.session() as session:
            for row in session.execute(query):
                found.setdefault(row.automation, []).append(
                    ActiveRun(row.id, row.status, row.scheduled_for)
                )
        return found

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
        rows = [
            {
                "automation": r.automation,
                "scheduled_for": r.scheduled_for,
                "trigger": r.trigger,
                "status": str(Status.SKIPPED if r.reason else Status.QUEUED),
                "summary": f"**Skipped** — {r.reason}." if r.reason else "",
                "error": r.reason,
                "created_at": now,
                "finished_at": now if r.reason else None,
                "definition": r.definition,
                "attempt": 0,
                "source": r.source,
                **definition_columns(r.definition),  # what the review list reads, as columns
            }
            for r in runs
        ]
        queued: list[QueuedRun] = []
        with self.store.session() as session:
            if rows:
                stmt = (  # the table, not the ORM class: a Core executemany, no ORM bulk path
                    self._insert(RunRow.__table__)
                    .on_conflict_do_nothing(index_elements=["automation", "scheduled_for"])
                    .returning(RunRow.id, RunRow.automation, RunRow.status, RunRow.source)
                )
                timeouts = {r.automation: timeout_s_of(r.definition) for r in runs}
                skipped: list[int] = []
                for row in session.execute(stmt, rows):
                    if row.status == Status.QUEUED:
                        queued.append(
                            QueuedRun(row.id, row.automation, row.source, timeouts[row.automation])
                        )
                    else:
                        skipped.append(row.id)
                runs_ended(session.connection(), skipped, incidents=False)  # the review list's
            self._move_cursors(session, cursors, now)
        return sorted(queued, key=lambda q: q.id)

    def _move_cursors(
        self, session: Session, cursors: Mapping[str, Cursor], now: dt.datetime
    ) -> None:
        if not cursors:
            return
        table = ScheduleCursorRow.__table__
        ordered = sorted(cursors.items())  # rows locked in one order: two ticks never deadlock
        if self._postgres:
            # One statement over three arrays (unnest), not one per cursor: a first tick over
            # 10,000 automations creates 10,000 cursors.
            rows = (
                func.unnest(
                    bindparam("automations", type_=postgresql.ARRAY(String)),
                    bindparam("keys", type_=postgresql.ARRAY(Text)),
                    bindparam("cursors_at", type_=postgresql.ARRAY(UTCDateTime())),
                )
                .table_valued("automation", "schedule_key", "cursor_at")
                .render_derived()
            )
            source = select(
                rows.c.automation,
                rows.c.schedule_key,
                rows.c.cursor_at,
                bindparam("now", type_=table.c.updated_at.type),
            )
            columns = ["automation", "schedule_key", "cursor_at", "updated_at"]
            insert = self._insert(table).from_select(columns, source.select_from(rows))
            parameters: Any = {
                "automations": [name for name, _ in ordered],
                "keys": [c.key for _, c in ordered],
                "cursors_at": [c.at for _, c in ordered],
                "now": now,
            }
        else:
            insert = self._insert(table)
            parameters = [
                {"automation": name, "schedule_key": c.key, "cursor_at": c.at, "updated_at": now}
                for name, c in ordered
            ]
        same_key = table.c.schedule_key == insert.excluded.schedule_key
        stmt = insert.on_conflict_do_update(
            index_elements=["automation"],
            set_={
                "schedule_key": insert.excluded.schedule_key,
                "cursor_at": case(
                    (
                        and_(same_key, table.c.cursor_at > insert.excluded.cursor_at),
                        table.c.cursor_at,
                    ),
                    else_=insert.excluded.cursor_at,
                ),
                "updated_at": insert.excluded.updated_at,
            },
        )
        session.execute(stmt, parameters)

    def mark_sent(self, run_ids: Collection[int], *, at: dt.datetime | None = None) -> None:
        """Record that the messages of these runs were sent (``enqueued_at``)."""
        if not run_ids:
            return
        with self.store.session() as session:
            session.execute(
                update(RunRow)
                .where(RunRow.id.in_(list(run_ids)))
                .values(enqueued_at=at or utcnow())
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
            return _run_info(session, run_id)

    def take(
        self,
        run_id: int,
        admission: Callable[[RunInfo], Admission],
        *,
        lease_s: float,
        max_attempts: int,
    ) -> tuple[RunInfo | None, Claim]:
        """Read a run and claim it, in one transaction: ``run_info`` then ``claim``.

        ``admission`` is called with the run (queued or running) to give the
        ``claim``'s bounds: the source's concurrency limit (None: unbounded)
        and whether the run is exclusive. Returns the run (None when it does
        not exist) and the claim (None without one: the run is missing or
        ended, or ``claim`` said None).
        """
        with self.store.session() as session:
            run = _run_info(session, run_id)
            if run is None or run.status not in _ACTIVE:
                return run, None
            source_limit, exclusive = admission(run)
            claim = self._claim(
                session,
                run,
                lease_s=lease_s,
                max_attempts=max_attempts,
                source_limit=source_limit,
                exclusive=exclusive,
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
        """Mark a run running under a new attempt and a lease of ``lease_s`` seconds.

        Claimable: queued, or running with its lease run out, and fewer than
        ``max_attempts`` attempts so far. Returns ``"busy"`` when the run is
        claimable but its source already runs ``source_limit`` runs, or
        (``exclusive``) another run of the automation holds a live lease;
        None when the run is finished, missing, held by a live lease or out of
        attempts, so a duplicate or redelivered message does nothing.
        """
        with self.store.session() as session:
            return self._claim(
                session,
                run,
                lease_s=lease_s,
                max_attempts=max_attempts,
                source_limit=source_limit,
                exclusive=exclusive,
            )

    def _claim(
        self,
        session: Session,
        run: RunInfo,
        *,
        lease_s: float,
        max_attempts: int,
        source_limit: int | None,
        exclusive: bool,
    ) -> Claim:
        now = utcnow()
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
        for key in locks if self._postgres else ():  # admission: source first, then automation
            connection.execute(_ADVISORY_LOCK, {"k": key})
        attempt = connection.execute(admit, params).scalar()
        if attempt is not None:
            return int(attempt)
        if connection.execute(waiting, params).first() is None:
            return None
        connection.execute(busy, params)
        return "busy"

    def renew(self, run_id: int, attempt: int, *, lease_s: float) -> bool:
        """Extend the lease of ``attempt``; False when the run is no longer that attempt's."""
        now = utcnow()
        with self.store.session() as session:
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
        now = utcnow()
        fence = [RunRow.id == run_id, RunRow.status == str(Status.RUNNING)]
        if attempt is not None:
            fence.append(RunRow.attempt == attempt)
        with self.store.session() as session:
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

        A run made in-process (``lookout run``, no ``source``) is never queued:
        its lease running out means its process is gone, so it ends in error.

        A requeued run goes back to ``queued`` (attempt kept; the next claim
        counts the next attempt) with ``enqueued_at`` cleared: send it and
        call ``mark_sent``. Each change is fenced on the attempt seen, so a
        worker claiming at the same moment wins or loses cleanly.
        """
        reaped = Reaped()
        query = select(
            RunRow.id, RunRow.automation, RunRow.attempt, RunRow.source, RunRow.definition
        ).where(RunRow.status == str(Status.RUNNING), RunRow.lease_expires_at < now)
        with self.store.session() as session:
            for row in session.execute(query).all():
                fence = update(RunRow).where(
                    RunRow.id == row.id,
                    RunRow.attempt == row.attempt,
                    RunRow.status == str(Status.RUNNING),
                    RunRow.lease_expires_at < now,
                )
                in_process = row.source is None  # lookout run: no worker may take it over
                if in_process or row.attempt >= max_attempts:
                    reason = (
                        "the process running it in-process (lookout run) stopped or lost"
                        " the store before the run ended; such runs are never queued"
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
                    values = {"status": str(Status.QUEUED), "lease_expires_at": None}
                    values["enqueued_at"] = None
                done = session.execute(
                    fence.values(**values)
                    .returning(RunRow.id)
                    .execution_options(synchronize_session=False)
                )
                if done.first() is None:
                    continue
                if in_process or row.attempt >= max_attempts:
                    reaped.gave_up.append(row.id)
                else:
                    reaped.requeued.append(queued_run(row))
            runs_ended(session.connection(), reaped.gave_up)  # the review list's rows
        return reaped

    def to_resend(
        self, now: dt.datetime, *, unsent_grace_s: float, resend_after_s: float
    ) -> list[QueuedRun]:
        """Return queued runs unsent after ``unsent_grace_s``, or unclaimed ``resend_after_s``."""
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
        with self.store.session() as session:
            return [queued_run(row) for row in session.execute(query)]
