"""The finding the declared checks give alone, and the ``Decision`` every finding is.

The checks' rule (README, "Not evaluated"): any check in error puts the run in
**error** — never Clear; otherwise any failed or not evaluated check gives
Needs attention (a check that could not look at any data is never a pass); all
passed gives Clear. A ``warned`` check held its expectation: it counts as
passed, and the summary's first line says how many warnings and on which
checks. A run in error whose other checks failed still carries
``needs_attention`` so a real problem is not hidden behind the error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from checks.finding.check_lines import check_line
from checks.finding.override import AcceptedReport
from checks.report import CheckOutcome, CheckResult, Finding, FindingSource, Status


@dataclass(frozen=True)
class Decision:
    """How a run ends: what ``RunReport`` gets for its status, finding and summary.

    Attributes:
        status: ``completed``, ``error`` or ``skipped``.
        finding: None when nothing could decide it.
        summary: the report's Markdown summary.
        error: the run's error message, or None.
        finding_source: who decided the finding (None without a finding).
        accepted: the agent's report as it stands (overridden or not), when
            the agent's report decided; it is what a new pinned plan keeps.
    """

    status: Status
    finding: Finding | None
    summary: str
    error: str | None
    finding_source: FindingSource | None = None
    accepted: AcceptedReport | None = None


def _checks(n: int) -> str:
    """``1 check``, ``2 checks``."""
    return f"{n} check{'' if n == 1 else 's'}"


def errors_text(checks: Sequence[CheckResult]) -> str | None:
    """``check 'name': why; …`` for each check in error, or None when none is."""
    errored = [c for c in checks if c.outcome is CheckOutcome.ERROR]
    return "; ".join(f"check '{c.name}': {c.error}" for c in errored) or None


def _warning_note(checks: Sequence[CheckResult]) -> str:
    """``; 1 warning (on **emails**)`` when checks broke their ``warn:`` level, else ``""``."""
    warned = [c for c in checks if c.outcome is CheckOutcome.WARNED]
    if not warned:
        return ""
    names = ", ".join(f"**{c.name}**" for c in warned)
    return f"; {len(warned)} warning{'' if len(warned) == 1 else 's'} (on {names})"


def _lint_note(checks: Sequence[CheckResult]) -> str:
    """``; 1 lint warning (on **nulls**)`` when checks' SQL drew lint warnings, else ``""``.

    A check may pass on a query the lint says can mislead (``NOT IN`` over a
    NULL): the summary's first line says so, not only the check's own line.
    """
    warned = [c for c in checks if c.warnings]
    if not warned:
        return ""
    count = sum(len(c.warnings) for c in warned)
    names = ", ".join(f"**{c.name}**" for c in warned)
    return f"; {count} lint warning{'' if count == 1 else 's'} (on {names})"


def decide_from_checks(checks: Sequence[CheckResult], *, why: str | None = None) -> Decision:
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
        error = errors_text(checks)
    elif problems:
        status, error = Status.COMPLETED, None
        head = f"**Needs attention** — {' and '.join(problems)} of {_checks(len(checks))}"
    else:
        status, finding, error = Status.COMPLETED, Finding.CLEAR, None
        head = "**Clear** — " + (
            "the check passed" if len(checks) == 1 else f"all {len(checks)} checks passed"
        )
    head += _warning_note(checks) + _lint_note(checks)
    lines = [f"{head}.", ""]
    lines += [f"Not evaluated: **{c.name}** — {c.reason}." for c in unseen]
    if unseen:
        lines.append("")
    if why:
        lines += [f"Decided by the declared checks alone: {why}.", ""]
    lines += [check_line(c) for c in checks]
    source = FindingSource.CHECKS if finding else None
    return Decision(status, finding, "\n".join(lines), error, source)
