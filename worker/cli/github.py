"""Runs as GitHub Actions annotations (``lookout run --format github``).

Each case that did not pass (``worker.cli.ci_runs.run_cases``) is one workflow
command on its own line, ``::error file=F,line=N,title=T::MESSAGE``, and a
warned check ``::warning …``; GitHub shows them on the run's summary and on the
automation file's line in a pull request's diff. The syntax is GitHub's
"Workflow commands for GitHub Actions"
(https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions,
"Setting an error message"), and the escaping that of its toolkit, which the
runner reverses (``escapeData`` and ``escapeProperty`` in
https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts):
in the message ``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``; in a property
also ``:`` → ``%3A`` and ``,`` → ``%2C``. A check's name, a value or a
summary therefore cannot end the command early or start another one; the other
control characters (a terminal's escape sequences among them) become U+FFFD.

Everything else the run prints (its reports, which quote data) is written
between ``::stop-commands::TOKEN`` and ``::TOKEN::`` (``commands_stopped``),
GitHub's mechanism for output it must not read as commands ("Stopping and
starting workflow commands" on the same page), with a fresh random token per
run, so no value can guess it and start the commands again.
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Iterator, Sequence
from typing import IO

from worker.cli.ci_runs import CiProblem, CiRun, run_cases

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def escape_data(text: str) -> str:
    """A command's message escaped as the toolkit's ``escapeData`` does (see the module)."""
    text = _CONTROL.sub("\ufffd", text)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value escaped as the toolkit's ``escapeProperty`` does."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, properties: dict[str, str]) -> str:
    """One workflow command: ``::name k=v,k=v::message``, every part escaped."""
    props = ",".join(f"{k}={escape_property(v)}" for k, v in properties.items())
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


@contextlib.contextmanager
def commands_stopped(file: IO[str]) -> Iterator[str]:
    """Write ``::stop-commands::TOKEN`` to ``file``, and ``::TOKEN::`` when the block ends.

    The token is 32 random hex digits (``secrets.token_hex``), fresh each
    time, and yielded; the commands start again however the block ends.
    """
    token = secrets.token_hex(16)
    file.write(f"::stop-commands::{token}\n")
    file.flush()
    try:
        yield token
    finally:
        file.write(f"::{token}::\n")
        file.flush()


def workflow_commands(runs: Sequence[CiRun], problems: Sequence[CiProblem] = ()) -> list[str]:
    """One ``::error`` per case failed or in error and one ``::warning`` per warned check.

    Each points at the automation's file and the check's line (the automation's
    for a run's own case); its title is ``automation: case``. Each problem
    comes first, an ``::error`` at its line and column titled ``configuration``.
    """
    lines = []
    for problem in problems:
        where = {"file": problem.file, "line": str(problem.line), "col": str(problem.column)}
        if not problem.file:
            where = {}
        lines.append(command("error", problem.message, {**where, "title": "configuration"}))
    for run in runs:
        for case in run_cases(run.report):
            if case.result in ("failure", "error"):
                name = "error"
            elif case.kind == "warned":
                name = "warning"
            else:
                continue
            properties = {
                "file": run.file,
                "line": str(run.line_of(case.check)),
                "title": f"{run.report.automation}: {case.name}",
            }
            lines.append(command(name, case.message, properties))
    return lines
