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
PostgreSQL server restarting (``retry_writes``).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import tenacity
from sqlalchemy import (
    Connection,
    Engine,
    bindparam,
    create_engine,
    delete,
    event,
    exists,
    insert,
    null,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    IntegrityError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.orm import Session, selectinload, sessionmaker
from sqlalchemy.sql.elements import BindParameter

from checks.errors import StoreError
from checks.opinion.row_diff import PreviousRows
from checks.report import (
    Anomaly,
    Buckets,
    CheckOutcome,
    CheckResult,
    Evidence,
    Finding,
    FindingSource,
    RunReport,
    Status,
    json_value,
)
from checks.settings.config import redact
from checks.store.list_columns import definition_columns, urgency_column, usage_columns
from checks.store.list_rows import ENDED, runs_ended
from checks.store.plan_tables import write_plan
from checks.store.row_sets import previous_rows, write_row_sets
from checks.store.run_tables import (
    CheckRow,
    EvidenceRow,
    EvidenceRowSetRow,
    RunRow,
    SeriesRow,
    table_of,
)
from checks.store.series import COMPLETED, FINISHED, SeriesPoint, read_series, series_rows

log = logging.getLogger("lookout.store")

STORE_RETRY_S = 60.0
"""How long a write is retried while the store is unavailable, in seconds (then it raises)."""

MIGRATION_LOCK = 0x4C4F4F4B  # "LOOK": the PostgreSQL advisory lock key migrations hold

P = ParamSpec("P")
R = TypeVar("R")


def transient(error: BaseException) -> bool:
    """Whether ``error`` says the store is briefly unavailable, so the write may be retried.

    SQLite's "database is locked" / "busy" and PostgreSQL's lost or refused
    connections (a restart, a failover) are ``OperationalError`` or an
    invalidated connection; a constraint or a bad statement is not.
    """
    if isinstance(error, OperationalError):
        return True
    return isinstance(error, DBAPIError) and bool(error.connection_invalidated)


def retry_writes(call: Callable[P, R]) -> Callable[P, R]:
    """Retry ``call`` with exponential backoff (0.1 s to 5 s) on ``transient`` errors.

    Gives up after ``STORE_RETRY_S`` seconds and raises the last error (tenacity).
    """

    def warn(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        log.warning("store unavailable (%s); retrying %s", first_line(error), call.__name__)

    retrying = tenacity.retry(
        retry=tenacity.retry_if_exception(transient),
        wait=tenacity.wait_exponential(multiplier=0.1, max=5),
        stop=tenacity.stop_after_delay(STORE_RETRY_S),
        before_sleep=warn,
        reraise=True,
    )
    return retrying(call)


def first_line(error: BaseException | None) -> str:
    """The first line of an error's message, from the driver's error when it has one."""
    cause = getattr(error, "orig", None) or error
    text = str(cause).strip()
    return text.splitlines()[0] if text else type(cause).__name__


def utcnow() -> dt.datetime:
    """Return the current time, zone-aware in UTC."""
    return dt.datetime.now(dt.UTC)


SQLITE_BUSY_TIMEOUT_MS = 10_000
"""How long one SQLite statement waits on another writer's lock before it fails (then retried)."""


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_MS)}")
    cursor.close()


def make_engine(url: str) -> Engine:
    """Create the engine for a store URL; a SQLite file's folder is created when missing.

    Raises:
        StoreError: the URL cannot be parsed.
    """
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise StoreError(f"store URL is not a database URL: {redact(str(exc), [url])}") from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    try:
        return create_engine(parsed, pool_pre_ping=True)
    except (ArgumentError, NoSuchModuleError, ImportError) as exc:
        shown = redact(parsed.render_as_string(hide_password=True), [])
        raise StoreError(
            f"store URL {shown} is not a database SQLAlchemy can use: {redact(str(exc), [])}"
        ) from None


def head_revision() -> str:
    """Return the newest migration's revision id, read from the file names (no Alembic).

    Migrations form one line, each file ``versions/NNNN_name.py`` with
    ``revision = "NNNN"`` (a test holds every file to it), so the head is the
    highest ``NNNN``.
    """
    folder = files("checks.store") / "migrations" / "versions"
    found = [
        m.group(1) for p in folder.iterdir() if (m := re.fullmatch(r"(\d{4})_\w+\.py", p.name))
    ]
    return max(found)


