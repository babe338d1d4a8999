"""The pinned plan: an accepted agent report kept so later runs can take it without the LLM.

When the agent's report is accepted (``finding_source`` ``agent`` or
``override``, status ``completed``), the queries it cites and its finding
become the automation's plan (``make_plan``): each cited agent query
(``Q…``) with its SQL and result fingerprint, the fingerprint of each cited
declared-check result (``C…``, ``S…``), every declared check's outcome, the
hash of the part of the definition that decides a run (``definition_hash``)
and the model that wrote the report (the data, ``PinnedPlan`` and
``PinnedQuery``, is in ``checks.report.pinned_plan``). The store keeps one plan per automation
(``checks.store.plan_tables``); ``checks.pinned.consult`` decides whether a run
may take it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import sqlglot
from sqlglot import exp

from checks.finding import AcceptedReport
from checks.report import (
    FindingSource,
    PinnedPlan,
    PinnedQuery,
    RunReport,
    Status,
    cited_ids,
)

__all__ = [
    "DECIDING_FIELDS",
    "PinnedPlan",
    "PinnedQuery",
    "definition_hash",
    "make_plan",
    "reads_a_table",
]

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
