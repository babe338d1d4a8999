"""The report store: runs, their checks and evidence, in SQLite or PostgreSQL.

``Store(url)`` applies the Alembic migrations on open, so a new file or an
older database is brought up to date before anything is read; a database
already at the newest revision is recognised with one query, without loading
Alembic. Every public method opens and commits its own transaction.

A run's life: ``create_run`` (queued; returns None when that slot exists) →
``claim_run`` (running, attempt + 1, lease) → ``finish_run`` (fenced on the
attempt: a stale worker cannot overwrite a newer one's result), or
``fail_run`` (error with the reason, fenced the same way). A run started in
this process (``lookout run``) is created already claimed, in one
transaction: ``start_run``.

Writes that a run's outcome depends on (``create_run``, ``start_run``, ``claim_run``,
``finish_run``, ``fail_run``, trace events) are retried with backoff while the
store is only briefly unavailable: a SQLite file locked by another writer, a
PostgreSQL server restarting (``retry_writes``). Every write that ends a run
keeps the review list's rows in the same transaction (``checks.store.list_rows``).
The engine, migrations and retries live in ``checks.store.engine``; a report
as rows and back, and ``finish_run``'s fenced update, in ``checks.store.report_rows``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, selectinload, sessionmaker

from checks.clock import utcnow
from checks.errors import StoreError
from checks.opinion.row_diff import PreviousRows
from checks.report import Finding, RunReport, Status
from checks.settings.config import redact
from checks.store.engine import at_head, head_revision, make_engine, migrate, retry_writes
from checks.store.list_rows import ENDED, runs_ended
from checks.store.plan_tables import write_plan
from checks.store.recorded_schemas import last_recorded_schema
from checks.store.report_rows import (
    FINISH,
    RESULT_TABLES,
    check_result,
    finished_columns,
    last_completed,
    to_report,
    write_results,
)
from checks.store.row_sets import previous_rows
from checks.store.run_tables import EvidenceRowSetRow, RunRow, table_of
from checks.store.series import COMPLETED, FINISHED, SeriesPoint, read_series
from checks.store.store_clock import store_now

__all__ = [  # what other modules import from here (their homes: engine, report_rows)
    "Store",
    "at_head",
    "check_result",
    "head_revision",
    "last_completed",
    "retry_writes",
]


class Store:
    """Read and write runs.

    Args:
        url: SQLAlchemy URL, e.g. ``sqlite:///.lookout/lookout.db`` or
            ``postgresql+psycopg://user@host/db``.
        migrate_on_open: apply migrations now (default True).
        pool_size: PostgreSQL connections kept for reuse, one per thread that
            uses the store at once (``make_engine``; SQLAlchemy's 5 when None).

    Raises:
        StoreError: the database cannot be reached or migrated; the message
            hides any password in the URL.
    """

    def __init__(
        self, url: str, *, migrate_on_open: bool = True, pool_size: int | None = None
    ) -> None:
        self.engine = make_engine(url, pool_size=pool_size)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        if migrate_on_open:
            try:
                if not at_head(self.engine):
                    migrate(self.engine)
            except SQLAlchemyError as exc:
                shown = redact(make_url(url).render_as_string(hide_password=True), [])
                cause = getattr(exc, "orig", None) or exc  # DBAPI errors carry the driver's message
                raise StoreError(
                    f"cannot open the store at {shown}: {redact(str(cause), [])}"
                ) from None

    @contextmanager
    def session(self) -> Iterator[Session]:
        """Yield a session that commits on success and rolls back on error."""
        with self._sessions() as session, session.begin():
            yield session

    def close(self) -> None:
        """Dispose of the engine's connections."""
        self.engine.dispose()

    # -- writing -----------------------------------------------------------

    @retry_writes
    def create_run(
        self,
        automation: str,
        scheduled_for: dt.datetime,
        *,
        trigger: str = "manual",
        definition: dict[str, Any] | None = None,
        status: Status = Status.QUEUED,
        error: str | None = None,
    ) -> int | None:
        """Insert a run for one slot; return its id, or None when the slot already has a run.

        The unique constraint on (automation, scheduled_for), not a lock, keeps a
        slot from running twice.
        """
        now = utcnow()
        row = RunRow(
            automation=automation,
            scheduled_for=scheduled_for,
            trigger=trigger,
            status=str(status),
            created_at=now,
            definition=definition or {},
            error=error,
            summary="",
            attempt=0,
            finished_at=now if status in (Status.SKIPPED, Status.ERROR) else None,
        )
        try:
            with self.session() as session:
                session.add(row)
                session.flush()
                if row.status in ENDED:  # skipped or in error from the start: it may be listed
                    runs_ended(session.connection(), [row.id])
                return row.id
        except IntegrityError:
            return None

    @retry_writes
    def start_run(
        self,
        automation: str,
        scheduled_for: dt.datetime,
        *,
        lease_s: float,
        trigger: str = "manual",
        definition: dict[str, Any] | None = None,
    ) -> tuple[int, int] | None:
        """Insert a run already claimed (running, attempt 1, a lease of ``lease_s`` seconds).

        ``create_run`` then ``claim_run`` in one transaction, for a run this
        process runs itself. Returns ``(run_id, attempt)``, or None when the
        slot already has a run (the same unique constraint as ``create_run``).
        """
        try:
            with self.session() as session:
                now = store_now(session.connection())  # the clock leases are judged by
                row = RunRow(
                    automation=automation,
                    scheduled_for=scheduled_for,
                    trigger=trigger,
                    status=str(Status.RUNNING),
                    created_at=now,
                    started_at=now,
                    lease_expires_at=now + dt.timedelta(seconds=lease_s),
                    definition=definition or {},
                    summary="",
                    attempt=1,
                )
                session.add(row)
                session.flush()
                return row.id, 1
        except IntegrityError:
            return None

    @retry_writes
    def claim_run(self, run_id: int, *, lease_s: float) -> int | None:
        """Mark a queued run (or one whose lease expired) running; return the new attempt.

        Returns None when the run is finished, missing, or held by a live lease,
        so a duplicate or redelivered message does nothing.
        """
        with self.session() as session:
            now = store_now(session.connection())  # the clock leases are judged by
            row = session.get(RunRow, run_id, with_for_update=True)
            if row is None or row.status not in (Status.QUEUED, Status.RUNNING):
                return None
            if row.status == Status.RUNNING and row.lease_expires_at and row.lease_expires_at > now:
                return None
            attempt = row.attempt + 1
            result = session.execute(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.attempt == row.attempt)
                .values(
                    status=str(Status.RUNNING),
                    attempt=attempt,
                    started_at=now,
                    lease_expires_at=now + dt.timedelta(seconds=lease_s),
                )
            )
            return attempt if getattr(result, "rowcount", 0) == 1 else None  # CursorResult

    @retry_writes
    def fail_run(self, run_id: int, attempt: int, reason: str) -> bool:
        """End a running run in error with ``reason``, if ``attempt`` is still current.

        Returns whether it was written. Used when the run cannot produce a
        report at all (an internal error after the claim).
        """
        with self.session() as session:
            now = store_now(session.connection())
            done = session.execute(
                update(RunRow)
                .where(
                    RunRow.id == run_id,
                    RunRow.attempt == attempt,
                    RunRow.status == str(Status.RUNNING),
                )
                .values(
                    status=str(Status.ERROR),
                    error=reason,
                    summary=f"**Error** — {reason}",
                    finished_at=now,
                    lease_expires_at=None,
                )
                .execution_options(synchronize_session=False)
            )
            if getattr(done, "rowcount", 0) != 1:
                return False
            runs_ended(session.connection(), [run_id])
            return True

    @retry_writes
    def finish_run(
        self,
        run_id: int,
        attempt: int,
        report: RunReport,
        *,
        also: Callable[[Connection], None] | None = None,
    ) -> bool:
        """Write a run's result if ``attempt`` is still the current one; return whether it was.

        ``also`` writes more in the same transaction once the fence held (the
        run's trace events noted last: ``TraceWriter.write_noted``).

        Check results, evidence, its row sets (``checks.store.row_sets``) and
        the checks' series points (``checks.store.series``) replace any earlier
        ones of the run. When the report makes a new pinned plan
        (``report.new_plan``), it becomes the automation's plan in the same
        transaction (``checks.store.plan_tables``).

        Plain statements, not the ORM's unit of work: one fenced ``UPDATE …
        RETURNING`` of the run (which also says whether it holds earlier
        results), then one insert per table, then the review list's rows
        (``checks.store.list_rows``: one statement, two for a problem).
        """
        params = {**finished_columns(report), "b_run_id": run_id, "b_attempt": attempt}
        with self.session() as session:
            connection = session.connection()
            found = connection.execute(FINISH, params).first()
            if found is None:
                return False
            if found.earlier:  # results written while it still ran: replaced
                for table in (EvidenceRowSetRow, *RESULT_TABLES):
                    connection.execute(
                        delete(table_of(table)).where(table_of(table).c.run_id == run_id)
                    )
            if also is not None:
                also(connection)
            write_results(connection, run_id, found.automation, found.scheduled_for, report)
            problem = report.status == Status.ERROR or report.finding == Finding.NEEDS_ATTENTION
            runs_ended(connection, [run_id], incidents=problem)  # the review list's rows
            if report.new_plan is not None:
                write_plan(session, report.new_plan, run_id)
            return True

    # -- reading -----------------------------------------------------------

    def get_run(self, run_id: int) -> RunReport | None:
        """Return one run with its checks and evidence, or None."""
        with self.session() as session:
            row = session.get(
                RunRow, run_id, options=[selectinload(RunRow.checks), selectinload(RunRow.evidence)]
            )
            return None if row is None else to_report(row, full=True)

    def list_runs(
        self,
        *,
        automation: str | None = None,
        finding: str | None = None,
        status: str | None = None,
        flag: str | None = None,
        limit: int = 50,
    ) -> list[RunReport]:
        """Return recent runs, newest first, without checks and evidence.

        ``flag`` keeps runs whose second opinion set that flag
        (``double_check_disagrees`` or ``changed_since_last_run``).
        """
        query = select(RunRow).order_by(RunRow.scheduled_for.desc(), RunRow.id.desc()).limit(limit)
        if automation:
            query = query.where(RunRow.automation == automation)
        if finding:
            query = query.where(RunRow.finding == finding)
        if status:
            query = query.where(RunRow.status == status)
        if flag:
            query = query.where(RunRow.flags.like(f"%,{flag},%"))
        with self.session() as session:
            return [to_report(row, full=False) for row in session.scalars(query)]

    def last_completed(self, automation: str, *, before_run: int | None = None) -> RunReport | None:
        """Return the newest completed run of ``automation``, other than ``before_run``."""
        with self.session() as session:
            return last_completed(session, automation, before_run=before_run)

    def previous_rows(
        self, automation: str, keys: Collection[str], *, before_run: int | None = None
    ) -> dict[str, PreviousRows]:
        """Return each query's row record in its newest completed run, by query key.

        See ``checks.store.row_sets.previous_rows``; ``before_run`` is never chosen.
        """
        with self.session() as session:
            return previous_rows(session, automation, keys, before_run=before_run)

    def recorded_schema(
        self, automation: str, check: str, *, before: dt.datetime
    ) -> dict[str, Any] | None:
        """The schema ``check`` recorded in its newest finished run before ``before``, or None.

        See ``checks.store.recorded_schemas``: what a ``schema`` check's ``changes`` compare with.
        """
        with self.session() as session:
            return last_recorded_schema(session, automation, check, before=before)

    def series(
        self,
        automation: str,
        check: str,
        metric: str = "value",
        *,
        before: dt.datetime | None = None,
        exclude_run: int | None = None,
        limit: int = 30,
        completed_only: bool = True,
    ) -> list[SeriesPoint]:
        """One check's series, oldest first (``checks.store.series.read_series``).

        Args:
            automation: the automation's name.
            check: the check's name.
            metric: ``value`` (the compared value) or one of the check's metrics.
            before: only runs whose slot is strictly earlier.
            exclude_run: a run never read (the one being judged).
            limit: at most this many points, the newest.
            completed_only: only completed runs (a baseline); else runs in error too.
        """
        with self.session() as session:
            return read_series(
                session,
                automation,
                check,
                metric,
                before=before,
                exclude_run=exclude_run,
                limit=limit,
                statuses=COMPLETED if completed_only else FINISHED,
            )
