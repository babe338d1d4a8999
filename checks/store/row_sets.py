"""Each query's row hashes in the store: written with a run, pruned, read by the next run.

A run's evidence entries that carry a row set (``checks.sources.row_set``)
get one ``evidence_row_sets`` row each, keyed by (automation, query key):
the query's SQL's normal form (``checks.sql.normal_form``), so the next run
finds the same query whatever its id. Of each (automation, query), only the
row sets of its two newest completed runs are kept, with those of any runs
since that did not complete: at most about ``2 × 8 × fingerprint_max_rows``
bytes per query (1.6 MB at the default 100,000 rows). What a comparison
found is kept in the run's ``second_opinion`` (``evidence_diff.rows``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import Connection, delete, insert, select
from sqlalchemy.orm import Session

from checks.opinion.row_diff import PreviousRows
from checks.report import Evidence, Status
from checks.sources.row_set import RowSet
from checks.store.run_tables import EvidenceRow, EvidenceRowSetRow, RunRow, table_of

KEEP_COMPLETED = 2
"""Completed runs of one query whose row sets are kept."""


def write_row_sets(
    connection: Connection,
    run_id: int,
    automation: str,
    evidence_ids: Sequence[int],
    evidence: Sequence[Evidence],
) -> None:
    """Insert the row sets of a run's evidence, then delete each query's older ones.

    ``evidence_ids`` are the stored ``evidence`` rows' ids, aligned with
    ``evidence``. A query that ran twice in the run keeps its first entry's;
    older row sets of each query go as the module docstring says: one read
    of every kept query's row sets and at most one delete, whatever the
    number of queries.
    """
    keys: set[str] = set()
    rows: list[dict[str, Any]] = []
    for evidence_id, item in zip(evidence_ids, evidence, strict=True):
        if item.row_set is None or item.query_key is None or item.query_key in keys:
            continue
        keys.add(item.query_key)
        rows.append(
            {
                "evidence_id": evidence_id,
                "run_id": run_id,
                "automation": automation,
                "query_key": item.query_key,
                "hashed": item.row_set.hashed,
                "capped": item.row_set.capped,
                "hashes": item.row_set.hashes,
                "sample": item.row_set.sample,
            }
        )
    if not rows:
        return
    connection.execute(insert(table_of(EvidenceRowSetRow)), rows)
    older = _older(connection, automation, keys)
    if older:
        connection.execute(
            delete(table_of(EvidenceRowSetRow)).where(
                table_of(EvidenceRowSetRow).c.evidence_id.in_(older)
            )
        )


def _older(connection: Connection, automation: str, keys: Collection[str]) -> list[int]:
    """The row sets of these queries beyond each one's ``KEEP_COMPLETED`` newest completed runs."""
    sets = table_of(EvidenceRowSetRow)
    runs = table_of(RunRow)
    newest = connection.execute(
        select(sets.c.query_key, sets.c.evidence_id, runs.c.status)
        .join(runs, runs.c.id == sets.c.run_id)
        .where(sets.c.automation == automation, sets.c.query_key.in_(sorted(keys)))
        .order_by(sets.c.query_key, runs.c.scheduled_for.desc(), runs.c.id.desc())
    )
    completed: dict[str, int] = {}
    older: list[int] = []
    for key, evidence_id, status in newest:
        if completed.get(key, 0) >= KEEP_COMPLETED:
            older.append(evidence_id)
        elif status == Status.COMPLETED:
            completed[key] = completed.get(key, 0) + 1
    return older


def previous_rows(
    session: Session, automation: str, keys: Collection[str], *, before_run: int | None
) -> dict[str, PreviousRows]:
    """Return, by query key, each query's row record in its newest completed run.

    ``before_run`` (this run) is never one of them. Keys with no completed run
    holding them are absent.
    """
    if not keys:
        return {}
    query = (
        select(EvidenceRowSetRow.query_key, EvidenceRowSetRow.evidence_id)
        .join(RunRow, RunRow.id == EvidenceRowSetRow.run_id)
        .where(
            EvidenceRowSetRow.automation == automation,
            EvidenceRowSetRow.query_key.in_(sorted(set(keys))),
            RunRow.status == str(Status.COMPLETED),
        )
        .order_by(RunRow.scheduled_for.desc(), RunRow.id.desc())
    )
    if before_run is not None:
        query = query.where(RunRow.id != before_run)
    chosen: dict[str, int] = {}
    for key, evidence_id in session.execute(query):
        chosen.setdefault(key, evidence_id)
    if not chosen:
        return {}
    found: dict[str, PreviousRows] = {}
    loaded = session.execute(
        select(EvidenceRowSetRow, EvidenceRow)
        .join(EvidenceRow, EvidenceRow.id == EvidenceRowSetRow.evidence_id)
        .where(EvidenceRowSetRow.evidence_id.in_(list(chosen.values())))
    )
    for record, evidence in loaded:
        found[record.query_key] = PreviousRows(
            run_id=record.run_id,
            evidence_id=evidence.query_id,
            row_set=RowSet(record.hashes, record.sample, record.capped),
            rows=list(evidence.rows or []),
            row_count=evidence.row_count,
            row_count_exact=evidence.row_count_exact,
        )
    return found
