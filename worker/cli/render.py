"""Human-readable reports for the terminal.

All report text is untrusted (``worker.cli.safe_text``): summaries are
rendered from Markdown by ``SafeMarkdown``, every other value is printed as
cleaned ``Text``, never as Rich markup. Tables are ``worker.cli.layout.Grid``,
which never cuts a name at any width.

What ``lookout run`` prints: once, what decides the runs (``decider_line``);
then one block per run (``print_report``), each problem said once, its tables
last (``worker.cli.report_tables``); then a totals line (``totals_line``). A
run's duration is written one way everywhere (``worker.cli.durations``:
``12 ms``, ``3.2 s``, ``2 min 05 s``), and no line parts a value from its unit
(``worker.cli.no_break``).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from checks.agent.result import cost_text
from checks.opinion.row_diff import change_lines
from checks.report import Finding, RunReport, Status
from checks.sources.scan import scanned_words
from worker.cli.durations import duration_text
from worker.cli.layout import Column, Grid
from worker.cli.safe_text import SafeConsole, clean, one_line, print_markdown, wrap_text

if TYPE_CHECKING:  # the loader and the settings (pydantic) load only for the commands using them
    from checks.automation.loader import LoadResult
    from checks.settings.config import Settings
    from worker.review.history import CheckHistory

__all__ = [
    "SafeConsole",
    "agent_line",
    "clean",
    "decider_line",
    "headline",
    "pinning_lines",
    "print_load_problems",
    "print_report",
    "print_runs",
    "result_label",
    "totals_line",
    "usual_decider",
]

_FINDING_STYLE = {
    Finding.CLEAR: ("Clear", "green"),
    Finding.NEEDS_ATTENTION: ("Needs attention", "red"),
}


def print_load_problems(
    console: Console,
    loaded: LoadResult,
    names: list[str] | None,
    *,
    validate: str = "lookout validate",
) -> None:
    """Print the automation files' problems: all of them, or only those of ``names``.

    With ``names``, the problems of other automations are one line with their
    count, pointing at ``validate`` (the command that checks the same folder):
    a bad file elsewhere in the folder does not bury the run asked for.
    """
    mine = [p for p in loaded.errors if names is None or p.concerns(names)]
    for problem in mine:
        console.print(f"error: {problem.location_message()}")
    others = [p for p in loaded.errors if p not in mine]
    if others:
        files = len({p.path for p in others})
        console.print(
            f"note: {_count(len(others), 'problem')} in {_count(files, 'other file')}; "
            f"'{validate}' lists them"
        )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def result_label(report: RunReport) -> Text:
    """``Clear``, ``Needs attention``, or the status (``Skipped``, ``Error``…), styled."""
    if report.status == Status.COMPLETED and report.finding:
        label, style = _FINDING_STYLE[report.finding]
        return Text(label, style=f"bold {style}")
    return Text(str(report.status).capitalize(), style="bold yellow")


def headline(report: RunReport, *, usual_decider: str | None = None) -> Text:
    """``name — Clear (decided by checks) · run 12 · 2026-11-30 06:15 UTC`` as styled text.

    ``(decided by …)`` is left out when it is ``usual_decider``: what the
    invocation already said decides its runs (``decider_line``).
    """
    text = Text()
    text.append(one_line(report.automation), style="bold")
    text.append(" — ")
    text.append_text(result_label(report))
    source = report.finding_source
    if report.status == Status.COMPLETED and source and source != usual_decider:
        text.append(f" (decided by {source})")
    when = report.scheduled_for.strftime("%Y-%m-%d %H:%M UTC")
    text.append(f" · run {report.run_id} · {when}", style="dim")
    return text


def usual_decider(settings: Settings) -> str:
    """Who decides a run with these settings when nothing goes wrong: ``agent`` or ``checks``."""
    return "agent" if settings.llm.base_url and settings.llm.model else "checks"


def decider_line(settings: Settings, *, fresh: bool = False) -> str:
    """Say once what decides the runs of this invocation, true of each of them.

    The agent, or without an LLM the declared checks; before either, an
    automation's pinned plan whose evidence holds (the README's "Pinned
    plans"), unless ``llm.pin_plans`` is off or ``fresh`` (``--fresh``) sets
    the plans aside. A goal-only automation with no LLM is skipped unless its
    plan decides.
    """
    pinned = settings.llm.pin_plans and not fresh
    if usual_decider(settings) == "agent":
        from checks.settings.config import redact

        where = redact(settings.llm.base_url or "", settings.secrets())
        model = f"({settings.llm.model} at {where})"
        if pinned:
            return (
                f"A pinned plan whose evidence holds decides a run, else the agent does {model}; "
                "a Clear never stands against a failed declared check, and the checks decide "
                "when the agent gives no valid report."
            )
        return (
            f"The agent decides each run {model}; a Clear never stands against a failed "
            "declared check, and the checks decide when it gives no valid report."
        )
    if pinned:
        return (
            "No LLM is configured: a pinned plan whose evidence holds decides a run, else the "
            "declared checks do; a goal-only automation with no such plan is skipped."
        )
    return (
        "No LLM is configured: the declared checks decide each run, and goal-only "
        "automations are skipped."
    )


def print_report(
    console: Console,
    report: RunReport,
    *,
    full: bool = False,
    usual_decider: str | None = None,
    histories: Sequence[CheckHistory] = (),
) -> None:
    """Print one run: headline, summary, error unless said, agent, history, row changes, evidence.

    Each query whose rows changed since its previous completed run gets one
    line (``checks.opinion.row_diff``), naming that run once: "C1: 3 new rows
    since run 12 (N724MQ, N725MQ, …); 1 gone (N100AA)".

    Args:
        console: where to print (a ``SafeConsole``).
        report: the run.
        full: print every evidence query with its SQL (``lookout show``); else only
            the samples the summary does not already hold (a check's single value,
            an empty result).
        usual_decider: what the invocation said decides its runs (see ``headline``).
        histories: each check's value over the last runs, printed as one sparkline
            each (``worker.cli.sparkline``; ``lookout show``).
    """
    from worker.cli.report_tables import print_evidence, print_failed_segments, worth_showing

    _print_whole(console, headline(report, usual_decider=usual_decider))
    if report.summary:
        print_markdown(console, report.summary)
    if report.error and report.status != Status.SKIPPED and not _said(report):
        _print_whole(console, Text(f"error: {clean(report.error)}", style="red"))
    if report.agent:
        _print_whole(console, Text(agent_line(report.agent), style="dim"))
    if report.pinning:
        for line in pinning_lines(report.pinning):
            _print_whole(console, Text(one_line(line), style="dim"))
    read = scanned_words(report.scanned)
    if read is not None:
        _print_whole(console, Text(f"queries {read}", style="dim"))
    if report.second_opinion and report.second_opinion.get("backend") not in (None, "none"):
        _print_whole(console, Text(opinion_line(report.second_opinion), style="dim"))
    if histories:
        from worker.cli.sparkline import print_histories

        print_histories(console, histories)
    for line in change_lines(report.second_opinion, name_run=True):
        _print_whole(console, Text(one_line(line)))  # data values: one line, never markup
    print_failed_segments(console, report)
    for ev in report.evidence:
        if full or worth_showing(report, ev):
            print_evidence(console, report, ev, full=full)
    console.print()


def _print_whole(console: Console, text: Text) -> None:
    """Print ``text`` cleaned, wrapped to the console's width, no value parted from its unit.

    Cleaned before it is wrapped: a control character is measured as the one-cell
    symbol it is printed as.
    """
    safe = text.copy()
    safe.plain = clean(safe.plain)
    console.print(Text("\n").join(wrap_text(console, safe, console.width)), soft_wrap=True)


def _said(report: RunReport) -> bool:
    """Whether the summary already says the run's error (each check's, or the whole of it)."""
    errors = [c.error for c in report.checks if c.error]
    error = report.error or ""
    if errors:
        return all(e in report.summary for e in errors)
    return error.splitlines()[0] in report.summary if error else True


def _pct(value: Any) -> str:
    return f"{value:.0%}" if isinstance(value, int | float) else "no answer"


def opinion_line(opinion: dict[str, Any]) -> str:
    """``second opinion: systemone jev · goal met 90% (30% calibrated on 20 reviews) · …``.

    Raw answers first; a recalibrated one follows in brackets with the number
    of reviews it was fitted on.
    """
    calibrated = opinion.get("calibrated") or {}

    def beside(question: str) -> str:
        item = calibrated.get(question)
        if not isinstance(item, dict):
            return ""
        reviews = item.get("reviews")
        return f" ({_pct(item.get('p'))} calibrated on {reviews} review{'s' * (reviews != 1)})"

    name = " ".join(str(v) for v in (opinion.get("backend"), opinion.get("model")) if v)
    parts = [f"second opinion: {name}", f"goal met {_pct(opinion.get('goal_met'))}"]
    parts[-1] += beside("goal_met")
    if opinion.get("same_as_last_run") is not None:
        parts.append(f"same as last run {_pct(opinion['same_as_last_run'])}")
    if opinion.get("urgency"):
        parts.append(f"urgency {str(opinion['urgency']).replace('_', ' ')}")
        act = calibrated.get("act")
        if isinstance(act, dict):
            parts.append(f"act soon or now {_pct(act.get('raw'))}" + beside("act"))
    flags = opinion.get("flags") or []
    parts.append("flags: " + (", ".join(f.replace("_", " ") for f in flags) or "none"))
    if opinion.get("error"):
        parts.append(clean(opinion["error"]))
    return " · ".join(parts)


def agent_line(agent: dict[str, Any]) -> str:
    """``agent: gpt-x · 4 steps · 6 tool calls · 5,120 in / 300 out tokens · $0.0031``.

    With no completed model call there is no cost to give: the line says so
    rather than ``$0.0000``. A cost the provider did not send and no price
    table gives is ``cost unknown``.
    """
    steps = agent.get("steps", 0)
    parts = [
        f"agent: {agent.get('model')}",
        f"{steps} step" + ("" if steps == 1 else "s"),
        f"{agent.get('tool_calls', 0)} tool calls",
        f"{agent.get('input_tokens', 0):,} in / {agent.get('output_tokens', 0):,} out tokens",
    ]
    cost = agent.get("cost_usd")
    parts.append(cost_text(steps, float(cost) if isinstance(cost, int | float) else None))
    return " · ".join(parts)


def pinning_lines(pinning: dict[str, Any]) -> list[str]:
    """What the pinned plan did in a run, one line, then one per change found.

    ``pinned plan of run 12 (fake, 2026-12-01 09:00 UTC): taken, the LLM was not
    asked``; ``pinned plan of run 12 not taken: <why>`` with ``  - <change>``
    lines; ``this report is now the pinned plan`` when it replaced the plan.
    """
    lines = []
    from_run = pinning.get("from_run")
    if from_run is not None:
        made = str(pinning.get("made_at") or "")[:16].replace("T", " ")
        where = f"pinned plan of run {from_run} ({pinning.get('model')}, {made} UTC)"
        if pinning.get("used"):
            lines.append(f"{where}: taken, the LLM was not asked")
        else:
            lines.append(f"{where} not taken: {pinning.get('reason')}")
            lines += [f"  - {change}" for change in pinning.get("changes") or []]
    if pinning.get("new_plan"):
        lines.append("this report is now the automation's pinned plan (lookout pin shows it)")
    return lines


def totals_line(reports: Sequence[RunReport], elapsed_s: float) -> str:
    """``13 runs: 7 Clear, 4 Needs attention, 2 skipped · 4.1 s`` (only the counts that occur).

    ``elapsed_s`` is the invocation's wall time in seconds, written as every
    run's duration is (``worker.cli.durations.duration_text``).
    """
    counts: Counter[str] = Counter()
    for r in reports:
        if r.status == Status.COMPLETED and r.finding:
            counts[_FINDING_STYLE[r.finding][0]] += 1
        else:
            counts["in error" if r.status == Status.ERROR else str(r.status)] += 1
    order = ["Clear", "Needs attention", "in error", "skipped", "running", "queued"]
    parts = [f"{counts[k]} {k}" for k in order if counts[k]]
    head = f"{len(reports)} run" + ("" if len(reports) == 1 else "s")
    return f"{head}: {', '.join(parts) or 'none'} · {duration_text(max(0.0, elapsed_s))}"


_RUN_COLUMNS = (
    Column("run", justify="right", title=True),
    Column("automation", title=True),
    Column("scheduled for (UTC)"),
    Column("result"),
    Column("took", justify="right"),
    Column("note", flex=True),
)


def _took(report: RunReport) -> str:
    """How long the run took (``duration_text``); empty without both times, or a clock gone back."""
    if report.started_at and report.finished_at:
        seconds = (report.finished_at - report.started_at).total_seconds()
        return duration_text(seconds) if seconds >= 0 else ""
    return ""


def print_runs(
    console: Console, runs: list[RunReport], *, alerts: dict[int, str | None] | None = None
) -> None:
    """Print the runs, newest first, readable at any width (``worker.cli.layout``).

    ``note`` says why a run was skipped or failed, then how its alerts went
    (``alerts``: run id → ``worker.alerts.delivery_log.summarize`` line), so a failed
    delivery is never silent.
    """
    if not runs:
        console.print("no runs stored yet: try 'lookout run --all'")
        return
    grid = Grid(_RUN_COLUMNS)
    for r in runs:
        note = (r.error or "").splitlines()[0] if r.error else ""
        alert = (alerts or {}).get(r.run_id or 0)
        grid.add_row(
            str(r.run_id),
            Text(one_line(r.automation)),
            r.scheduled_for.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M"),
            result_label(r),
            _took(r),
            "; ".join(part for part in (note, alert) if part),
        )
    grid.print(console)
