"""Deciding a finding from the declared checks, and writing it as Markdown.

The rule (README, "Not evaluated"): any check in error puts the run in
**error** — never Clear; otherwise any failed or not evaluated check gives
Needs attention (a check that could not look at any data is never a pass); all
passed gives Clear. A run in error whose other checks failed still carries
``needs_attention`` so a real problem is not hidden behind the error.
"""

from __future__ import annotations

from dataclasses import dataclass

from checks.declared import anomaly
from checks.declared.wording import describe_value
from checks.report import CheckOutcome, CheckResult, Finding, Status


@dataclass(frozen=True)
class Decision:
    """What the declared checks decide: status, finding (None when unknown), summary, error."""

    status: Status
    finding: Finding | None
    summary: str
    error: str | None


_MARKS = {
    CheckOutcome.PASSED: "passed",
    CheckOutcome.FAILED: "FAILED",
    CheckOutcome.NOT_EVALUATED: "NOT EVALUATED",
}


def _checks(n: int) -> str:
    """``1 check``, ``2 checks``."""
    return f"{n} check{'' if n == 1 else 's'}"


def check_line(check: CheckResult) -> str:
    """One Markdown bullet for a check, citing its evidence ids, then its lint warnings.

    ``- FAILED: **name** — 721 rows (expected empty) [C1]``; a typed check also
    cites its sample (``[C2, S2]``); a check in error says only why
    (``- ERROR: **name** — returned NULL [C1]``): it has no value to set
    against the expectation; a check not evaluated gives its reason
    (``- NOT EVALUATED: **name** — table refunds has 0 rows (expected == 0)``).
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


def decide_from_checks(checks: list[CheckResult], *, why: str | None = None) -> Decision:
    """Decide a run from its declared checks (the rule is in the module docstring).

    The summary names each not-evaluated check with its reason.

    Args:
        checks: at least one check result.
        why: one sentence saying why the checks decide although an LLM is
            configured (e.g. "the agent did not decide: …"), written into the
            summary; None when the checks are all there is (no LLM configured:
            ``finding_source`` says who decided, the summary need not).

    Raises:
        ValueError: ``checks`` is empty (a run with no checks cannot be decided here).
    """
    if not checks:
        raise ValueError("no declared checks to decide from")
    failed = [c for c in checks if c.outcome is CheckOutcome.FAILED]
    unseen = [c for c in checks if c.outcome is CheckOutcome.NOT_EVALUATED]
    errored = [c for c in checks if c.outcome is CheckOutcome.ERROR]
    finding = Finding.NEEDS_ATTENTION if failed or unseen else None
    problems = []
    if failed:
        problems.append(f"{len(failed)} failed")
    if unseen:
        problems.append(f"{len(unseen)} not evaluated")
    if errored:
        status = Status.ERROR
        head = f"**Error** — {len(errored)} of {_checks(len(checks))} in error"
        if problems:
            head += "; " + ", ".join(problems)
        error = "; ".join(f"check '{c.name}': {c.error}" for c in errored)
    elif problems:
        status, error = Status.COMPLETED, None
        head = f"**Needs attention** — {' and '.join(problems)} of {_checks(len(checks))}"
    else:
        status, finding, error = Status.COMPLETED, Finding.CLEAR, None
        head = "**Clear** — " + (
            "the check passed" if len(checks) == 1 else f"all {len(checks)} checks passed"
        )
    lines = [f"{head}.", ""]
    lines += [f"Not evaluated: **{c.name}** — {c.reason}." for c in unseen]
    if unseen:
        lines.append("")
    if why:
        lines += [f"Decided by the declared checks alone: {why}.", ""]
    lines += [check_line(c) for c in checks]
    return Decision(status, finding, "\n".join(lines), error)


def not_evaluated_lines(checks: list[CheckResult]) -> list[str]:
    """``name: reason`` for each check that was not evaluated, for alerts and overrides."""
    return [f"{c.name}: {c.reason}" for c in checks if c.outcome is CheckOutcome.NOT_EVALUATED]


def anomaly_lines(checks: list[CheckResult]) -> list[str]:
    """``name: value …, expected …, baseline …`` for each check that failed as an anomaly."""
    return [
        f"{c.name}: {anomaly.alert_text(c.anomaly, c.buckets.bucket if c.buckets else None)}"
        for c in checks
        if c.anomaly is not None and c.outcome is CheckOutcome.FAILED
    ]
