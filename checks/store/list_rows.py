"""The review list's rows, stored: kept in step by every writer of runs and incidents.

The list (``worker.review.board``) shows each automation's latest report —
its newest completed or errored run, else (nothing reported) its newest
skipped one — replaced by one row per open incident when it has any, each
showing the incident's newest run of its kind since the run that opened it.
Finding those by scanning every stored run on every request cost most of a
request, so ``list_rows`` (``checks.store.review_tables.ListRow``) holds them,
with the run's list columns, and each writer keeps it in the transaction
that changes what it depends on:

- a run that ends (completed, error, skipped: ``runs_ended``), from
  ``Store.create_run`` / ``finish_run`` / ``fail_run`` and the service's
  skipped slots, failures and reaper (``worker.service.run_queue``);
- an incident that opens or closes (``incident_opened``, ``incident_closed``),
  from ``checks.store.incidents``.

Each keeps a row only when its run is newer than the one held (reported
beats skipped, then the later slot): a run that ends late, or twice, never
replaces a newer one. An ended run never changes again, so its copied
columns stay true. ``scanned`` computes every row from the runs and
incidents themselves: what ``rebuild`` writes (a store filled without these
writers, such as the benchmark's) and what the tests compare the kept rows with.

On PostgreSQL a writer that ends a run updates its automation's report row
first and its incidents' rows in a second statement, and an incident opens
only after ``lock`` took that same report row: whichever commits first, the
other's later statement sees it, so a run ending while its automation's
incident opens is never missed.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from typing import Any

from sqlalchemy import (
    Connection,
    Integer,
    Select,
    and_,
    bindparam,
    case,
    delete,
    func,
    literal,
    or_,
    select,
)
from sqlalchemy.sql.elements import BindParameter

from checks.report import Finding, Status
from checks.store.alert_tables import IncidentRow
from checks.store.review_tables import ListRow
from checks.store.run_tables import RunRow, dialect_insert, table_of

REPORT = 0
"""``list_rows.incident_id`` of an automation's latest report (incident ids start at 1)."""

REPORTED = (str(Status.COMPLETED), str(Status.ERROR))
ENDED = (*REPORTED, str(Status.SKIPPED))
"""The statuses a run ends in: only these runs are ever listed."""

_CHUNK = 1000  # run ids per statement: well under either database's limit of bound values

COLUMNS = tuple(c.name for c in table_of(ListRow).columns)
"""``list_rows``' columns, in the table's order (the key first)."""


def _runs() -> Any:
    return table_of(RunRow).alias("ended")


def _copied(run: Any) -> list[Any]:
    """A run's columns as ``list_rows`` holds them (but its key)."""
    return [
        run.c.id.label("run_id"),
        run.c.scheduled_for.label("scheduled_for"),
        case((run.c.status.in_(REPORTED), 1), else_=0).label("reported"),
        run.c.owner.label("owner"),
        run.c.tags.label("tags"),
        func.coalesce(run.c.source, run.c.definition_source).label("source"),
        run.c.flags.label("flags"),
        run.c.urgency.label("urgency"),
        run.c.severity.label("severity"),
        run.c.status.label("status"),
        run.c.finding.label("finding"),
        func.coalesce(run.c.finished_at, run.c.scheduled_for).label("at"),
    ]


def _newest(ranked: Any) -> Select[Any]:
    return select(*(ranked.c[c] for c in COLUMNS)).where(ranked.c.n == 1)


def _report_rows(run_ids: Any = None) -> Select[Any]:
    """Per automation, its newest ended run (reported beat skipped), among ``run_ids`` if given."""
    run = _runs()
    where = [] if run_ids is None else [run.c.id.in_(run_ids)]
    newest = func.row_number().over(
        partition_by=run.c.automation,
        order_by=(
            case((run.c.status.in_(REPORTED), 1), else_=0).desc(),
            run.c.scheduled_for.desc(),
        ),
    )
    ranked = (
        select(
            run.c.automation.label("automation"),
            literal(REPORT, Integer).label("incident_id"),
            *_copied(run),
            newest.label("n"),
        )
        .where(run.c.status.in_(ENDED), *where)
        .subquery("reports")
    )
    return _newest(ranked)


