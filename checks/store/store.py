"""The report store: runs, their checks and evidence, in SQLite or PostgreSQL.

``Store(url)`` applies the Alembic migrations on open, so a new file or an
older database is brought up to date before anything is read. Every public
method opens and commits its own transaction.

A run's life: ``create_run`` (queued; returns None when that slot exists) →
``claim_run`` (running, attempt + 1, lease) → ``finish_run`` (fenced on the
attempt: a stale worker cannot overwrite a newer one's result).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.orm import Session, selectinload, sessionmaker

from checks.errors import StoreError
from checks.report import (
    CheckResult,
    Evidence,
    Finding,
    FindingSource,
    RunReport,
    Status,
    json_value,
)
from checks.store.run_tables import CheckRow, EvidenceRow, RunRow


def utcnow() -> dt.datetime:
    """Return the current time, zone-aware in UTC."""
    return dt.datetime.now(dt.UTC)


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def make_engine(url: str) -> Engine:
    """Create the engine for a store URL; a SQLite file's folder is created when missing.

    Raises:
        StoreError: the URL cannot be parsed.
    """
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise StoreError(f"store URL is not a database URL: {exc}") from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    try:
        return create_engine(parsed, pool_pre_ping=True)
    except (ArgumentError, NoSuchModuleError, ImportError) as exc:
        shown = parsed.render_as_string(hide_password=True)
        raise StoreError(f"store URL {shown} is not a database SQLAlchemy can use: {exc}") from None


def migrate(engine: Engine) -> None:
    """Apply every Alembic migration to ``engine`` (idempotent)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(files("checks.store") / "migrations"))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")  # one line of migrations: a branch fails loudly


