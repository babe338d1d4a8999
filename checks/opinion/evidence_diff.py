"""The deterministic difference between two runs' evidence: fingerprints and rows.

Evidence is matched by its SQL's normal form (``checks.sql.normal_form``:
whitespace, keyword and unquoted-name case and comments do not count), not
by its id: the agent's ``Q2`` this run is last run's ``Q5`` when it is the same
query. A matched entry's fingerprint (the sha256 of its result,
``Evidence.fingerprint``) tells whether the data it reads changed; an entry
whose SQL matches nothing is added, or removed.

Each entry with a row record is also compared row by row with the same query
in *its* previous completed run (``checks.opinion.row_diff``; the store finds
it, ``Store.previous_rows``), which may be an older run than the one whose
fingerprints are compared when the agent did not run that query last time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from checks.opinion.row_diff import PreviousRows, RowChange, diff_rows
from checks.report import Evidence
from checks.sql.normal_form import query_key


def evidence_key(evidence: Evidence) -> str:
    """The key ``evidence`` is matched by across runs (its SQL's normal form's)."""
    return evidence.query_key or query_key(evidence.sql, None)


@dataclass(frozen=True)
class EvidenceChange:
    """One evidence entry added, removed or changed; fingerprints as sha256 hex (None: absent)."""

    id: str
    sql: str
    before: str | None
    after: str | None

    def to_dict(self) -> dict[str, Any]:
        """Return ``{id, sql, before, after}``."""
        return {"id": self.id, "sql": self.sql, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class EvidenceDiff:
    """This run's evidence against the previous completed run's.

    Attributes:
        first_run: there is no previous run (everything else is empty).
        previous_run_id: the run compared against, when known.
        added: entries only in this run.
        removed: entries only in the previous run.
        changed: entries in both whose fingerprints differ.
        unchanged: ids of entries in both with equal fingerprints.
        rows: this run's entries compared row by row with the same query in
            its previous completed run, in this run's order.
    """

    first_run: bool
    previous_run_id: int | None = None
    added: tuple[EvidenceChange, ...] = ()
    removed: tuple[EvidenceChange, ...] = ()
    changed: tuple[EvidenceChange, ...] = ()
    unchanged: tuple[str, ...] = ()
    rows: tuple[RowChange, ...] = ()

    @property
    def differs(self) -> bool:
        """Whether anything was added, removed or changed."""
        return bool(self.added or self.removed or self.changed)

    def to_dict(self) -> dict[str, Any]:
        """Return the ``evidence_diff`` object of ``second_opinion`` in ``--json``."""
        return {
            "first_run": self.first_run,
            "previous_run_id": self.previous_run_id,
            "added": [c.to_dict() for c in self.added],
            "removed": [c.to_dict() for c in self.removed],
            "changed": [c.to_dict() for c in self.changed],
            "unchanged": list(self.unchanged),
            "rows": [r.to_dict() for r in self.rows],
        }


def diff_evidence(
    current: Sequence[Evidence],
    previous: Sequence[Evidence] | None,
    *,
    previous_run_id: int | None = None,
    previous_rows: Mapping[str, PreviousRows] | None = None,
) -> EvidenceDiff:
    """Compare this run's evidence with the previous run's (None: a first run).

    Entries keep this run's order; removed ones keep the previous run's order.
    A query that ran twice in one run is matched once, by its first entry.

    Args:
        current: this run's evidence.
        previous: the previous completed run's evidence, or None.
        previous_run_id: that run's id.
        previous_rows: by ``evidence_key``, each query's row record in its own
            previous completed run (``Store.previous_rows``); an entry without
            one, or without a row set, gets no row comparison.
    """
    rows = tuple(_row_changes(current, previous_rows or {}))
    if previous is None:
        return EvidenceDiff(first_run=True, rows=rows)
    before: dict[str, Evidence] = {}
    for e in previous:
        before.setdefault(evidence_key(e), e)
    now: dict[str, Evidence] = {}
    for e in current:
        now.setdefault(evidence_key(e), e)
    added, changed, unchanged = [], [], []
    for key, item in now.items():
        old = before.get(key)
        if old is None:
            added.append(EvidenceChange(item.id, item.sql, None, item.fingerprint))
        elif old.fingerprint != item.fingerprint:
            changed.append(EvidenceChange(item.id, item.sql, old.fingerprint, item.fingerprint))
        else:
            unchanged.append(item.id)
    removed = [
        EvidenceChange(e.id, e.sql, e.fingerprint, None) for k, e in before.items() if k not in now
    ]
    return EvidenceDiff(
        first_run=False,
        previous_run_id=previous_run_id,
        added=tuple(added),
        removed=tuple(removed),
        changed=tuple(changed),
        unchanged=tuple(unchanged),
        rows=rows,
    )


def _row_changes(
    current: Sequence[Evidence], previous_rows: Mapping[str, PreviousRows]
) -> list[RowChange]:
    changes: list[RowChange] = []
    seen: set[str] = set()
    for e in current:
        key = evidence_key(e)
        found = previous_rows.get(key)
        if e.row_set is None or found is None or key in seen:
            continue
        seen.add(key)
        changes.append(
            diff_rows(e.id, e.columns, e.rows, e.row_set, e.row_count, e.row_count_exact, found)
        )
    return changes
