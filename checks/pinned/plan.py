"""The pinned plan: an accepted agent report kept so later runs can take it without the LLM.

When the agent's report is accepted (``finding_source`` ``agent`` or
``override``, status ``completed``), the queries it cites and its finding
become the automation's plan (``make_plan``): each cited agent query
(``Q…``) with its SQL and result fingerprint, the fingerprint of each cited
declared-check result (``C…``, ``S…``), every declared check's outcome, the
hash of the part of the definition that decides a run (``definition_hash``)
and the model that wrote the report. The store keeps one plan per automation
(``checks.store.plan_tables``); ``checks.pinned.consult`` decides whether a run
may take it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from checks.agent.contract import AcceptedReport, cited_ids
from checks.report import Evidence, Finding, FindingSource, RunReport, Status

DECIDING_FIELDS = ("source", "goal", "instructions", "checks", "timezone", "model")
"""Definition keys whose change makes a plan stale: what the run reads and how it judges.

The schedule, owner, tags, channels, severity and time limits do not change
what a run finds, so editing them keeps the plan.
"""


def definition_hash(definition: dict[str, Any]) -> str:
    """Return the sha256 hex of the deciding fields of an automation's ``definition()``.

    Keys are sorted and the JSON compact, so equal definitions hash alike
    whatever their order in the YAML.
    """
    deciding = {key: definition.get(key) for key in DECIDING_FIELDS}
    text = json.dumps(deciding, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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


def reads_a_table(sql: str) -> bool:
    """Whether a statement reads a table (a CTE's own name does not count; unparseable: no).

    A plan resting only on statements that read no table (``SELECT 1``) would
    find its evidence unchanged forever, whatever the data do, so it is never
    pinned.
    """
    try:
        tree = sqlglot.parse_one(sql)
    except sqlglot.errors.ParseError:
        return False
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    return any(t.name.lower() not in ctes for t in tree.find_all(exp.Table) if t.name)


def make_plan(report: RunReport, accepted: AcceptedReport, *, model: str) -> PinnedPlan | None:
    """Return the plan an accepted agent report makes, or None when it cannot be pinned.

    Pinned only when the run completed (not in error), the report was the
    agent's (``agent`` or ``override``) and at least one cited statement reads
    a table (``reads_a_table``); the cited ids are the report's
    ``evidence`` list, then the ids cited in its summary. ``run_id`` is 0:
    ``Store.finish_run`` sets the run's id when it writes the plan.
    """
    if report.status != Status.COMPLETED or report.finding is None:
        return None
    if accepted.finding_source not in (FindingSource.AGENT, FindingSource.OVERRIDE):
        return None
    by_id = {e.id: e for e in report.evidence}
    cited = list(dict.fromkeys([*accepted.evidence, *cited_ids(accepted.summary)]))
    queries = tuple(PinnedQuery.of(by_id[i]) for i in cited if i in by_id)
    if not any(reads_a_table(q.sql) for q in queries):
        return None  # evidence of constants: unchanged whatever the data do
    return PinnedPlan(
        automation=report.automation,
        run_id=report.run_id or 0,
        made_at=report.started_at or report.scheduled_for,
        definition_hash=definition_hash(report.definition),
        model=model,
        finding=report.finding,
        finding_source=accepted.finding_source,
        summary=accepted.summary.rstrip(),
        confidence=accepted.confidence,
        queries=queries,
        check_outcomes=tuple((c.name, str(c.outcome)) for c in report.checks),
    )
