"""A Clear against the declared checks is overridden; any other finding stands."""

from __future__ import annotations

from checks.finding import SubmittedReport, accept
from checks.report import CheckResult, Finding, FindingSource, outcome_of


def check(passed: bool | None, name: str = "no orphans") -> CheckResult:
    error = None if passed is not None else "table missing"
    return CheckResult(
        name,
        "SELECT 1",
        "= 0",
        1,
        outcome_of(passed, error),
        error,
        "C1" if passed is not None else None,
    )


def test_clear_against_a_failed_check_is_overridden() -> None:
    report = SubmittedReport(Finding.CLEAR, "Looks fine [Q1].", ["Q1"], "high")
    accepted = accept(report, [check(False)])
    assert accepted.finding is Finding.NEEDS_ATTENTION
    assert accepted.finding_source is FindingSource.OVERRIDE
    assert accepted.summary.startswith("Looks fine [Q1].\n\n**Overridden by Lookout")
    assert "**no orphans** failed [C1]" in accepted.summary
    assert accepted.override_reason is not None


def test_clear_against_a_check_in_error_is_overridden() -> None:
    accepted = accept(SubmittedReport(Finding.CLEAR, "ok [Q1]", ["Q1"], "low"), [check(None)])
    assert accepted.finding_source is FindingSource.OVERRIDE
    assert accepted.override_reason == (
        "the agent reported Clear, but declared checks are authoritative and "
        "**no orphans** was in error (table missing)"
    )
    assert "evaluated" not in accepted.summary


def test_agent_findings_that_stand() -> None:
    clear = accept(SubmittedReport(Finding.CLEAR, "ok [Q1]", ["Q1"], "low"), [check(True)])
    assert (clear.finding, clear.finding_source) == (Finding.CLEAR, FindingSource.AGENT)
    attention = accept(
        SubmittedReport(Finding.NEEDS_ATTENTION, "bad [C1]", ["C1"], "high"), [check(False)]
    )
    assert (attention.finding, attention.finding_source) == (
        Finding.NEEDS_ATTENTION,
        FindingSource.AGENT,
    )
    assert attention.override_reason is None
