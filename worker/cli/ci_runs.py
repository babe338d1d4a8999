"""One run as the CI formats report it: its cases, and where its automation and checks are written.

``lookout run --junit`` (``worker.cli.junit``) and ``--format github``
(``worker.cli.github``) read the same cases, so both say the same thing:

- one case per declared check: passed, warned (a pass, its warning kept),
  failed, error, or not evaluated (a failure saying why: a check that could
  look at no data never passes);
- ``run``, an error, for a run in error that no check's error explains (an
  automation in error with no checks, a source that cannot be opened);
- ``goal``, skipped, for a goal-only run nobody could decide (no LLM);
- ``finding``, for a finding the agent or a pinned plan decided, and for a
  Needs attention that no failed case carries: a failure is never a pass.

They point at the automation's file and each check's line; the loader keeps
the places of every good automation (``LoadResult.place_of``). A problem that
kept an automation from running (a bad file with ``--all``, a source Lookout
cannot read) is a ``CiProblem``: an error at its line and column.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from checks.automation.load_result import LoadResult
from checks.automation.model import Automation
from checks.declared.wording import describe_value
from checks.errors import ConfigError
from checks.report import CheckOutcome, CheckResult, Finding, FindingSource, RunReport, Status


@dataclass(frozen=True)
class CiRun:
    """A run and its places.

    Attributes:
        report: the run's report.
        file: the automation's file, relative to the working directory when it is
            under it (GitHub resolves annotation paths from the repository's root,
            where a workflow runs), else as the loader read it.
        line: the automation's 1-based line in ``file``.
        check_lines: each declared check's 1-based line, by the check's name.
    """

    report: RunReport
    file: str
    line: int
    check_lines: dict[str, int] = field(default_factory=dict)

    def line_of(self, check: str | None) -> int:
        """The check's line, or the automation's when the check is unknown or None."""
        return self.check_lines.get(check, self.line) if check is not None else self.line


@dataclass(frozen=True)
class CiProblem:
    """A configuration problem that kept automations from running, where it is written.

    Attributes:
        file: the file (relative as ``CiRun.file``), ``""`` when unknown.
        line: its 1-based line, 1 when unknown.
        column: its 1-based column, 1 when unknown.
        message: the problem as ``lookout validate`` prints it (``path:line:column: field: …``).
    """

    file: str
    line: int
    column: int
    message: str


def ci_problem(error: ConfigError, cwd: Path | None = None) -> CiProblem:
    """The problem ``error`` says, at its place."""
    file = relative_path(error.path, cwd) if error.path else ""
    return CiProblem(file, error.line or 1, error.column or 1, error.location_message())


def ci_run(
    report: RunReport, automation: Automation, loaded: LoadResult, cwd: Path | None = None
) -> CiRun:
    """The run of ``automation`` with its file and the line of each of its checks."""
    lines = {
        check.name: loaded.place_of(automation, ("checks", i)).line
        for i, check in enumerate(automation.checks)
    }
    return CiRun(report, relative_path(automation.path, cwd), automation.line, lines)


def relative_path(path: str, cwd: Path | None = None) -> str:
    """``path`` relative to ``cwd`` (default the working directory) when under it, with ``/``."""
    here = (cwd or Path.cwd()).resolve()
    full = Path(path).resolve()
    try:
        return full.relative_to(here).as_posix()
    except ValueError:
        return path if os.sep == "/" else Path(path).as_posix()


Result = Literal["passed", "failure", "error", "skipped"]


@dataclass(frozen=True)
class CiCase:
    """One case of a run, as JUnit and GitHub report it.

    Attributes:
        name: the check's name, or ``run``, ``goal``, ``finding``.
        check: the check's name for a check's case, else None.
        result: ``passed`` (passed and warned), ``failure``, ``error`` or ``skipped``.
        kind: the outcome in Lookout's words (``failed``, ``not_evaluated``, ``warned``,
            ``error``, ``needs_attention``…): JUnit's ``type``.
        message: one line: what happened.
        details: the lines behind it: value, expectation, counts, evidence, SQL.
    """

    name: str
    check: str | None
    result: Result
    kind: str
    message: str
    details: list[str] = field(default_factory=list)


def check_case(check: CheckResult) -> CiCase:
    """A declared check's case (see the module)."""
    outcome = check.outcome
    details = [f"kind: {check.kind}", f"expected: {check.expect}"]
    if check.warn:
        details.append(f"warning level: {check.warn}")
    details += [f"{name}: {value}" for name, value in check.metrics.items()]
    details += [f"evidence: {i}" for i in (check.evidence_id, check.sample_id) if i]
    details += [f"lint: {w}" for w in check.warnings]
    if check.sql:
        details.append(f"sql: {check.sql.strip()}")
    if outcome is CheckOutcome.ERROR:
        return CiCase(
            check.name, check.name, "error", str(outcome), f"error: {check.error}", details
        )
    if outcome is CheckOutcome.NOT_EVALUATED:
        message = f"not evaluated: {check.reason} (expected {check.expect})"
        return CiCase(check.name, check.name, "failure", str(outcome), message, details)
    value = f"{describe_value(check)} (expected {check.expect})"
    if outcome is CheckOutcome.FAILED:
        return CiCase(check.name, check.name, "failure", str(outcome), f"failed: {value}", details)
    if outcome is CheckOutcome.WARNED:
        note = f"beyond the warning level {check.warn}" if check.warn else ""
        message = f"warned: {value}"  # the check's own reason says the level, once
        if note and note not in value:
            message += f", {note}"
        return CiCase(check.name, check.name, "passed", str(outcome), message, details)
    return CiCase(check.name, check.name, "passed", str(outcome), f"passed: {value}", details)


_DECIDED = (FindingSource.AGENT, FindingSource.PINNED)


def run_cases(report: RunReport) -> list[CiCase]:
    """Every case of a run, its checks' first (see the module)."""
    cases = [check_case(c) for c in report.checks]
    if report.status == Status.ERROR and not any(c.result == "error" for c in cases):
        why = report.error or "the run ended in error"
        cases.append(CiCase("run", None, "error", "error", f"error: {_first(why)}", [why]))
    if report.status == Status.SKIPPED:
        why = report.error or "nobody could decide the goal"
        cases.append(CiCase("goal", None, "skipped", "skipped", f"skipped: {_first(why)}"))
    failed = any(c.result in ("failure", "error") for c in cases)
    attention = report.finding == Finding.NEEDS_ATTENTION
    if report.finding_source in _DECIDED or (attention and not failed):
        summary = report.summary.strip().splitlines()
        head = next((line for line in summary if line.strip()), str(report.finding))
        by = str(report.finding_source or "checks")
        if attention:
            message = f"needs attention ({by}): {head}"
            cases.append(CiCase("finding", None, "failure", "needs_attention", message, summary))
        else:
            cases.append(CiCase("finding", None, "passed", "clear", f"clear ({by}): {head}"))
    return cases


def _first(text: str) -> str:
    """The first line of a text that has several."""
    return text.strip().splitlines()[0] if text.strip() else text
