"""``lookout eval``: the command-line edge over ``checks.eval.runner``.

``register(app)`` adds the command to the ``lookout`` Typer app. Settings come
from the app's context object (``ctx.obj.settings()``, as the other commands),
or from ``load_settings`` when there is none. Exit status: 0 when the harness
ran (accuracy is a result, not an error), 2 for a bad suite file, an unknown
case or bad settings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol

import typer
from rich.console import Console
from rich.text import Text

from checks.agent.result import cost_text
from checks.errors import ConfigError
from checks.eval import DEFAULT_CONCURRENCY, DEFAULT_PLOT
from worker.cli.durations import duration_text
from worker.cli.layout import Column, Grid
from worker.cli.safe_text import SafeConsole, print_hanging

if TYPE_CHECKING:
    from checks.eval.recalibration import RecalibrationScore
    from checks.eval.runner import EvalResult
    from checks.eval.scoring import CaseScore, RunOutcome
    from checks.settings.config import Settings

# The suite, the runner and the settings are imported inside the command:
# `lookout --help` never loads them.

EXIT_OK, EXIT_CONFIG = 0, 2

out = SafeConsole(highlight=False)
err = SafeConsole(stderr=True, highlight=False)


class _HasSettings(Protocol):
    def settings(self) -> Settings: ...


def register(app: typer.Typer) -> None:
    """Add ``lookout eval`` to ``app``."""
    app.command("eval")(eval_command)


def eval_command(
    ctx: typer.Context,
    suite: Annotated[
        Path | None, typer.Argument(help="Suite file; default the shipped suite.")
    ] = None,
    runs: Annotated[int, typer.Option("--runs", min=1, help="Runs per case (K).")] = 1,
    cases: Annotated[
        str | None, typer.Option("--cases", help="Only these case ids, comma-separated.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document.")] = False,
    plot: Annotated[
        Path, typer.Option("--plot", help="Where to write the reliability diagram (PNG).")
    ] = DEFAULT_PLOT,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Most runs at once.")
    ] = DEFAULT_CONCURRENCY,
) -> None:
    """Measure the agent and decision model on cases with known answers."""
    from checks.eval.recalibration import run_recalibration_cases
    from checks.eval.reliability import write_reliability_diagram
    from checks.eval.runner import default_suite_path, run_eval
    from checks.eval.suite import SuiteError, load_suite
    from checks.settings.config import redact

    try:
        settings = _settings(ctx.obj)
        loaded = load_suite(suite or default_suite_path())
        ids = [c.strip() for c in cases.split(",") if c.strip()] if cases else None
        with err.status("building the cases' data…") as status:

            def progress(outcome: RunOutcome, done: int, total: int) -> None:
                status.update(f"[{done}/{total}] {outcome.case_id} run {outcome.run}")

            result = run_eval(
                loaded,
                settings,
                runs=runs,
                case_ids=ids,
                concurrency=concurrency,
                progress=None if as_json else progress,
            )
        recalibration = run_recalibration_cases()
    except SuiteError as exc:
        for problem in exc.problems:
            err.print(f"error: {problem.location_message()}")
        raise typer.Exit(EXIT_CONFIG) from None
    except ConfigError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(EXIT_CONFIG) from None
    decision = result.scorecard.decision
    written = None
    if decision.answers:  # no answers, no diagram: an empty one would look like a result
        written = write_reliability_diagram(
            decision.bins,
            plot,
            title=f"lookout eval · {result.suite_name} · {result.decision_backend}",
            ece=decision.ece,
            brier=decision.brier,
        )
    if as_json:
        document = {
            **result.to_dict(),
            "plot": str(written) if written else None,
            "recalibration": [r.to_dict() for r in recalibration],
        }
        out.print(redact(json.dumps(document), settings.secrets()))
    else:
        print_result(out, result, written)
        for line in recalibration_lines(recalibration):
            print_hanging(out, line)
    raise typer.Exit(EXIT_OK)


def recalibration_lines(scores: list[RecalibrationScore]) -> list[str]:
    """The recalibration cases, one line each (``checks.eval.recalibration``)."""
    passed = sum(s.passed for s in scores)
    lines = [
        f"Recalibration on ops' verdicts: {passed}/{len(scores)} cases as expected "
        "(isotonic, scored out of sample, 5-fold):"
    ]
    for s in scores:
        lines.append(
            f"  {s.case_id} ({s.question}, {s.answers} labelled): ECE {s.ece:.3f} → "
            f"{s.calibrated_ece:.3f}, Brier {s.brier:.3f} → {s.calibrated_brier:.3f}"
            f" — {'ok' if s.passed else 'NOT MET'}: {s.expectation}"
        )
    return lines


def _settings(obj: Any) -> Settings:
    from checks.settings.config import load_settings

    if obj is not None and hasattr(obj, "settings"):
        context: _HasSettings = obj
        return context.settings()
    return load_settings()


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _num(value: float | None, spec: str = ",.0f") -> str:
    return "—" if value is None else format(value, spec)


_COLUMNS = (
    Column("case", title=True),
    Column("expected"),
    Column("right", justify="right"),
    Column("acc", justify="right"),
    Column("agree"),
    Column("decided by"),
    Column("steps", justify="right"),
    Column("tokens in/out", justify="right"),
    Column("cost", justify="right"),
)


_AGENT_HEADERS = ("steps", "tokens in/out", "cost")


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _case_row(case: CaseScore) -> list[Text | str]:
    right = f"{case.correct}/{case.scored}" if case.scored else "skipped"
    agree = {None: "—", True: "yes", False: "NO"}[case.agree]
    tokens = (
        "—"
        if case.input_tokens_mean is None
        else f"{_num(case.input_tokens_mean)}/{_num(case.output_tokens_mean)}"
    )
    return [
        Text(case.case_id),
        case.expected,
        right,
        _pct(case.accuracy),
        agree,
        ",".join(case.finding_sources) or "—",
        _num(case.steps_mean, ".1f"),
        tokens,
        _case_cost(case),
    ]


def _case_cost(case: CaseScore) -> str:
    """The cost cell: ``—`` when no agent ran, ``no call`` when none of its calls completed."""
    if not case.agent_runs:
        return "—"
    if not case.steps_mean:
        return "no call"
    return "unknown" if case.cost_usd is None else f"${case.cost_usd:.4f}"


def print_result(console: Console, result: EvalResult, plot: Path | None) -> None:
    """Print the per-case table and the overall figures.

    ``plot`` is the reliability diagram written, or None when there was nothing
    to draw (the decision model gave no answers).
    """
    overall = result.scorecard.overall
    llm = result.llm_model or "none (checks decide; goal-only cases are skipped)"
    console.print(
        Text(
            f"lookout eval — {result.suite_name}: {_plural(overall['cases'], 'case')} × "
            f"{_plural(result.runs_per_case, 'run')} · LLM: {llm} · decision model: "
            f"{result.decision_backend}",
            style="bold",
        )
    )
    rows = [_case_row(case) for case in result.scorecard.cases]
    # the agent's columns say nothing when no agent ran: the summary line says so instead
    keep = [
        i
        for i, column in enumerate(_COLUMNS)
        if column.header not in _AGENT_HEADERS or any(str(row[i]) != "—" for row in rows)
    ]
    grid = Grid([_COLUMNS[i] for i in keep])
    for row in rows:
        grid.add_row(*(row[i] for i in keep))
    grid.print(console)
    for line in summary_lines(result):
        print_hanging(console, line)
    if plot is None:
        console.print(Text("Reliability diagram: not written (no decision-model answers to draw)."))
    else:
        console.print(Text(f"Reliability diagram: {plot}", style="dim"), soft_wrap=True)


def summary_lines(result: EvalResult) -> list[str]:
    """The overall figures, one per line."""
    overall = result.scorecard.overall
    lines = [
        f"Finding accuracy: {overall['correct']}/{overall['scored']} runs "
        f"({_pct(overall['accuracy'])}); {overall['skipped']} skipped (need an LLM), "
        f"{overall['errors']} in error."
    ]
    for source, tally in sorted(overall["by_finding_source"].items()):
        lines.append(f"  decided by {source}: {tally['correct']}/{tally['runs']} right")
    agreement = overall["agreement"]
    if agreement["cases_compared"]:
        lines.append(
            f"Repeated runs agree: {agreement['cases_agreeing']}/{agreement['cases_compared']} "
            f"cases ({_pct(agreement['rate'])})."
        )
    else:
        lines.append("Repeated runs agree: — (needs --runs 2 or more)")
    agent = overall["agent"]
    cost = agent["cost_usd"]
    if not agent["runs"]:
        lines.append("Agent: did not run (no LLM configured, or every case was skipped).")
    else:
        lines.append(
            f"Agent: {_plural(agent['runs'], 'run')}, {_plural(agent['steps'], 'step')}, "
            f"{_plural(agent['tool_calls'], 'tool call')}, "
            f"{agent['input_tokens']:,} in / {agent['output_tokens']:,} out tokens, "
            + cost_text(agent["steps"], cost)
            + "."
        )
    d = result.scorecard.decision
    if d.answers:
        lines.append(
            f"Decision model ('goal met?', {d.answers} answers, yes at p ≥ {d.threshold:g}): "
            f"accuracy {_pct(d.accuracy)}, Brier {_num(d.brier, '.4f')}, "
            f"ECE {_num(d.ece, '.4f')} (10 equal-width bins)."
        )
        cost = "cost unknown" if d.cost_usd is None else f"${d.cost_usd:.4f}"
        lines.append(f"  {d.input_tokens:,} in / {d.output_tokens:,} out tokens, {cost}")
        if d.urgency_answers:
            lines.append(f"  urgency: {_pct(d.urgency_accuracy)} of {d.urgency_answers} right")
    else:
        lines.append(f"Decision model: no answers (backend {result.decision_backend}).")
    lines.append(f"Took {duration_text(max(0.0, result.elapsed_s))}.")
    return lines