def at_head(engine: Engine) -> bool:
    """Whether the database's ``alembic_version`` is the newest revision (False if no table)."""
    try:
        with engine.connect() as conn:
            versions = [
                row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))
            ]
    except SQLAlchemyError:
        return False
    return versions == [head_revision()]


def migrate(engine: Engine) -> None:
    """Apply every Alembic migration to ``engine`` (idempotent), one process at a time.

    On PostgreSQL the migrating transaction first takes an advisory lock
    (``pg_advisory_xact_lock``, released at commit), so two processes opening
    a fresh store at once both succeed: the second waits, then finds it up to
    date. SQLite takes its write lock at the first statement (``BEGIN
    IMMEDIATE``), to the same effect.
    """
    from alembic import command  # Alembic is loaded only when there is something to apply
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(files("checks.store") / "migrations"))
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")  # one line of migrations: a branch fails loudly


_RESULTS = (CheckRow, EvidenceRow, SeriesRow)
"""The tables holding a run's results, each row with its ``run_id``."""


def _finish_statement() -> Any:
    runs = table_of(RunRow)
    run_id: BindParameter[int] = bindparam("b_run_id")
    earlier = or_(*(exists().where(table_of(t).c.run_id == run_id) for t in _RESULTS))
    return (
        update(runs)
        .where(
            runs.c.id == run_id,
            runs.c.attempt == bindparam("b_attempt"),
            runs.c.status == str(Status.RUNNING),
        )
        .returning(runs.c.automation, runs.c.scheduled_for, earlier.label("earlier"))
    )


