"""Running an automation's declared checks: the authoritative, deterministic part of a run."""

from __future__ import annotations

import time

from checks.automation.expectation import evaluate
from checks.automation.model import Automation, Check
from checks.errors import QueryError
from checks.report import CheckResult, Evidence
from checks.settings.limits import Limits
from checks.sources import Source


def run_check(
    check: Check, source: Source, limits: Limits, *, evidence_id: str, timeout_s: float
) -> tuple[CheckResult, Evidence | None]:
    """Run one check's SQL through the read-only layer and compare it with its expectation.

    Returns the result and, when the query ran, its evidence (id ``evidence_id``).
    A rejected, failing or timed-out query is an error on the check, never a pass.
    """
    try:
        result = source.query(check.sql, max_rows=limits.max_rows, timeout_s=timeout_s)
    except QueryError as exc:
        return CheckResult(check.name, check.sql, check.expect.text, None, None, str(exc)), None
    outcome = evaluate(check.expect, result.columns, result.rows, result.row_count)
    rows, cut = result.jsonable(
        max_cell_chars=limits.max_cell_chars, max_result_chars=limits.max_result_chars
    )
    evidence = Evidence(
        id=evidence_id,
        sql=check.sql,
        columns=list(result.columns),
        rows=rows,
        row_count=result.row_count,
        truncated=result.truncated or cut,
        fingerprint=result.fingerprint,
        origin="check",
    )
    check_result = CheckResult(
        check.name,
        check.sql,
        check.expect.text,
        outcome.value,
        outcome.passed,
        outcome.error,
        evidence_id,
    )
    return check_result, evidence


def run_checks(
    automation: Automation, source: Source, limits: Limits, *, deadline: float
) -> tuple[list[CheckResult], list[Evidence]]:
    """Run every declared check in order; evidence ids are ``C1``, ``C2``… by position.

    Args:
        deadline: ``time.monotonic()`` value after which no check starts; a check
            that could not start is recorded as an error ("the run's time limit ran out").
    """
    results: list[CheckResult] = []
    evidence: list[Evidence] = []
    for position, check in enumerate(automation.checks or [], start=1):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            results.append(
                CheckResult(
                    check.name,
                    check.sql,
                    check.expect.text,
                    None,
                    None,
                    f"not run: the automation's time limit ({automation.timeout_s:g} s) ran out",
                )
            )
            continue
        result, ev = run_check(
            check,
            source,
            limits,
            evidence_id=f"C{position}",
            timeout_s=min(limits.query_timeout_s, remaining),
        )
        results.append(result)
        if ev is not None:
            evidence.append(ev)
    return results, evidence
