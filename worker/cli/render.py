"""Human-readable reports for the terminal.

All report text is untrusted: it is never read as Rich markup, and control
characters (ESC, so no terminal escape sequence; BEL; C1 controls) and
bidirectional overrides are shown as visible symbols by ``clean`` /
``SafeConsole``, one character for one, so styled spans stay in place.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from checks.report import Finding, RunReport, Status

# C0 controls but newline and tab → Unicode "control pictures" (U+2400…); DEL → U+2421;
# C1 controls and bidi overrides/isolates → U+FFFD. Same length, so spans stay valid.
_SAFE = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)}
_SAFE |= {0x7F: 0x2421}
_SAFE |= {c: 0xFFFD for c in (*range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def clean(value: object) -> str:
    """Return ``str(value)`` with control characters replaced by visible symbols."""
    return str(value).translate(_SAFE)


class SafeConsole(Console):
    """A Rich console that cleans every string and ``Text`` it prints (see ``clean``)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: D102 - see class
        safe: list[Any] = []
        for obj in objects:
            if isinstance(obj, str):
                obj = clean(obj)
            elif isinstance(obj, Text):
                obj = obj.copy()
                obj.plain = clean(obj.plain)
            safe.append(obj)
        super().print(*safe, **kwargs)


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


def print_runs(
    console: Console, runs: list[RunReport], *, alerts: dict[int, str | None] | None = None
) -> None:
    """Print a table of runs, newest first.

    ``note`` says why a run was skipped or failed, then how its alerts went
    (``alerts``: run id → ``worker.alerts.delivery_log.summarize`` line), so a failed
    delivery is never silent.
    """
    table = Table(
        "run",
        "automation",
        "scheduled for (UTC)",
        "status",
        "finding",
        "started",
        "finished",
        "note",
    )
    for r in runs:
        note = (r.error or "").splitlines()[0] if r.error else ""
        alert = (alerts or {}).get(r.run_id or 0)
        note = "; ".join(part for part in (note, alert) if part)
        table.add_row(
            str(r.run_id),
            Text(clean(r.automation)),
            r.scheduled_for.strftime("%Y-%m-%d %H:%M:%S"),
            str(r.status),
            str(r.finding or ""),
            r.started_at.strftime("%H:%M:%S") if r.started_at else "",
            r.finished_at.strftime("%H:%M:%S") if r.finished_at else "",
            Text(clean(note if len(note) <= 120 else note[:119] + "…")),
        )
    console.print(table)
    if not runs:
        console.print("no runs stored yet: try 'lookout run --all'", markup=False)