_FINISH = _finish_statement()
"""``finish_run``'s fenced update, built once: its SET clause is the parameters' columns."""


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
        now = utcnow()
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
        try:
            with self.session() as session:
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

    @retry_writes
    def fail_run(self, run_id: int, attempt: int, reason: str) -> bool:
        """End a running run in error with ``reason``, if ``attempt`` is still current.

        Returns whether it was written. Used when the run cannot produce a
        report at all (an internal error after the claim).
        """
        now = utcnow()
        with self.session() as session:
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
    def finish_run(self, run_id: int, attempt: int, report: RunReport) -> bool:
        """Write a run's result if ``attempt`` is still the current one; return whether it was.

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
            found = connection.execute(_FINISH, params).first()
            if found is None:
                return False
            if found.earlier:  # results written while it still ran: replaced
                for table in (EvidenceRowSetRow, *_RESULTS):
                    connection.execute(
                        delete(table_of(table)).where(table_of(table).c.run_id == run_id)
                    )
            _write_results(connection, run_id, found.automation, found.scheduled_for, report)
            problem = report.status == Status.ERROR or report.finding == Finding.NEEDS_ATTENTION
            runs_ended(connection, [run_id], incidents=problem)  # the review list's rows
            if report.new_plan is not None:
                write_plan(session, report.new_plan, run_id)
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


def last_completed(
    session: Session, automation: str, *, before_run: int | None = None
) -> RunReport | None:
    """``Store.last_completed`` in an open session: the newest completed run, with its results."""
    query = (
        select(RunRow)
        .where(RunRow.automation == automation, RunRow.status == str(Status.COMPLETED))
        .order_by(RunRow.scheduled_for.desc(), RunRow.id.desc())
        .limit(1)
        .options(selectinload(RunRow.checks), selectinload(RunRow.evidence))
    )
    if before_run is not None:
        query = query.where(RunRow.id != before_run)
    row = session.scalars(query).first()
    return None if row is None else _to_report(row, full=True)


def flags_column(second_opinion: dict[str, Any] | None) -> str:
    """Return the ``runs.flags`` text for a second opinion: ``,a,b,`` or ``""``."""
    flags = (second_opinion or {}).get("flags") or []
    return f",{','.join(flags)}," if flags else ""


def _json(value: Any) -> Any:
    """A JSON column's value in a plain update: SQL NULL for None, as the ORM leaves it.

    (The ORM writes nothing for a None that was already None, and these
    columns are NULL until a run finishes; a plain update would write JSON ``null``.)
    """
    return null() if value is None else value


def finished_columns(report: RunReport) -> dict[str, Any]:
    """The ``runs`` columns ``finish_run`` sets from a report, the review list's columns with them.

    What ``RunRow``'s validators keep in step on an ORM write (``checks.store.list_columns``)
    is set here too; ``definition`` and ``started_at`` are kept when the report has none.
    """
    values: dict[str, Any] = {
        "status": str(report.status),
        "finding": str(report.finding) if report.finding else None,
        "finding_source": str(report.finding_source) if report.finding_source else None,
        "summary": report.summary,
        "error": report.error,
        "finished_at": report.finished_at or utcnow(),
        "agent": _json(report.agent),
        "second_opinion": _json(report.second_opinion),
        "pinning": _json(report.pinning),
        "flags": flags_column(report.second_opinion),
        "lease_expires_at": None,
        "urgency": urgency_column(report.second_opinion),
        **usage_columns("decision", report.second_opinion),
        **usage_columns("agent", report.agent),
    }
    if report.started_at:
        values["started_at"] = report.started_at
    if report.definition:
        values["definition"] = report.definition
        values.update(definition_columns(report.definition))
    return values


def _write_results(
    connection: Connection,
    run_id: int,
    automation: str,
    scheduled_for: dt.datetime,
    report: RunReport,
) -> None:
    """Insert a run's check results, evidence (ids returned for its row sets) and series points."""
    if report.checks:
        connection.execute(
            insert(table_of(CheckRow)),
            [
                {
                    "run_id": run_id,
                    "position": i,
                    "name": c.name,
                    "sql": c.sql,
                    "expect": c.expect,
                    "value": json_value(c.value),
                    "passed": c.passed,
                    "error": c.error,
                    "evidence_id": c.evidence_id,
                    "kind": c.kind,
                    "outcome": str(c.outcome),
                    "reason": c.reason,
                    "metrics": json_value(c.metrics),
                    "warnings": list(c.warnings),
                    "sample_id": c.sample_id,
                    "anomaly": json_value(c.anomaly.to_dict()) if c.anomaly else None,
                    "buckets": c.buckets.to_dict() if c.buckets else None,
                }
                for i, c in enumerate(report.checks)
            ],
        )
    if report.evidence:
        table = table_of(EvidenceRow)
        ids = connection.execute(
            insert(table).returning(table.c.id, sort_by_parameter_order=True),
            [
                {
                    "run_id": run_id,
                    "position": i,
                    "query_id": e.id,
                    "origin": e.origin,
                    "sql": e.sql,
                    "columns": e.columns,
                    "rows": json_value(e.rows),
                    "row_count": e.row_count,
                    "truncated": e.truncated,
                    "fingerprint": e.fingerprint,
                    "row_count_exact": e.row_count_exact,
                    "query_key": e.query_key,
                }
                for i, e in enumerate(report.evidence)
            ],
        ).scalars()
        write_row_sets(connection, run_id, automation, list(ids), report.evidence)
    series = series_rows(report, automation, scheduled_for)
    if series:
        connection.execute(insert(table_of(SeriesRow)), [{"run_id": run_id, **p} for p in series])


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
        pinning=row.pinning,
    )
    if full:
        report.checks = [check_result(c) for c in row.checks]
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
                e.row_count_exact,
                e.query_key,
            )
            for e in row.evidence
        ]
    return report


def check_result(row: CheckRow) -> CheckResult:
    """The ``CheckResult`` a stored check row holds (what ``load_report`` gives back)."""
    return CheckResult(
        row.name,
        row.sql,
        row.expect,
        row.value,
        row.passed,
        row.error,
        row.evidence_id,
        kind=row.kind or "sql",
        outcome=CheckOutcome(row.outcome) if row.outcome else None,
        reason=row.reason,
        metrics=row.metrics or {},
        warnings=row.warnings or [],
        sample_id=row.sample_id,
        anomaly=Anomaly.from_dict(row.anomaly) if row.anomaly else None,
        buckets=Buckets.from_dict(row.buckets) if row.buckets else None,
    )
