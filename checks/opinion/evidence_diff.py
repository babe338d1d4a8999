"""The deterministic difference between two runs' evidence, by fingerprint.

Evidence is matched by its id *and* its SQL (surrounding whitespace ignored):
a declared check keeps its id (``C1``) and SQL from run to run, so its
result's fingerprint tells whether the data it reads changed. An agent query
whose id now names different SQL is one removed and one added entry, never a
change. Fingerprints are the sha256 of the full result (``Evidence.fingerprint``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from checks.report import Evidence


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
    """

    first_run: bool
    previous_run_id: int | None = None
    added: tuple[EvidenceChange, ...] = ()
    removed: tuple[EvidenceChange, ...] = ()
    changed: tuple[EvidenceChange, ...] = ()
    unchanged: tuple[str, ...] = ()

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
        }


def diff_evidence(
    current: Sequence[Evidence],
    previous: Sequence[Evidence] | None,
    *,
    previous_run_id: int | None = None,
) -> EvidenceDiff:
    """Compare this run's evidence with the previous run's (None: a first run).

    Entries keep this run's order; removed ones keep the previous run's order.
    """
    if previous is None:
        return EvidenceDiff(first_run=True)
    before = {(e.id, e.sql.strip()): e for e in previous}
    now = {(e.id, e.sql.strip()): e for e in current}
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
    )
