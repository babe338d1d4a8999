"""The report store's tables (SQLAlchemy 2 ORM). Migrations in ``checks/migrations``.

Times are stored as naive UTC (``UTCDateTime``) so SQLite and PostgreSQL
behave alike; they come back zone-aware in UTC.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, cast

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    true,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship, validates

from checks.store.list_columns import definition_columns, urgency_column, usage_columns

LIST_INDEX_COLUMNS = ("automation", "scheduled_for", "id", "status", "finding", "finding_source")
"""The key of ``ix_runs_list``: each automation's runs by slot, with how each ended."""
LIST_INDEX_INCLUDES = (
    "owner",
    "tags",
    "flags",
    "urgency",
    "severity",
    "source",
    "definition_source",
    "finished_at",
    "agent_input_tokens",
    "agent_output_tokens",
    "agent_cost_usd",
    "decision_input_tokens",
    "decision_output_tokens",
    "decision_cost_usd",
)
"""Columns ``ix_runs_list`` also holds on PostgreSQL (``INCLUDE``): the list's and /metrics'."""


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A datetime stored as naive UTC and returned aware in UTC.

    Raises:
        ValueError: when given a naive datetime (its zone would be a guess).
    """

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        """Convert an aware datetime to naive UTC for the database."""
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; pass a zone-aware one")
        return value.astimezone(dt.UTC).replace(tzinfo=None)

    def process_result_value(
        self, value: dt.datetime | None, dialect: Dialect
    ) -> dt.datetime | None:
        """Mark a naive UTC value from the database as UTC."""
        return None if value is None else value.replace(tzinfo=dt.UTC)


class Base(DeclarativeBase):
    """Declarative base of the store's tables."""


def table_of(mapped: type[Base]) -> Table:
    """The Core table of a mapped class, for plain statements outside the ORM's unit of work."""
    return cast(Table, mapped.__table__)


def dialect_insert(table: Any, dialect: str) -> Any:
    """``INSERT`` into ``table`` with ``ON CONFLICT`` clauses: PostgreSQL's, else SQLite's.

    ``dialect`` is the connection's dialect name; the store runs on those two only.
    """
    return (postgresql if dialect == "postgresql" else sqlite).insert(table)


