"""What a dispatch reads and writes: cursors, active runs, slots inserted once, cursors moved.

A slot is a ``runs`` row, unique on (automation, scheduled_for); rows are
inserted with ``INSERT … ON CONFLICT DO NOTHING`` and only the rows actually
inserted come back to be queued: the database, not a lock, stops duplicates.
Each function runs in the session it is given (``worker.service.run_queue``
opens and commits them).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sqlalchemy import String, Text, and_, bindparam, case, select
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session
from sqlalchemy.sql.functions import Function

from checks.report import Status
from checks.store.list_columns import definition_columns
from checks.store.list_rows import runs_ended
from checks.store.run_tables import RunRow, ScheduleCursorRow, UTCDateTime, dialect_insert
from worker.service.claims import ACTIVE
from worker.service.queue_records import ActiveRun, Cursor, NewRun, QueuedRun, timeout_s_of


def _insert(table: Any, postgres: bool) -> Any:
    return dialect_insert(table, "postgresql" if postgres else "sqlite")


def read_cursors(session: Session) -> dict[str, Cursor]:
    """Every automation's schedule cursor, by automation name.

    Columns, not ORM objects: a tick reads all of them (10,000 rows cost
    ~1 s as objects, a tenth of that as rows).
    """
    table = ScheduleCursorRow
    query = select(table.automation, table.schedule_key, table.cursor_at)
    return {r.automation: Cursor(r.schedule_key, r.cursor_at) for r in session.execute(query)}


def read_active_runs(session: Session, automations: Collection[str]) -> dict[str, list[ActiveRun]]:
    """The runs still queued or running of these automations, oldest first."""
    query = (
        select(RunRow.id, RunRow.automation, RunRow.status, RunRow.scheduled_for)
        .where(RunRow.status.in_(ACTIVE), RunRow.automation.in_(list(automations)))
        .order_by(RunRow.scheduled_for, RunRow.id)
    )
    found: dict[str, list[ActiveRun]] = {}
    for row in session.execute(query):
        found.setdefault(row.automation, []).append(
            ActiveRun(row.id, row.status, row.scheduled_for)
        )
    return found


def insert_slots(
    session: Session, runs: Sequence[NewRun], *, now: dt.datetime, postgres: bool
) -> list[QueuedRun]:
    """Insert the slots (one Core executemany); return the queued runs actually inserted."""
    if not runs:
        return []
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
    stmt = (  # the table, not the ORM class: a Core executemany, no ORM bulk path
        _insert(RunRow.__table__, postgres)
        .on_conflict_do_nothing(index_elements=["automation", "scheduled_for"])
        .returning(RunRow.id, RunRow.automation, RunRow.status, RunRow.source)
    )
    timeouts = {r.automation: timeout_s_of(r.definition) for r in runs}
    queued: list[QueuedRun] = []
    skipped: list[int] = []
    for row in session.execute(stmt, rows):
        if row.status == Status.QUEUED:
            queued.append(QueuedRun(row.id, row.automation, row.source, timeouts[row.automation]))
        else:
            skipped.append(row.id)
    runs_ended(session.connection(), skipped, incidents=False)  # the review list's rows
    return queued


def move_cursors(
    session: Session, cursors: Mapping[str, Cursor], *, now: dt.datetime, postgres: bool
) -> None:
    """Move the cursors: never back for the same schedule key; a new key replaces it."""
    if not cursors:
        return
    table = ScheduleCursorRow.__table__
    ordered = sorted(cursors.items())  # rows locked in one order: two ticks never deadlock
    if postgres:
        # One statement over three arrays (unnest), not one per cursor: a first tick over
        # 10,000 automations creates 10,000 cursors.
        rows = (
            Function(  # not func.unnest: sqlalchemy-bigquery registers a one-argument unnest
                "unnest",
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
        insert = _insert(table, postgres).from_select(columns, source.select_from(rows))
        parameters: Any = {
            "automations": [name for name, _ in ordered],
            "keys": [c.key for _, c in ordered],
            "cursors_at": [c.at for _, c in ordered],
            "now": now,
        }
    else:
        insert = _insert(table, postgres)
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
