"""The report contract: what a ``submit_report`` call must hold before a report is accepted.

The report's contract: ``submit_report`` is called once with a valid payload (``finding``
clear or needs_attention, ``confidence`` low, medium or high, a non-empty
``evidence`` list of ids); and every cited id — in ``evidence`` and every ``[Qn]``
or ``[Cn]`` in the summary — exists in this run. What the verified report then
decides (a Clear against a failed declared check does not stand) is
``checks.finding``'s, not the loop's.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import cast

from checks.agent.toolspec import SUBMIT_REPORT, ToolArgumentError, check_arguments
from checks.finding import Confidence, SubmittedReport
from checks.report import Finding, cited_ids

_ID = re.compile(r"[QCS][1-9][0-9]*")

__all__ = ["SubmittedReport", "cited_ids", "read_report", "repair_request", "verify"]


def read_report(arguments: str) -> tuple[SubmittedReport | None, list[str]]:
    """Parse a ``submit_report`` call's raw arguments; return the report or the problems.

    A problem is one line the model can act on (sent back in the repair turn).
    """
    try:
        args = check_arguments(SUBMIT_REPORT, arguments)
    except ToolArgumentError as exc:
        return None, [str(exc)]
    report = SubmittedReport(
        finding=Finding(args["finding"]),
        summary=args["summary"],
        evidence=list(args["evidence"]),
        confidence=cast(Confidence, args["confidence"]),
    )
    return report, []


def verify(report: SubmittedReport, known_ids: Collection[str]) -> list[str]:
    """Return what is wrong with a parsed report in this run (empty: nothing).

    Args:
        report: the parsed ``submit_report`` arguments.
        known_ids: the ids that exist in this run: ``C1``… for declared checks
            that ran and ``Q1``… for the agent's successful queries.
    """
    problems = []
    known = ", ".join(sorted(known_ids, key=_id_order)) or "none"
    if not report.summary.strip():
        problems.append("summary is empty")
    if not report.evidence:
        problems.append(
            f"evidence is empty: list the ids the finding rests on (ids in this run: {known})"
        )
    malformed = [e for e in report.evidence if not _ID.fullmatch(e)]
    if malformed:
        problems.append(f"evidence holds {_quoted(malformed)}, which are not ids like Q1 or C1")
    unknown = [e for e in report.evidence if _ID.fullmatch(e) and e not in known_ids]
    if unknown:
        problems.append(
            f"evidence cites {_quoted(unknown)}, which did not run in this run (ids: {known})"
        )
    unknown_cited = [c for c in cited_ids(report.summary) if c not in known_ids]
    if unknown_cited:
        problems.append(
            f"summary cites {', '.join(f'[{c}]' for c in unknown_cited)}, which did not run "
            f"in this run (ids: {known})"
        )
    return problems


def repair_request(problems: Sequence[str], known_ids: Collection[str]) -> str:
    """The tool result sent back for a rejected report: exactly what was wrong, and what to do."""
    known = ", ".join(sorted(known_ids, key=_id_order)) or "none"
    lines = ["Report rejected. Problems:"]
    lines += [f"- {p}" for p in problems]
    lines.append(
        "Call submit_report once more with these fixed. "
        f"Cite only ids that exist in this run: {known}."
    )
    return "\n".join(lines)


def _id_order(query_id: str) -> tuple[str, int]:
    match = _ID.fullmatch(query_id)
    return (query_id[0], int(query_id[1:])) if match else (query_id, 0)


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(repr(v[:40]) for v in values[:10])