class RunRow(Base):
    """One run of one automation; unique on (automation, scheduled_for) so a slot runs once.

    ``flags`` holds the second opinion's flags as ``,flag,flag,`` so a
    ``LIKE '%,flag,%'`` filter works on every database.
    ``source`` and ``enqueued_at`` are kept by the service (``worker.service.run_queue``):
    the source whose queue and concurrency bound the run uses, and when its
    Celery message was last sent (None: not sent yet). A run with no ``source``
    was made in-process (``lookout run``): only its own process runs it, and
    the reaper ends it in error rather than queueing it. ``pinning`` is
    ``RunReport.pinning``: what the automation's pinned plan did in the run;
    ``scanned`` is ``RunReport.scanned``: what its statements were estimated to read.

    ``owner``, ``severity``, ``tags``, ``description``, ``definition_source``
    and ``urgency`` are what the review list filters and sorts by, and
    ``agent_*`` and ``decision_*`` the tokens and cost ``/metrics`` sums, copied
    from ``definition``, ``agent`` and ``second_opinion`` whenever those are set
    (``checks.store.list_columns``).
    """

    __tablename__ = "runs"
    __table_args__ = (
        UniqueConstraint("automation", "scheduled_for", name="uq_runs_slot"),
        # each automation's runs by slot, with what the review list picks them by and
        # shows, and what /metrics sums: read from the index alone
        # (``worker.review.board``, ``worker.review.stats``); included columns on PostgreSQL
        Index("ix_runs_list", *LIST_INDEX_COLUMNS, postgresql_include=list(LIST_INDEX_INCLUDES)),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    automation: Mapped[str] = mapped_column(String(64), index=True)
    scheduled_for: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    trigger: Mapped[str] = mapped_column(String(16), default="manual")
    status: Mapped[str] = mapped_column(String(16), index=True)
    finding: Mapped[str | None] = mapped_column(String(24))
    finding_source: Mapped[str | None] = mapped_column(String(16))
    summary: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    started_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    definition: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    agent: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    second_opinion: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    lease_expires_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    source: Mapped[str | None] = mapped_column(String(64))
    flags: Mapped[str] = mapped_column(String(200), default="", server_default="")
    enqueued_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    pinning: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    scanned: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    owner: Mapped[str | None] = mapped_column(Text)
    severity: Mapped[str | None] = mapped_column(String(16))
    tags: Mapped[str] = mapped_column(Text, default="", server_default="")
    description: Mapped[str | None] = mapped_column(Text)
    definition_source: Mapped[str | None] = mapped_column(Text)
    urgency: Mapped[str | None] = mapped_column(String(16))
    agent_input_tokens: Mapped[int | None] = mapped_column(Integer)
    agent_output_tokens: Mapped[int | None] = mapped_column(Integer)
    agent_cost_usd: Mapped[float | None] = mapped_column(Float)
    decision_input_tokens: Mapped[int | None] = mapped_column(Integer)
    decision_output_tokens: Mapped[int | None] = mapped_column(Integer)
    decision_cost_usd: Mapped[float | None] = mapped_column(Float)

    checks: Mapped[list[CheckRow]] = relationship(
        back_populates="run", cascade="all, delete-orphan", order_by="CheckRow.position"
    )
    evidence: Mapped[list[EvidenceRow]] = relationship(
        back_populates="run", cascade="all, delete-orphan", order_by="EvidenceRow.position"
    )
    series: Mapped[list[SeriesRow]] = relationship(
        cascade="all, delete-orphan", order_by="SeriesRow.id"
    )

    @validates("definition")
    def _keep_definition_columns(self, _key: str, value: dict[str, Any]) -> dict[str, Any]:
        for name, column in definition_columns(value).items():
            setattr(self, name, column)
        return value

    @validates("second_opinion")
    def _keep_opinion_columns(
        self, _key: str, value: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        self.urgency = urgency_column(value)
        for name, column in usage_columns("decision", value).items():
            setattr(self, name, column)
        return value

    @validates("agent")
    def _keep_agent_columns(self, _key: str, value: dict[str, Any] | None) -> dict[str, Any] | None:
        for name, column in usage_columns("agent", value).items():
            setattr(self, name, column)
        return value


class CheckRow(Base):
    """One declared check's result in one run; ``value`` is JSON-safe (see ``json_value``).

    ``outcome`` is a ``CheckOutcome`` (NULL in runs stored before it existed:
    derived from ``passed`` and ``error``); ``metrics`` is the check's numbers
    by name, kept per run so they can be followed over time; ``anomaly`` and
    ``buckets`` are ``checks.report.Anomaly`` and ``Buckets`` as JSON (NULL
    for checks without them); a segmented check's ``metrics`` also hold its
    segments (``checks.report.Segments``) under ``lookout__segments``.
    for checks without them); ``recorded_schema`` the columns a ``schema``
    check with ``changes`` saw (``checks.declared.schema_changes.recorded``),
    read back by the next run (``checks.store.recorded_schemas``).
    """

    __tablename__ = "check_results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(100))
    sql: Mapped[str] = mapped_column(Text)
    expect: Mapped[str] = mapped_column(String(100))
    value: Mapped[Any] = mapped_column(JSON, nullable=True)
    passed: Mapped[bool | None] = mapped_column(Boolean)
    error: Mapped[str | None] = mapped_column(Text)
    evidence_id: Mapped[str | None] = mapped_column(String(16))
    kind: Mapped[str] = mapped_column(String(32), default="sql", server_default="sql")
    outcome: Mapped[str | None] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(Text)
    metrics: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    warnings: Mapped[list[str] | None] = mapped_column(JSON)
    sample_id: Mapped[str | None] = mapped_column(String(16))
    anomaly: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    buckets: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # none_as_null: "no schema" is SQL NULL, not the JSON text null, so the read can pass it over
    recorded_schema: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))

    run: Mapped[RunRow] = relationship(back_populates="checks")