class Store:
    """Read and write runs.

    Args:
        url: SQLAlchemy URL, e.g. ``sqlite:///.lookout/lookout.db`` or
            ``postgresql+psycopg://user@host/db``.
        migrate_on_open: apply migrations now (default True).

    Raises:
        StoreError: the database cannot be reached or migrated; the message
            hides any password in the URL.
    """

    def __init__(self, url: str, *, migrate_on_open: bool = True) -> None:
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        if migrate_on_open:
            try:
                migrate(self.engine)
            except SQLAlchemyError as exc:
                shown = make_url(url).render_as_string(hide_password=True)
                cause = getattr(exc, "orig", None) or exc  # DBAPI errors carry the driver's message
                raise StoreError(f"cannot open the store at {shown}: {cause}") from None

    @contextmanager
    def session(self) -> Iterator[Session]:
        """Yield a session that commits on success and rolls back on error."""
        with self._sessions() as session, session.begin():
            yield session

    def close(self) -> None:
        """Dispose of the engine's connections."""
        self.engine.dispose()

    # -- writing -----------------------------------------------------------

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
                return row.id
        except IntegrityError:
            return None

    def claim_run(self, run_id: int, *, lease_s: float) -> int | None:
        """Mark a queued run (or one whose lease expired) running; return the new attempt.

        Returns None when the run is finished, missing, or held by a live lease,
        so a duplicate or redelivered message does nothing.
        """
        now = utcnow()
        with self.session() as session:
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

    def finish_run(self, run_id: int, attempt: int, report: RunReport) -> bool:
        """Write a run's result if ``attempt`` is still the current one; return whether it was.

        Check results and evidence replace any earlier ones of the run.
        """
        with self.session() as session:
            row = session.get(RunRow, run_id, with_for_update=True)
            if row is None or row.attempt != attempt or row.status != Status.RUNNING:
                return False
            row.status = str(report.status)
            row.finding = str(report.finding) if report.finding else None
            row.finding_source = str(report.finding_source) if report.finding_source else None
            row.summary = report.summary
            row.error = report.error
            row.started_at = report.started_at or row.started_at
            row.finished_at = report.finished_at or utcnow()
            row.definition = report.definition or row.definition
            row.agent = report.agent
            row.second_opinion = report.second_opinion
            row.flags = flags_column(report.second_opinion)
            row.lease_expires_at = None
            row.checks = [
                CheckRow(
                    position=i,
                    name=c.name,
                    sql=c.sql,
                    expect=c.expect,
                    value=json_value(c.value),
                    passed=c.passed,
                    error=c.error,
                    evidence_id=c.evidence_id,
                )
                for i, c in enumerate(report.checks)
            ]
            row.evidence = [
                EvidenceRow(
                    position=i,
                    query_id=e.id,
                    origin=e.origin,
                    sql=e.sql,
                    columns=e.columns,
                    rows=json_value(e.rows),
                    row_count=e.row_count,
                    truncated=e.truncated,
                    fingerprint=e.fingerprint,
                )
                for i, e in enumerate(report.evidence)
            ]
            return True

    def save_report(self, report: RunReport) -> int:
        """Store a finished in-process run (create, claim, finish) and return its id.

        Raises:
            StoreError: the slot already has a run.
        """
        run_id = self.create_run(
            report.automation,
            report.scheduled_for,
            trigger=report.trigger,
            definition=report.definition,
        )
        if run_id is None:
            raise StoreError(
                f"{report.automation} already has a run for {report.scheduled_for.isoformat()}"
            )
        attempt = self.claim_run(run_id, lease_s=3600)
        assert attempt is not None  # just created, nobody else knows the id
        self.finish_run(run_id, attempt, report)
        report.run_id = run_id
        return run_id

    # -- reading -----------------------------------------------------------

    def get_run(self, run_id: int) -> RunReport | None:
        """Return one run with its checks and evidence, or None."""
        with self.session() as session:
            row = session.get(
                RunRow, run_id, options=[selectinload(RunRow.checks), selectinload(RunRow.evidence)]
            )
            return None if row is None else _to_report(row, full=True)

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
            return [_to_report(row, full=False) for row in session.scalars(query)]

    def last_completed(self, automation: str, *, before_run: int | None = None) -> RunReport | None:
        """Return the newest completed run of ``automation``, other than ``before_run``."""
        query = (
            select(RunRow)
            .where(RunRow.automation == automation, RunRow.status == str(Status.COMPLETED))
            .order_by(RunRow.scheduled_for.desc(), RunRow.id.desc())
            .limit(1)
            .options(selectinload(RunRow.checks), selectinload(RunRow.evidence))
        )
        if before_run is not None:
            query = query.where(RunRow.id != before_run)
        with self.session() as session:
            row = session.scalars(query).first()
            return None if row is None else _to_report(row, full=True)


def flags_column(second_opinion: dict[str, Any] | None) -> str:
    """Return the ``runs.flags`` text for a second opinion: ``,a,b,`` or ``""``."""
    flags = (second_opinion or {}).get("flags") or []
    return f",{','.join(flags)}," if flags else ""


def _to_report(row: RunRow, *, full: bool) -> RunReport:
    report = RunReport(
        run_id=row.id,
        automation=row.automation,
        scheduled_for=row.scheduled_for,
        trigger=row.trigger,
        status=Status(row.status),
        finding=Finding(row.finding) if row.finding else None,
        finding_source=FindingSource(row.finding_source) if row.finding_source else None,
        summary=row.summary or "",
        agent=row.agent,
        second_opinion=row.second_opinion,
        error=row.error,
        started_at=row.started_at,
        finished_at=row.finished_at,
        definition=row.definition or {},
        attempt=row.attempt,
    )
    if full:
        report.checks = [
            CheckResult(c.name, c.sql, c.expect, c.value, c.passed, c.error, c.evidence_id)
            for c in row.checks
        ]
        report.evidence = [
            Evidence(
                e.query_id,
                e.sql,
                e.columns,
                e.rows,
                e.row_count,
                e.truncated,
                e.fingerprint,
                e.origin,
            )
            for e in row.evidence
        ]
    return report
