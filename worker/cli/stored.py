"""``lookout reports``, ``show`` and ``pin``: what the store holds, read back.

``register(app)`` adds the three commands to the ``lookout`` Typer app (after
``validate`` and ``run``, so ``--help`` lists them in that order). Settings come
from the app's context object (``ctx.obj.settings()``); the store and what each
command prints are imported inside its body, so ``lookout --help`` loads neither.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from checks.errors import ConfigError
from checks.report import Finding, Status
from worker.cli import render

if TYPE_CHECKING:
    from checks.report import RunReport
    from checks.store.store import Store
    from worker.review.history import CheckHistory


def register(app: typer.Typer) -> None:
    """Add ``reports``, ``show`` and ``pin`` to ``app``."""
    app.command()(reports)
    app.command()(show)
    app.command()(pin)


def reports(
    ctx: typer.Context,
    finding: Annotated[str | None, typer.Option(help="clear or needs_attention.")] = None,
    automation: Annotated[str | None, typer.Option(help="Only this automation.")] = None,
    status: Annotated[
        str | None, typer.Option(help="queued, running, completed, error or skipped.")
    ] = None,
    flag: Annotated[
        str | None,
        typer.Option(help="Only runs whose second opinion set this flag."),
    ] = None,
    limit: Annotated[
        int, typer.Option(help="How many runs, newest first.", min=1, max=10_000)
    ] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON list.")] = False,
) -> None:
    """List recent runs from the store."""
    from checks.opinion.second_opinion import Flag
    from checks.settings.config import redact
    from checks.store.store import Store
    from worker.alerts.delivery_log import deliveries_by_run, summarize
    from worker.cli.output import out

    if finding and finding not in {f.value for f in Finding}:
        raise ConfigError(f"--finding must be clear or needs_attention, not '{finding}'")
    if status and status not in {s.value for s in Status}:
        raise ConfigError(f"--status must be one of {', '.join(s.value for s in Status)}")
    if flag and flag not in {f.value for f in Flag}:
        known = ", ".join(f.value for f in Flag)
        raise ConfigError(f"--flag must be one of {known}, not '{flag}'")
    settings = ctx.obj.settings()
    store = Store(settings.store_url)
    runs = store.list_runs(
        automation=automation, finding=finding, status=status, flag=flag, limit=limit
    )
    delivered = deliveries_by_run(store.engine, [r.run_id for r in runs if r.run_id])
    alerts = {run_id: summarize(records) for run_id, records in delivered.items()}
    if as_json:
        rows = [
            {k: v for k, v in r.to_dict().items() if k not in ("checks", "evidence")}
            | {"alerts": alerts.get(r.run_id or 0)}
            for r in runs
        ]
        out.print(redact(json.dumps(rows), settings.secrets()))
    else:
        render.print_runs(out, runs, alerts=alerts)


def show(
    ctx: typer.Context,
    run_id: Annotated[
        int, typer.Argument(help="The run's id (see 'lookout reports').", min=1, max=2**63 - 1)
    ],
    as_json: Annotated[bool, typer.Option("--json", help="The run as JSON.")] = False,
    trace: Annotated[
        bool,
        typer.Option("--trace", help="The agent's trace instead: one JSON event per line."),
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html", help="Write the run as one self-contained HTML file here (for a ticket)."
        ),
    ] = None,
) -> None:
    """Show one stored run: finding, summary, checks' history and evidence (or its agent trace)."""
    from checks.agent.trace import read_trace, to_jsonl
    from checks.settings.config import redact
    from checks.store.store import Store
    from worker.cli.output import err, print_report

    if html is not None and (as_json or trace):
        raise ConfigError("--html writes the run as a file: leave out --json and --trace")
    settings = ctx.obj.settings()
    store = Store(settings.store_url)
    report = store.get_run(run_id)
    if report is None:
        raise ConfigError(f"no run with id {run_id} (see 'lookout reports')")
    if trace:
        events = read_trace(store, run_id)
        if not events:
            why = (
                "the agent was not asked: its pinned plan decided "
                f"('lookout run {report.automation} --fresh' asks it)"
                if report.finding_source == "pinned"
                else "no agent ran (the declared checks decided)"
            )
            err.print(Text(f"run {run_id} has no trace: {why}"))
        sys.stdout.write(redact(to_jsonl(events), settings.secrets()))
        return
    secrets = settings.secrets()
    report.clean_text(lambda text: redact(text, secrets))  # rows stored before redaction, too
    if html is not None:
        _write_html(store, report, html)
        return
    histories: list[CheckHistory] = []
    if not as_json:
        from worker.review.history import histories_of_run

        histories = histories_of_run(store, run_id)
    print_report(report, as_json, settings, full=True, histories=histories)


def _write_html(store: Store, report: RunReport, path: Path) -> None:
    """Write the run as ``worker.cli.html_report`` makes it; say where."""
    from checks.clock import utcnow
    from worker.cli.html_report import html_report
    from worker.cli.output import err
    from worker.review.history import histories_of_run

    document = html_report(report, histories_of_run(store, report.run_id or 0), made_at=utcnow())
    try:
        path.write_text(document, encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"--html: cannot write {path}: {error.strerror}") from None
    err.print(Text(f"html: run {report.run_id} written to {path}"), style="dim")


def pin(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The automation whose pinned plan to print.")],
) -> None:
    """Print an automation's pinned plan as declared checks: YAML to review and commit.

    The automation as its file would hold it, with one check per query the
    plan rests on, each expecting what it returned when the plan was made.
    """
    from checks.automation.loader import load_automations
    from checks.pinned.as_checks import plan_as_yaml
    from checks.store.plans import current_plan
    from checks.store.store import Store
    from worker.cli.selection import select_automations

    settings = ctx.obj.settings()
    loaded = load_automations(settings.automations_dir, known_sources=settings.sources.keys())
    (automation,) = select_automations(
        loaded,
        [name],
        False,
        folder=settings.automations_dir,
        validate=ctx.obj.validate_command(),
    )
    plan = current_plan(Store(settings.store_url), automation.name)
    if plan is None:
        raise ConfigError(
            f"{automation.name} has no pinned plan: one is kept when the agent's report is "
            "accepted (an LLM configured, llm.pin_plans on)"
        )
    sys.stdout.write(plan_as_yaml(plan, automation))
