"""What is wrong with a report, in one line, for the list.

Read from what the run stored, in this order:

- a run in error: its first check in error, ``name: error: reason``; else the
  run's own error, ``error: reason`` (a timeout, a source that could not be read);
- a Needs attention run: its first failed or not-evaluated check (by position),
  ``name: 721 rows (expected empty)`` or ``name: not evaluated: 0 rows in scope: …``
  (the words of ``checks.declared.wording``); else, when the agent decided
  without a failing declared check, the first paragraph of its summary as
  plain text (Markdown marks dropped, link texts kept);
- a skipped run: ``skipped: reason``;
- a Clear run with checks beyond their ``warn:`` level: its first,
  ``warning: name: 3 of 100 rows missing (3.00 %); beyond the warning level
  <= 1% (expected <= 5%)``;
- any other Clear run: None.

When more checks have problems, `` (+N more)`` follows. The line is cut to
``MAX_CHARS``. It is untrusted text (check names, data values, model output):
the page escapes it like any other value.
"""

from __future__ import annotations

from collections.abc import Sequence

from markdown_it import MarkdownIt

from checks.declared.wording import describe_value
from checks.report import CheckOutcome, CheckResult, Finding, Status

MAX_CHARS = 240
"""The longest line shown; longer ones end with ``…``."""

_SUMMARY_CHARS = 4000  # of the summary parsed for its first paragraph
_PROBLEMS = (CheckOutcome.FAILED, CheckOutcome.NOT_EVALUATED)
_markdown = MarkdownIt("commonmark", {"html": False})


def _cut(text: str, room: int) -> str:
    line = " ".join(text.split())  # one line: newlines and runs of spaces become one space
    return line if len(line) <= room else line[: room - 1].rstrip() + "…"


def check_words(check: CheckResult) -> str:
    """One check's problem, e.g. ``name: 721 rows (expected empty)``, ``name: error: …``."""
    if check.outcome in (CheckOutcome.ERROR, CheckOutcome.NOT_EVALUATED):
        return f"{check.name}: {describe_value(check)}"
    return f"{check.name}: {describe_value(check)} (expected {check.expect})"


def first_paragraph(summary: str) -> str:
    """The summary's first paragraph (or heading) as plain text; ``""`` when it has none."""
    tokens = _markdown.parse(summary[:_SUMMARY_CHARS])
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        parts: list[str] = []
        for child in token.children:
            if child.type in ("text", "code_inline", "html_inline"):
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append(" ")
            elif child.type == "image":
                parts.append(child.content or "")
        text = "".join(parts).strip()
        if text:
            return text
    return ""


def what_is_wrong(
    status: str,
    finding: str | None,
    error: str | None,
    summary: str,
    checks: Sequence[CheckResult],
) -> str | None:
    """The report's problem in one line (the rules are in the module docstring), or None.

    Args:
        status: the run's status.
        finding: its finding, or None.
        error: the run's error, or None.
        summary: the report's summary (Markdown).
        checks: its declared checks in order; passed ones may be left out.
    """
    errored = [c for c in checks if c.outcome is CheckOutcome.ERROR]
    problems = [c for c in checks if c.outcome in _PROBLEMS]
    if status == Status.ERROR:
        if errored:
            line = check_words(errored[0])
            rest = len(errored) + len(problems) - 1
        else:
            line = f"error: {error or 'the run ended in error'}"
            rest = len(problems)
    elif status == Status.COMPLETED and finding == Finding.NEEDS_ATTENTION:
        if problems:
            line, rest = check_words(problems[0]), len(problems) - 1
        else:
            line, rest = first_paragraph(summary) or "needs attention", 0
    elif status == Status.SKIPPED:
        line, rest = f"skipped: {error or 'no reason given'}", 0
    elif warned := [c for c in checks if c.outcome is CheckOutcome.WARNED]:
        line, rest = f"warning: {check_words(warned[0])}", len(warned) - 1
    else:
        return None
    more = f" (+{rest} more)" if rest else ""
    return _cut(line, MAX_CHARS - len(more)) + more