class SeriesRow(Base):
    """One number of one check in one run: the time series a check's history is read from.

    Every check writes a ``value`` row (its compared value: a number, the
    percent itself, seconds for a duration, 1 or 0 for a boolean, the row
    count for ``empty``; NULL when it has none), with ``low`` and ``high``,
    the band its expectation allowed in that run (NULL: unbounded on that
    side). Every numeric metric of the check (``rows_in_scope``, ``missing``…)
    is a row of its own, without a band. ``scheduled_for`` is the run's slot
    time and ``outcome`` the check's outcome in that run, copied here so a
    series is read with one index range (automation, check, metric, time).
    Values are doubles: exact for counts below 2^53.
    """

    __tablename__ = "check_series"
    __table_args__ = (
        UniqueConstraint("run_id", "check_name", "metric", name="uq_check_series_point"),
        Index("ix_check_series_lookup", "automation", "check_name", "metric", "scheduled_for"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    automation: Mapped[str] = mapped_column(String(64))
    check_name: Mapped[str] = mapped_column(String(100))
    metric: Mapped[str] = mapped_column(String(64))
    scheduled_for: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    low: Mapped[float | None] = mapped_column(Float, nullable=True)
    high: Mapped[float | None] = mapped_column(Float, nullable=True)
    outcome: Mapped[str] = mapped_column(String(16))


class EvidenceRow(Base):
    """One query that ran in one run, with a bounded sample and a fingerprint of its full result."""

    __tablename__ = "evidence"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    query_id: Mapped[str] = mapped_column(String(16))
    origin: Mapped[str] = mapped_column(String(16))
    sql: Mapped[str] = mapped_column(Text)
    columns: Mapped[list[str]] = mapped_column(JSON)
    rows: Mapped[list[list[Any]]] = mapped_column(JSON)
    row_count: Mapped[int] = mapped_column(Integer)
    truncated: Mapped[bool] = mapped_column(Boolean)
    fingerprint: Mapped[str] = mapped_column(String(64))
    row_count_exact: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    query_key: Mapped[str | None] = mapped_column(String(64), nullable=True)

    run: Mapped[RunRow] = relationship(back_populates="evidence")


class EvidenceRowSetRow(Base):
    """One evidence entry's row hashes (``checks.sources.row_set``), for the next run's row diff.

    ``hashes`` holds the sorted 8-byte hashes of up to ``limits.fingerprint_max_rows``
    rows (at most 800 kB at the default), ``sample`` those of the stored sample
    rows in their order. Only the two newest completed runs of each
    (automation, query) keep theirs, with any failed run's since
    (``Store.finish_run`` deletes older ones); the diff they gave is kept in the
    run's ``second_opinion``.
    """

    __tablename__ = "evidence_row_sets"
    __table_args__ = (Index("ix_evidence_row_sets_query", "automation", "query_key"),)

    evidence_id: Mapped[int] = mapped_column(
        ForeignKey("evidence.id", ondelete="CASCADE"), primary_key=True
    )
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    automation: Mapped[str] = mapped_column(String(64))
    query_key: Mapped[str] = mapped_column(String(64))
    hashed: Mapped[int] = mapped_column(Integer)
    capped: Mapped[bool] = mapped_column(Boolean)
    hashes: Mapped[bytes] = mapped_column(LargeBinary)
    sample: Mapped[bytes] = mapped_column(LargeBinary)


class TraceEventRow(Base):
    """One event of a run's agent trace: a model request or response, a tool call or result.

    ``seq`` counts from 1 within a run; ``payload`` is JSON with secrets redacted;
    ``attempt`` is the claim that wrote it (None for runs traced without one).
    """

    __tablename__ = "trace_events"
    __table_args__ = (UniqueConstraint("run_id", "seq", name="uq_trace_events_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    kind: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    attempt: Mapped[int | None] = mapped_column(Integer, nullable=True)


class ScheduleCursorRow(Base):
    """How far the dispatcher has decided one automation's schedule (``worker.service.dispatch``).

    Every slot at or before ``cursor_at`` has been decided (a run or a skipped
    record) or predates the schedule. ``schedule_key`` is
    ``worker.service.slots.CronSchedule.key``; when it changes the cursor restarts
    at the time the change was seen, so an edited schedule never catches up.
    """

    __tablename__ = "schedule_cursors"

    automation: Mapped[str] = mapped_column(String(64), primary_key=True)
    schedule_key: Mapped[str] = mapped_column(Text)
    cursor_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
