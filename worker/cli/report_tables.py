"""The tables under a report on the terminal: its failing segments and its evidence samples.

Part of ``worker.cli.render``'s ``print_report``, which loads this module when it
first prints a report (never for ``lookout --help``). Every value is data: one
line of plain text per cell (``worker.cli.safe_text.one_line``), never markup,
in a ``worker.cli.layout.Grid`` that never cuts a name at any width.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from checks.report import Evidence, RunReport
from worker.cli.layout import Column, Grid
from worker.cli.safe_text import clean, one_line, wrap_text

SAMPLE_ROWS = 3
"""Rows of an evidence sample printed under a report (``show --json`` has all stored)."""


def print_failed_segments(console: Console, report: RunReport) -> None:
    """Every failing segment of each segmented check: its values, value and rows in scope.

    The summary names the first few; here they are all. Segment values
    are data: printed as plain text on one line (``one_line``), never as markup.
    """
    from checks.declared.wording import segment_words  # sqlglot: not for --help

    for check in report.checks:
        failed = check.segments.failed if check.segments else []
        if not failed or check.segments is None:
            continue
        by = ", ".join(check.segments.by)
        console.print(Text(one_line(f"  {check.name}: failing segments by {by}"), style="dim"))
        grid = Grid([Column(name) for name in (*check.segments.by, "measured")])
        for segment in failed:
            cells = [_cell(segment.values.get(name)) for name in check.segments.by]
            grid.add_row(*cells, _cell(segment_words(check, segment)))
        grid.print(console, indent=6)


def worth_showing(report: RunReport, ev: Evidence) -> bool:
    """A check's evidence adds nothing when empty, or when it is the value the summary gives."""
    if ev.origin != "check":
        return True
    if ev.row_count == 0:
        return False
    check = next((c for c in report.checks if c.evidence_id == ev.id), None)
    lists_rows = check is None or check.expect in ("empty", "not empty")
    return lists_rows or not (ev.row_count == 1 and len(ev.columns) == 1)


def _cell(value: Any) -> Text:
    """A table cell: the value on one line as plain text; None as a dim ``NULL``."""
    if value is None:
        return Text("NULL", style="dim italic")
    return Text(one_line(value))


def print_evidence(console: Console, report: RunReport, ev: Evidence, *, full: bool) -> None:
    """One evidence query: ``[C1] 12 rows, first 3 shown (…)``, its SQL if ``full``, its sample.

    The sample is the first ``SAMPLE_ROWS`` stored rows as a ``Grid``; each
    value is data, printed on one line as plain text (``NULL`` for None).
    """
    rows = f"{ev.row_count:,} row" + ("" if ev.row_count == 1 else "s")
    if not ev.row_count_exact:  # the scan stopped at limits.fingerprint_max_rows
        rows = f"at least {rows}"
    shown = ev.rows[:SAMPLE_ROWS]
    note = ""
    if ev.row_count > len(shown):
        stored = len(ev.rows)
        note = f", first {len(shown)} shown (lookout show {report.run_id} --json has {stored})"
    console.print(Text(f"  [{ev.id}] {rows}{note}", style="dim"))
    if full:
        sql = Text(clean(ev.sql.strip()), style="dim")
        for line in wrap_text(console, sql, max(1, console.width - 6)):
            console.print(Text("      ") + line, soft_wrap=True)
    if shown and ev.columns:
        grid = Grid([Column(name) for name in ev.columns])
        for row in shown:
            grid.add_row(*(_cell(v) for v in row))
        grid.print(console, indent=6)
