"""The pinned plan's data: the evidence a plan rests on and the plan itself.

A run's accepted agent report makes the plan (``checks.pinned.plan.make_plan``);
the report carries it to the store (``RunReport.new_plan``), which keeps one
per automation (``checks.store.plan_tables``); ``checks.pinned.consult`` decides
whether a later run may take it. The data lives beside the report that carries
it so the report needs nothing from the rooms above it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from checks.report.evidence import Evidence
from checks.report.vocabulary import Finding, FindingSource


@dataclass(frozen=True)
class PinnedQuery:
    """One piece of evidence a plan rests on, as it was when the plan was made.

    Attributes:
        id: ``Q…`` (an agent query, run again by later runs) or ``C…``/``S…``
            (a declared check's result, compared with the check's own run).
        sql: the statement that ran (as the guard regenerated it).
        fingerprint: sha256 hex of its result (``Evidence.fingerprint``).
        row_count: rows in the result (a lower bound when not ``row_count_exact``).
        row_count_exact: whether ``row_count`` is exact.
        columns: the result's column names.
        rows: the bounded sample that was kept (at most ``limits.max_rows``).
    """

    id: str
    sql: str
    fingerprint: str
    row_count: int
    row_count_exact: bool
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    @classmethod
    def of(cls, evidence: Evidence) -> PinnedQuery:
        """The pinned copy of one evidence entry."""
        return cls(
            evidence.id,
            evidence.sql,
            evidence.fingerprint,
            evidence.row_count,
            evidence.row_count_exact,
            tuple(evidence.columns),
            tuple(tuple(row) for row in evidence.rows),
        )

    @property
    def replayed(self) -> bool:
        """Whether later runs run this query again (the agent's ``Q…``), not a check's result."""
        return self.id.startswith("Q")

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-safe form stored in ``pinned_plans.queries``."""
        return {
            "id": self.id,
            "sql": self.sql,
            "fingerprint": self.fingerprint,
            "row_count": self.row_count,
            "row_count_exact": self.row_count_exact,
            "columns": list(self.columns),
            "rows": [list(row) for row in self.rows],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PinnedQuery:
        """Read back ``to_dict``'s form."""
        return cls(
            str(data["id"]),
            str(data["sql"]),
            str(data["fingerprint"]),
            int(data["row_count"]),
            bool(data.get("row_count_exact", True)),
            tuple(data.get("columns") or ()),
            tuple(tuple(row) for row in data.get("rows") or ()),
        )


@dataclass(frozen=True)
class PinnedPlan:
    """One automation's pinned plan.

    Attributes:
        automation: the automation's name (one plan each).
        run_id: the run whose accepted report made the plan (0 until stored).
        made_at: when that run started (aware, UTC); ``repin_after`` counts from it.
        definition_hash: ``definition_hash`` of that run's definition.
        model: the LLM model that wrote the report.
        finding: the report's finding; finding_source: ``agent`` or ``override``.
        summary: the agent's summary alone (without the declared checks' lines).
        confidence: the agent's stated confidence.
        queries: the evidence the report cited, in citation order.
        check_outcomes: every declared check's ``(name, outcome)`` in that run, in order.
    """

    automation: str
    run_id: int
    made_at: dt.datetime
    definition_hash: str
    model: str
    finding: Finding
    finding_source: FindingSource
    summary: str
    confidence: str | None
    queries: tuple[PinnedQuery, ...]
    check_outcomes: tuple[tuple[str, str], ...]

    @property
    def replayed(self) -> tuple[PinnedQuery, ...]:
        """The queries later runs run again: the agent's ``Q…``, in order."""
        return tuple(q for q in self.queries if q.replayed)
