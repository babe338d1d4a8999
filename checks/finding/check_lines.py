"""The declared checks in words: one Markdown line each, and the lines alerts carry."""

from __future__ import annotations

from collections.abc import Sequence

from checks.declared import anomaly
from checks.declared.wording import describe_value
from checks.report import CheckOutcome, CheckResult

_MARKS = {
    CheckOutcome.PASSED: "passed",
    CheckOutcome.WARNED: "WARNED",
    CheckOutcome.FAILED: "FAILED",
    CheckOutcome.NOT_EVALUATED: "NOT EVALUATED",
}


def check_line(check: CheckResult) -> str:
    """One Markdown bullet for a check, citing its evidence ids, then its lint warnings.

    ``- FAILED: **name** — 721 rows (expected empty) [C1]``; a typed check also
    cites its sample (``[C2, S2]``); a check in error says only why
    (``- ERROR: **name** — returned NULL [C1]``): it has no value to set
    against the expectation; a check not evaluated gives its reason
    (``- NOT EVALUATED: **name** — table refunds has 0 rows (expected == 0)``);
    a warned check names its level (``- WARNED: **emails** — 3 of 100 rows
    missing (3.00 %); beyond the warning level <= 1% (expected <= 5%) [C1]``).
    """
    ids = [i for i in (check.evidence_id, check.sample_id) if i]
    cite = f" [{', '.join(ids)}]" if ids else ""
    if check.outcome is CheckOutcome.ERROR:
        line = f"- ERROR: **{check.name}** — {check.error}{cite}"
    elif check.outcome is CheckOutcome.NOT_EVALUATED:  # the mark says it: the reason follows
        line = f"- NOT EVALUATED: **{check.name}** — {check.reason} (expected {check.expect}){cite}"
    else:
        mark = _MARKS[check.outcome or CheckOutcome.FAILED]
        line = (
            f"- {mark}: **{check.name}** — {describe_value(check)} (expected {check.expect}){cite}"
        )
    for warning in check.warnings:
        line += f"\n  - warning: {warning}"
    return line


def declared_lines(checks: Sequence[CheckResult]) -> str:
    """``Declared checks:`` and one line per check, for a summary decided by the agent or a plan.

    Empty when there are no checks; else it starts with a blank line, to follow a paragraph.
    """
    if not checks:
        return ""
    return "\n\nDeclared checks:\n" + "\n".join(check_line(c) for c in checks)


def warned_lines(checks: Sequence[CheckResult]) -> list[str]:
    """``name: value, beyond the warning level …`` for each warned check, for alerts."""
    return [
        f"{c.name}: {describe_value(c)} (expected {c.expect})"
        for c in checks
        if c.outcome is CheckOutcome.WARNED
    ]


def not_evaluated_lines(checks: Sequence[CheckResult]) -> list[str]:
    """``name: reason`` for each check that was not evaluated, for alerts and overrides."""
    return [f"{c.name}: {c.reason}" for c in checks if c.outcome is CheckOutcome.NOT_EVALUATED]


def anomaly_lines(checks: Sequence[CheckResult]) -> list[str]:
    """``name: value …, expected …, baseline …`` for each check that failed as an anomaly."""
    return [
        f"{c.name}: {anomaly.alert_text(c.anomaly, c.buckets.bucket if c.buckets else None)}"
        for c in checks
        if c.anomaly is not None and c.outcome is CheckOutcome.FAILED
    ]
