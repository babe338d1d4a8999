"""What ``lookout run`` writes for CI: JUnit XML (``--junit``), GitHub Actions commands.

Loaded inside the ``run`` command's body, so ``lookout --help`` never imports
it; the JUnit and GitHub writers load only when asked for.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from checks.errors import ConfigError
from checks.report import RunReport
from worker.cli.output import err, out

if TYPE_CHECKING:
    from checks.automation.load_result import LoadResult
    from checks.automation.model import Automation
    from worker.cli.ci_runs import CiProblem, CiRun


def commands_stopped() -> contextlib.AbstractContextManager[str]:
    """Standard output between ``::stop-commands::TOKEN`` and ``::TOKEN::`` (see ``github``)."""
    from worker.cli.github import commands_stopped as stopped

    return stopped(out.file)


def ci_runs(
    loaded: LoadResult,
    chosen: list[Automation],
    reports: list[RunReport],
    problems: list[ConfigError],
) -> tuple[list[CiRun], list[CiProblem]]:
    """The runs with their places, and the problems, as the CI formats report them.

    ``reports[i]`` is the run of ``chosen[i]``; ``ValueError`` when their lengths differ.
    """
    from worker.cli.ci_runs import ci_problem, ci_run

    runs = [ci_run(r, a, loaded) for r, a in zip(reports, chosen, strict=True)]
    return runs, [ci_problem(p) for p in problems]


def write_junit(runs: tuple[list[CiRun], list[CiProblem]], junit: Path) -> None:
    """Write the runs and problems as JUnit XML to ``junit``; say how many suites it holds.

    Raises ``ConfigError`` naming the file when it cannot be written.
    """
    from worker.cli.junit import junit_xml

    try:
        junit.write_bytes(junit_xml(*runs))
    except OSError as error:
        raise ConfigError(f"--junit: cannot write {junit}: {error.strerror}") from None
    suites = len(runs[0]) + (1 if runs[1] else 0)  # the configuration suite, and one per run
    noun = "test suite" if suites == 1 else "test suites"
    err.print(Text(f"junit: {suites} {noun} written to {junit}", style="dim"))


def print_workflow_commands(runs: tuple[list[CiRun], list[CiProblem]]) -> None:
    """Write the runs' GitHub Actions workflow commands to standard output, one a line."""
    from worker.cli.github import workflow_commands

    for line in workflow_commands(*runs):
        out.file.write(line + "\n")  # one command per line, never wrapped
    out.file.flush()
