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

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from checks.opinion.row_diff import PreviousRows
from checks.report import Evidence, Status
from checks.sources.row_set import RowSet
from checks.store.run_tables import EvidenceRow, EvidenceRowSetRow, RunRow

KEEP_COMPLETED = 2
"""Completed runs of one query whose row sets are kept."""


def write_row_sets(
    session: Session, run: RunRow, stored: Sequence[EvidenceRow], evidence: Sequence[Evidence]
) -> None:
    """Add the row sets of a run's evidence (``stored`` flushed, aligned with ``evidence``).

    A query that ran twice in the run keeps its first entry's; then older row
    sets of each query are deleted (see the module docstring).
    """
    keys: set[str] = set()
    for row, item in zip(stored, evidence, strict=True):
        if item.row_set is None or item.query_key is None or item.query_key in keys:
            continue
        keys.add(item.query_key)
        session.add(
            EvidenceRowSetRow(
                evidence_id=row.id,
                run_id=run.id,
                automation=run.automation,
                query_key=item.query_key,
                hashed=item.row_set.hashed,
                capped=item.row_set.capped,
                hashes=item.row_set.hashes,
                sample=item.row_set.sample,
            )
        )
    session.flush()
    for key in sorted(keys):
        _prune(session, run.automation, key)


def _prune(session: Session, automation: str, key: str) -> None:
    newest = session.execute(
        select(EvidenceRowSetRow.evidence_id, RunRow.status)
        .join(RunRow, RunRow.id == EvidenceRowSetRow.run_id)
        .where(EvidenceRowSetRow.automation == automation, EvidenceRowSetRow.query_key == key)
        .order_by(RunRow.scheduled_for.desc(), RunRow.id.desc())
    ).all()
    completed = 0
    older: list[int] = []
    for evidence_id, status in newest:
        if completed >= KEEP_COMPLETED:
            older.append(evidence_id)
        elif status == Status.COMPLETED:
            completed += 1
    if older:
        session.execute(delete(EvidenceRowSetRow).where(EvidenceRowSetRow.evidence_id.in_(older)))


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
