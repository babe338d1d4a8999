"""Deciding a finding from the declared checks, and writing it as Markdown.

The rule (README, "An automation"): any check in error puts the run in **error** — never Clear;
otherwise any failed check gives Needs attention; all passed gives Clear. A run
in error whose other checks failed still carries ``needs_attention`` so a real
problem is not hidden behind the error.
"""

from __future__ import annotations

from dataclasses import dataclass

from checks.report import CheckResult, Finding, Status, json_value


@dataclass(frozen=True)
class Decision:
    """What the declared checks decide: status, finding (None when unknown), summary, error."""

    status: Status
    finding: Finding | None
    summary: str
    error: str | None


def describe_value(check: CheckResult) -> str:
    """Return the check's value in words, e.g. ``722 rows`` or ``0.0245``."""
    if check.error is not None:
        return f"error: {check.error}"
    if check.expect in ("empty", "not empty"):
        return f"{check.value} row{'s' if check.value != 1 else ''}"
    return str(json_value(check.value))


def check_line(check: CheckResult) -> str:
    """One Markdown bullet for a check, citing its evidence id.

    ``- FAILED: **name** — 721 rows (expected empty) [C1]``; a check in error
    says only why (``- ERROR: **name** — returned NULL [C1]``): it has no value
    to set against the expectation.
    """
    cite = f" [{check.evidence_id}]" if check.evidence_id else ""
    if check.error is not None:
        return f"- ERROR: **{check.name}** — {check.error}{cite}"
    mark = "passed" if check.passed else "FAILED"
    return f"- {mark}: **{check.name}** — {describe_value(check)} (expected {check.expect}){cite}"


def decide_from_checks(checks: list[CheckResult], *, why: str | None = None) -> Decision:
    """Decide a run from its declared checks.

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
    failed = [c for c in checks if c.passed is False]
    errored = [c for c in checks if c.error is not None]
    finding = Finding.NEEDS_ATTENTION if failed else None
    if errored:
        status = Status.ERROR
        head = f"**Error** — {len(errored)} of {len(checks)} checks could not be evaluated"
        if failed:
            head += f"; {len(failed)} failed"
        error = "; ".join(f"check '{c.name}': {c.error}" for c in errored)
    elif failed:
        status, error = Status.COMPLETED, None
        head = f"**Needs attention** — {len(failed)} of {len(checks)} checks failed"
    else:
        status, finding, error = Status.COMPLETED, Finding.CLEAR, None
        head = f"**Clear** — all {len(checks)} checks passed"
    lines = [f"{head}.", ""]
    if why:
        lines += [f"Decided by the declared checks alone: {why}.", ""]
    lines += [check_line(c) for c in checks]
    return Decision(status, finding, "\n".join(lines), error)
