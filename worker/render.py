"""Human-readable reports for the terminal. All report text is untrusted: never markup."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from checks.report import Finding, RunReport, Status

_FINDING_STYLE = {
    Finding.CLEAR: ("Clear", "green"),
    Finding.NEEDS_ATTENTION: ("Needs attention", "red"),
}


def headline(report: RunReport) -> Text:
    """``name — Clear (decided by checks) · run 12 · 2026-11-30 06:15 UTC`` as styled text."""
    text = Text()
    text.append(report.automation, style="bold")
    text.append(" — ")
    if report.status == Status.COMPLETED and report.finding:
        label, style = _FINDING_STYLE[report.finding]
        text.append(label, style=f"bold {style}")
        text.append(f" (decided by {report.finding_source})")
    else:
        text.append(str(report.status).capitalize(), style="bold yellow")
    when = report.scheduled_for.strftime("%Y-%m-%d %H:%M UTC")
    text.append(f" · run {report.run_id} · {when}", style="dim")
    return text


def print_report(console: Console, report: RunReport) -> None:
    """Print one run: headline, summary, error, and the evidence queries' sizes."""
    console.print(headline(report))
    if report.summary:
        console.print(Text(report.summary))
    if report.error and report.status != Status.SKIPPED:
        console.print(Text(f"error: {report.error}", style="red"))
    if report.agent:
        console.print(Text(agent_line(report.agent), style="dim"))
    for ev in report.evidence:
        more = " (sample; truncated)" if ev.truncated else ""
        rows = f"{ev.row_count} row" + ("" if ev.row_count == 1 else "s")
        console.print(Text(f"  [{ev.id}] {rows}{more}", style="dim"))
        if ev.rows:
            console.print(Text("      " + " | ".join(ev.columns), style="dim"))
            for row in ev.rows[:3]:
                console.print(Text("      " + " | ".join(str(v) for v in row), style="dim"))
    console.print()


def agent_line(agent: dict[str, Any]) -> str:
    """``agent: gpt-x · 4 steps · 6 tool calls · 5,120 in / 300 out tokens · $0.0031``."""
    cost = agent.get("cost_usd")
    parts = [
        f"agent: {agent.get('model')}",
        f"{agent.get('steps', 0)} steps",
        f"{agent.get('tool_calls', 0)} tool calls",
        f"{agent.get('input_tokens', 0):,} in / {agent.get('output_tokens', 0):,} out tokens",
        f"${cost:.4f}" if isinstance(cost, int | float) else "cost unknown",
    ]
    return " · ".join(parts)


def print_runs(console: Console, runs: list[RunReport]) -> None:
    """Print a table of runs, newest first."""
    table = Table(
        "run", "automation", "scheduled for (UTC)", "status", "finding", "started", "finished"
    )
    for r in runs:
        table.add_row(
            str(r.run_id),
            Text(r.automation),
            r.scheduled_for.strftime("%Y-%m-%d %H:%M:%S"),
            str(r.status),
            str(r.finding or ""),
            r.started_at.strftime("%H:%M:%S") if r.started_at else "",
            r.finished_at.strftime("%H:%M:%S") if r.finished_at else "",
        )
    console.print(table)
    if not runs:
        console.print("no runs stored yet: try 'lookout run --all'", markup=False)
