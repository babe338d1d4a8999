"""The state a decision model is shown for one second opinion, bounded and fenced.

``opinion_state`` holds the goal, the instructions, each run's finding,
summary, declared checks (outcome, value, reason and counts such as
``rows_in_scope``) and evidence query results — never raw tables — and the
row changes since the last run as computed; bounded by ``StateLimits``
(rows, cell, SQL and total characters; whatever is cut is listed under
``left_out``), fenced and labelled as untrusted
(``checks.opinion.decision_model.untrusted_state``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from checks.opinion.decision_model import untrusted_state
from checks.opinion.row_diff import RowChange
from checks.report import CheckResult, Evidence, RunReport, json_value


@dataclass(frozen=True)
class StateLimits:
    """Bounds of the state sent to the decision model.

    Attributes:
        max_rows: rows of one evidence result shown.
        max_cell_chars: characters of one cell value shown.
        max_sql_chars: characters of one query's SQL shown.
        max_text_chars: characters of the goal, the instructions and each summary.
        max_evidence_chars: characters of all evidence entries of the state's JSON
            (the previous run gets 40 % when present); past it, rows are halved
            until an entry fits, then whole entries are left out.
    """

    max_rows: int = 20
    max_cell_chars: int = 200
    max_sql_chars: int = 2_000
    max_text_chars: int = 4_000
    max_evidence_chars: int = 20_000


def _cut(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


def _evidence_entries(
    evidence: Sequence[Evidence], budget: int, limits: StateLimits, run: str, left_out: list[str]
) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    used = 0
    for item in evidence:
        rows = [
            [_cut(v, limits.max_cell_chars) for v in row] for row in item.rows[: limits.max_rows]
        ]
        entry: dict[str, Any] = {
            "id": item.id,
            "sql": _cut(item.sql, limits.max_sql_chars),
            "columns": item.columns,
            "rows": rows,
            "row_count": item.row_count,
        }
        size = len(json.dumps(entry, default=str))
        while used + size > budget and entry["rows"]:
            entry["rows"] = entry["rows"][: len(entry["rows"]) // 2]
            size = len(json.dumps(entry, default=str))
        if used + size > budget:
            left_out.append(f"{run} evidence {item.id}: left out entirely (character budget)")
            continue
        shown = len(entry["rows"])
        if shown < item.row_count:
            entry["rows_left_out"] = item.row_count - shown
            left_out.append(
                f"{run} evidence {item.id}: {item.row_count - shown} of {item.row_count} rows"
            )
        entries.append(entry)
        used += size
    return entries


def _check_entry(check: CheckResult, limits: StateLimits) -> dict[str, Any]:
    """One declared check as the decision model sees it: outcome, value and its counts.

    The counts (``rows_in_scope`` and the kind's others) let it tell a pass over
    a few rows from one over many, and see a scope that was empty. An anomaly
    expectation adds what the runtime computed (value, band, score, the
    baseline's newest ``max_rows`` points): the model judges it, never computes it.
    A segmented check adds its first ``max_rows`` failing segments (name, value, rows).
    """
    entry: dict[str, Any] = {
        "name": check.name,
        "kind": check.kind,
        "outcome": str(check.outcome),
        "expect": check.expect,
        "value": json_value(check.value),
        "reason": _cut(check.reason, limits.max_cell_chars),
        "metrics": {
            k: _cut(json_value(v), limits.max_cell_chars) for k, v in check.metrics.items()
        },
    }
    if check.anomaly is not None:
        computed = check.anomaly.to_dict()
        baseline = computed.pop("baseline")
        computed["baseline"] = baseline[-limits.max_rows :]
        if len(baseline) > limits.max_rows:
            computed["baseline_left_out"] = len(baseline) - limits.max_rows
        entry["anomaly"] = json_value(computed)
    if check.buckets is not None:
        entry["buckets"] = check.buckets.to_dict()
    if check.segments is not None:  # its failing segments, as many as a result's rows
        failed = check.segments.failed
        entry["failed_segments"] = [
            {
                "name": _cut(s.name, limits.max_cell_chars),
                "value": json_value(s.value),
                "rows_in_scope": s.rows_in_scope,
            }
            for s in failed[: limits.max_rows]
        ]
        if len(failed) > limits.max_rows:
            entry["failed_segments_left_out"] = len(failed) - limits.max_rows
    return entry


def _row_entries(
    changes: Sequence[RowChange], limits: StateLimits, left_out: list[str]
) -> list[dict[str, Any]]:
    """The computed row changes as the decision model sees them (it never counts them)."""

    def rows(items: list[list[Any]]) -> list[list[Any]]:
        return [[_cut(v, limits.max_cell_chars) for v in row] for row in items]

    entries = [
        {
            "id": c.id,
            "compared_with_run": c.previous_run_id,
            "rows_new": c.appeared,
            "rows_gone": c.vanished,
            "in_words": _cut(c.line(), limits.max_text_chars),
            "columns": c.columns,
            "new_rows": rows(c.appeared_rows),
            "gone_rows": rows(c.vanished_rows),
        }
        for c in changes[:MAX_ROW_CHANGES]
    ]
    if len(changes) > MAX_ROW_CHANGES:
        left_out.append(f"row changes of {len(changes) - MAX_ROW_CHANGES} more queries")
    return entries


MAX_ROW_CHANGES = 20
"""Queries whose row changes the state holds; more are listed under ``left_out``."""


def opinion_state(
    report: RunReport,
    previous: RunReport | None,
    goal: str,
    instructions: str | None,
    limits: StateLimits = StateLimits(),
    *,
    row_changes: Sequence[RowChange] = (),
) -> str:
    """Return the fenced state for ``second_opinion`` (see the module docstring).

    ``row_changes`` (the evidence diff's ``rows``, computed by Lookout) go in
    as ``rows_since_last_run``: counts, the line that says them, and the first
    few rows new and gone, cells cut like the evidence's.
    """
    left_out: list[str] = []
    budget = limits.max_evidence_chars
    current_budget = budget if previous is None else budget * 6 // 10

    def run_part(run: RunReport, label: str, chars: int) -> dict[str, Any]:
        part: dict[str, Any] = {
            "finding": str(run.finding) if run.finding else None,
            "summary": _cut(run.summary, limits.max_text_chars),
        }
        if run.checks:
            part["checks"] = [_check_entry(c, limits) for c in run.checks]
        part["evidence"] = _evidence_entries(run.evidence, chars, limits, label, left_out)
        return part

    payload: dict[str, Any] = {
        "goal": _cut(goal, limits.max_text_chars),
        "instructions": _cut(instructions or "", limits.max_text_chars) or None,
        "this_run": run_part(report, "this run's", current_budget),
    }
    if previous is not None:
        payload["previous_run"] = run_part(previous, "the previous run's", budget - current_budget)
    if row_changes:
        payload["rows_since_last_run"] = _row_entries(row_changes, limits, left_out)
    payload["left_out"] = left_out
    label = (
        "an automation's goal and instructions, and the finding, summary and evidence query "
        "results of its latest run"
        + (" and of the previous run" if previous else "")
        + (", and which result rows are new and gone since the last run" if row_changes else "")
    )
    return untrusted_state(label, payload)