def _incident_rows(run_ids: Any = None, incident_id: Any = None) -> Select[Any]:
    """Per open incident, its newest run of its kind since its opening run.

    Only among the runs ``run_ids`` (if given), for the incident ``incident_id`` (if given).
    """
    run = _runs()
    incident = table_of(IncidentRow)
    of_kind = or_(
        and_(incident.c.kind == "error", run.c.status == str(Status.ERROR)),
        and_(
            incident.c.kind != "error",
            run.c.status == str(Status.COMPLETED),
            run.c.finding == str(Finding.NEEDS_ATTENTION),
        ),
    )
    newest = func.row_number().over(
        partition_by=incident.c.id, order_by=(run.c.scheduled_for.desc(), run.c.id.desc())
    )
    where = [incident.c.open_key.is_not(None)]
    if run_ids is not None:
        where.append(run.c.id.in_(run_ids))
    if incident_id is not None:
        where.append(incident.c.id == incident_id)
    ranked = (
        select(
            run.c.automation.label("automation"),
            incident.c.id.label("incident_id"),
            *_copied(run),
            newest.label("n"),
        )
        .select_from(incident)
        .join(
            run,
            and_(
                run.c.automation == incident.c.automation,
                run.c.id >= func.coalesce(incident.c.opened_run_id, 0),
                of_kind,
            ),
        )
        .where(*where)
        .subquery("incident_runs")
    )
    return _newest(ranked)


def _upsert(dialect: str, rows: Select[Any]) -> Any:
    """Insert ``rows``, or replace a held row by one whose run is newer (reported, slot, id)."""
    table = table_of(ListRow)
    insert = dialect_insert(table, dialect)
    new = insert.excluded
    newer = or_(
        new.reported > table.c.reported,
        and_(new.reported == table.c.reported, new.scheduled_for > table.c.scheduled_for),
        and_(
            new.reported == table.c.reported,
            new.scheduled_for == table.c.scheduled_for,
            new.run_id > table.c.run_id,
        ),
    )
    key = ["automation", "incident_id"]
    return insert.from_select(list(COLUMNS), rows).on_conflict_do_update(
        index_elements=key, set_={c: new[c] for c in COLUMNS if c not in key}, where=newer
    )


@functools.cache
def _statements(dialect: str) -> tuple[Any, Any, Any]:
    """``runs_ended``'s two upserts (reports, incidents) and ``incident_opened``'s; built once."""
    ids: BindParameter[list[int]] = bindparam("list_run_ids", expanding=True)
    return (
        _upsert(dialect, _report_rows(ids)),
        _upsert(dialect, _incident_rows(run_ids=ids)),
        _upsert(dialect, _incident_rows(incident_id=bindparam("list_incident_id"))),
    )


def runs_ended(connection: Connection, run_ids: Collection[int], *, incidents: bool = True) -> None:
    """Keep the list's rows for runs that just ended, in the caller's transaction.

    Runs of ``run_ids`` not ended (queued, running) are left out. The
    automation's report row first, then (``incidents``: some run may be in
    error or need attention) the rows of its open incidents, in a second
    statement (see the module's docstring); per 1,000 runs.
    """
    reports, incident_rows, _ = _statements(connection.dialect.name)
    ordered = sorted(run_ids)
    for start in range(0, len(ordered), _CHUNK):  # each a statement: newer-wins keeps it exact
        parameters = {"list_run_ids": ordered[start : start + _CHUNK]}
        connection.execute(reports, parameters)
        if incidents:
            connection.execute(incident_rows, parameters)


def lock(connection: Connection, automation: str) -> None:
    """Hold the automation's report row until commit before its incidents move (PostgreSQL).

    SQLite has one writer at a time: nothing to do.
    """
    if connection.dialect.name != "postgresql":
        return
    table = table_of(ListRow)
    connection.execute(
        select(table.c.run_id)
        .where(table.c.automation == automation, table.c.incident_id == REPORT)
        .with_for_update()
    )


def incident_opened(connection: Connection, incident_id: int) -> None:
    """Add the row of an incident just opened (flushed): its newest run of its kind, if any."""
    _, _, opened = _statements(connection.dialect.name)
    connection.execute(opened, {"list_incident_id": incident_id})


def incident_closed(connection: Connection, incident_id: int) -> None:
    """Drop a closed incident's row: its automation's report shows again if none is left."""
    table = table_of(ListRow)
    connection.execute(delete(table).where(table.c.incident_id == incident_id))


def scanned() -> Select[Any]:
    """Every row the list's rows should be, computed from all runs and incidents (a full scan)."""
    return _report_rows().union_all(_incident_rows())  # type: ignore[return-value]


def rebuild(connection: Connection) -> None:
    """Write every row again from the runs and incidents (``scanned``): a store filled directly."""
    table = table_of(ListRow)
    connection.execute(delete(table))
    connection.execute(table.insert().from_select(list(COLUMNS), scanned()))
