"""The ``lookout`` command line: a thin edge over ``checks``.

Exit status (docs/cli.md; ``worker.api.ExitCode``): 0 all Clear, 1 any Needs
attention, 2 a configuration error, 3 any run in error, 4 an internal error (a
bug); when several apply the highest wins.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
import time
import traceback
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from checks.errors import ConfigError, LookoutError
from checks.report import RunReport
from worker.api import ExitCode, exit_code
from worker.cli import calibrate as cli_calibrate
from worker.cli import dbt as cli_dbt
from worker.cli import eval as cli_eval
from worker.cli import notify as cli_notify
from worker.cli import render, startup
from worker.cli import serve as cli_serve
from worker.cli import service as cli_service
from worker.cli import sources as cli_sources
from worker.cli import stored as cli_stored
from worker.cli import suggest as cli_suggest
from worker.cli import validation as cli_validation
from worker.cli.output import err, out, print_report
from worker.cli.selection import select_automations

if TYPE_CHECKING:
    from checks.automation.model import Automation
    from checks.settings.config import Settings
    from checks.sources.pool import SourcePool
    from checks.store.store import Store

# Each command imports what it needs inside its body, so ``lookout --help`` never
# loads the settings, the store, the agent's LLM client, Celery or the web stack
# (a test checks ``sys.modules`` in a fresh interpreter).

EXIT_OK, EXIT_ATTENTION, EXIT_CONFIG = (
    ExitCode.CLEAR,
    ExitCode.NEEDS_ATTENTION,
    ExitCode.CONFIG_ERROR,
)
EXIT_RUN_ERROR, EXIT_INTERNAL = ExitCode.RUN_ERROR, ExitCode.INTERNAL_ERROR
NO_CHANNELS = "no channels configured: no alerts sent (see the README's 'Alerts to chat')"
"""What ``run --notify`` says once when the config names no channel."""
NOTHING_TO_SEND = "alerts: none sent for this run (no event it announces goes to a channel)"
"""What ``run --notify`` says of a run with channels configured but no alert to send."""


class OutputFormat(StrEnum):
    """What ``lookout run`` prints on standard output (``--format``)."""

    TEXT = "text"
    JSON = "json"
    GITHUB = "github"


app = typer.Typer(
    help="Lookout: data checks written in YAML, decided in SQL, reported to ops.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@dataclass
class Context:
    """Global options, resolved lazily so ``--help`` never reads files."""

    config: Path | None
    automations: Path | None

    def validate_command(self) -> str:
        """The ``lookout validate`` command line that checks the same files as this one.

        The global options given (``--config``, ``--automations``) come before
        the command, shell-quoted; the environment applies to both alike.
        """
        words = ["lookout"]
        for option, value in (("--config", self.config), ("--automations", self.automations)):
            if value is not None:
                words += [option, shlex.quote(str(value))]
        return " ".join([*words, "validate"])

    def settings(self) -> Settings:
        """Load settings; ``--automations`` wins over the config and the environment."""
        from checks.settings.config import load_settings

        settings = load_settings(self.config)
        if self.automations is not None:
            settings.automations_dir = str(self.automations)
        return settings


@app.callback()
def main_options(
    ctx: typer.Context,
    config: Annotated[
        Path | None, typer.Option("--config", help="Config file (env LOOKOUT_CONFIG).")
    ] = None,
    automations: Annotated[
        Path | None,
        typer.Option("--automations", help="Automations folder (env LOOKOUT_AUTOMATIONS_DIR)."),
    ] = None,
) -> None:
    """Lookout: data checks written in YAML, decided in SQL, reported to ops."""
    ctx.obj = Context(config, automations)
    if ctx.invoked_subcommand not in _ENDS_OWN_STARTUP:
        startup.over()


_ENDS_OWN_STARTUP = frozenset({"run", "validate"})
"""The commands that resume the cycle collector themselves, once their imports are done."""

cli_validation.register(app)  # before ``run``: the commands are listed in this order


def exit_status(reports: list[RunReport], config_errors: int) -> int:
    """The exit status for a batch of runs: the highest that applies (``worker.api.exit_code``)."""
    return int(exit_code(reports, config_errors))


@app.command()
def run(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(help="Automations to run.")] = None,
    run_all: Annotated[bool, typer.Option("--all", help="Run every enabled automation.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON document per run, one per line.")
    ] = False,
    notify: Annotated[
        bool,
        typer.Option("--notify", help="Deliver each run's alerts now, in this process."),
    ] = False,
    fresh: Annotated[
        bool,
        typer.Option(
            "--fresh", help="Ask the agent even when the pinned plan's evidence is unchanged."
        ),
    ] = False,
    junit: Annotated[
        Path | None,
        typer.Option("--junit", help="Also write the runs as JUnit XML to this file (for CI)."),
    ] = None,
    output_format: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            help="text; json (as --json); github: text, then GitHub Actions annotations.",
        ),
    ] = OutputFormat.TEXT,
) -> None:
    """Run automations now, in this process, and store their reports."""
    from checks.automation.configured import folder_automations
    from checks.automation.monitors import add_monitors, make_monitors, monitored_sources
    from checks.sources.pool import SourcePool
    from checks.sources.source_config import config_problems
    from worker.cli import ci_output

    if not names and not run_all:
        raise ConfigError("name at least one automation, or pass --all")
    if as_json and output_format is OutputFormat.GITHUB:
        raise ConfigError("--format github prints the reports as text: leave out --json")
    as_json = as_json or output_format is OutputFormat.JSON
    github = output_format is OutputFormat.GITHUB
    # With --format github, all but Lookout's own annotations is output GitHub must not run.
    with ci_output.commands_stopped() if github else contextlib.nullcontext():
        started = time.monotonic()
        settings = ctx.obj.settings()
        loaded = folder_automations(settings)  # with monitors, the folder may be missing
        with SourcePool(settings) as pool:
            # the monitors asked for (monitor:SOURCE.TABLE, or every one with --all)
            monitored = monitored_sources(settings, None if run_all else names or [])
            if monitored:
                add_monitors(loaded, make_monitors(settings, pool.get, monitored))
            # Warnings are 'lookout validate''s: a goal-only automation's report says it was
            # skipped.
            validate_command = ctx.obj.validate_command()
            render.print_load_problems(
                err, loaded, None if run_all else names or [], validate=validate_command
            )
            chosen = select_automations(
                loaded,
                names or [],
                run_all,
                folder=settings.automations_dir,
                validate=validate_command,
            )
            # A source whose settings name an engine no recipe reads: its runs are not started.
            refused = {n for n in {a.source for a in chosen} if config_problems(settings, [n])}
            unusable = config_problems(settings, sorted(refused))
            for problem in unusable:
                err.print(f"error: {problem.location_message()}", markup=False)
            chosen = [a for a in chosen if a.source not in refused]
            # The sources open first: a DuckDB source's query process starts up on the other
            # core while this one loads the run path and the store.
            llm = bool(settings.llm.base_url and settings.llm.model)
            pool.start(dict.fromkeys(a.source for a in chosen if a.checks or llm))
            from checks.store.store import Store

            store = Store(settings.store_url)
            reports = _run_chosen(
                chosen, settings, pool, store, as_json=as_json, notify=notify, fresh=fresh
            )
        totals = render.totals_line(reports, time.monotonic() - started)
        if run_all and not chosen:
            totals += f" (no enabled automation in {settings.automations_dir})"
        (err if as_json else out).print(totals)
        # Bad files elsewhere in the folder count only when --all asked to run them.
        problems = [*(loaded.errors if run_all else []), *unusable]
        runs = ci_output.ci_runs(loaded, chosen, reports, problems) if junit or github else None
        if junit is not None and runs is not None:
            ci_output.write_junit(runs, junit)
    if github and runs is not None:
        ci_output.print_workflow_commands(runs)
    raise typer.Exit(exit_status(reports, len(problems)))


def _run_chosen(
    chosen: list[Automation],
    settings: Settings,
    pool: SourcePool,
    store: Store,
    *,
    as_json: bool,
    notify: bool,
    fresh: bool = False,
) -> list[RunReport]:
    """Run and store each automation in turn, printing each report as it ends."""
    from checks.run_lifecycle import run_and_store
    from checks.settings.config import redact

    reports: list[RunReport] = []
    startup.over()  # each run leaves parsed trees, sessions and exceptions behind
    if not as_json and chosen:
        out.print(Text(render.decider_line(settings, fresh=fresh), style="dim"))
        out.print()
    with err.status("starting…") as status:
        for automation in chosen:
            report = run_and_store(
                automation,
                settings,
                pool,
                store,
                progress=lambda line: status.update(line),
                announce=notify,
                fresh=fresh,
            )
            reports.append(report)
            status.stop()
            print_report(report, as_json, settings)
            if settings.lineage.url:
                _send_lineage(settings, report)
            if notify and not settings.channels and len(reports) == 1:
                err.print(NO_CHANNELS)  # once, where the first run's alert lines would be
            if notify:
                status.update(f"{automation.name}: delivering alerts")
                from worker.alerts.delivery import deliver_for_run

                records = deliver_for_run(store, settings, report)
                if settings.channels and not records:
                    err.print(NOTHING_TO_SEND)
                for record in records:
                    line = f"alert: {record.event} → {record.channel}: {record.status}"
                    if record.error:
                        line += f" ({record.error})"
                    err.print(redact(line, settings.secrets()))
            status.start()
    return reports


def _send_lineage(settings: Settings, report: RunReport) -> None:
    """Send the run's OpenLineage events; a failure is a line, never the run's status."""
    from worker.lineage.emit import LineageError, emit_run

    try:
        sent = emit_run(settings, report)
    except LineageError as error:
        err.print(Text(str(error)), style="yellow")
        return
    err.print(Text(f"lineage: {sent} events sent to {settings.lineage.url}", style="dim"))


# reports, show, pin (the store); worker, beat, schedule, run-now (Celery); notify (alerts);
# serve (review page); eval; calibrate; sources (check, list); suggest; dbt (import)
_GROUPS = (
    cli_stored,
    cli_service,
    cli_notify,
    cli_serve,
    cli_eval,
    cli_calibrate,
    cli_sources,
    cli_suggest,
    cli_dbt,
)
for _commands in _GROUPS:
    _commands.register(app)


def main() -> None:
    """Console-script entry point: map Lookout's errors to exit statuses."""
    for stream in (sys.stdout, sys.stderr):  # a non-UTF-8 terminal gets '?' rather than a crash
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            reconfigure(errors="replace")
    try:
        code = app(standalone_mode=False)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.TyperException as exc:  # usage errors (typer's vendored click)
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            err.print(f"error: {exc}")
        sys.exit(EXIT_CONFIG)
    except ConfigError as exc:
        err.print(f"error: {exc}")
        sys.exit(EXIT_CONFIG)
    except LookoutError as exc:
        err.print(f"error: {exc}")
        sys.exit(EXIT_RUN_ERROR)
    except (typer.Abort, KeyboardInterrupt):
        err.print("aborted")
        sys.exit(130)
    except Exception:  # a bug: never let it look like exit 1 (Needs attention)
        traceback.print_exc()
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else EXIT_OK)
