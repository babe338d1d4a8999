"""``lookout suggest SOURCE``: a first set of automations, one file per table, from a profile.

Profiles each table (``checks.suggest``), writes one automation file per table
into ``--out`` (default the automations folder), prints each file's outcome,
the diff of a file that changed, the real problems its checks reveal, and
what was not suggested. With ``--goals`` and an LLM configured, each
automation also gets a ``goal:`` and ``instructions:`` whose every number is
the profile's (``checks.suggest.goals``). Registered by ``register(app)``.

Exit status: 0 written and every suggestion passes on today's data; 1 a
suggestion reveals a real problem, a table could not be profiled, suggested
or written (each table on its own: the others are still written), or an
edited file was kept; 2 a
configuration error (an unknown source or table, ``--goals`` with no LLM);
3 the source cannot be read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from checks.errors import ConfigError
from worker.cli.safe_text import SafeConsole

if TYPE_CHECKING:
    from checks.settings.config import Settings
    from checks.suggest.source_pass import TableSuggestions

EXIT_OK, EXIT_PROBLEMS, EXIT_CONFIG = 0, 1, 2

out = SafeConsole(highlight=False)
err = SafeConsole(stderr=True, highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``lookout suggest`` to ``app``."""
    app.command("suggest")(suggest_command)


def suggest_command(
    ctx: typer.Context,
    source_name: Annotated[str, typer.Argument(metavar="SOURCE", help="A configured source.")],
    tables: Annotated[
        list[str] | None,
        typer.Option("--tables", help="Tables to profile (repeat it); default every table."),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Folder to write to; default the automations folder."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files edited since they were written.")
    ] = False,
    goals: Annotated[
        bool,
        typer.Option("--goals", help="Add a goal and instructions per automation (needs an LLM)."),
    ] = False,
    budget_s: Annotated[
        float, typer.Option("--budget", help="Seconds each table's profile may take.", min=1)
    ] = 60.0,
) -> None:
    """Profile a source's tables and write one automation file of typed checks per table."""
    from checks.settings.config import load_settings
    from checks.sources.pool import SourcePool
    from checks.sources.source_config import config_problems
    from checks.suggest.source_pass import suggest_source

    settings: Settings = ctx.obj.settings() if ctx.obj is not None else load_settings()
    if source_name not in settings.sources:
        known = ", ".join(sorted(settings.sources)) or "none"
        raise ConfigError(f"source '{source_name}' is not configured (configured: {known})")
    for problem in config_problems(settings, [source_name]):
        raise problem
    if goals and not (settings.llm.base_url and settings.llm.model):
        raise ConfigError("--goals needs an LLM: set LOOKOUT_LLM_BASE_URL and LOOKOUT_LLM_MODEL")
    folder = out_dir or Path(settings.automations_dir)
    with SourcePool(settings) as pool:
        source = pool.get(source_name)
        with err.status("profiling…") as status:
            found = suggest_source(
                source, tables or [], budget_s=budget_s, progress=lambda line: status.update(line)
            )
    status_code = EXIT_OK
    for name, why in found.failed.items():
        out.print(f"{name}: not suggested: {why}", markup=False, soft_wrap=True)
        status_code = EXIT_PROBLEMS
    for table in found.tables:
        try:
            if _write_one(table, source_name, folder, settings, force=force, goals=goals):
                status_code = EXIT_PROBLEMS
        except Exception as error:  # one table's file never stops the others'
            why = f"{type(error).__name__}: {error}"
            out.print(f"{table.profile.name}: not written: {why}", markup=False, soft_wrap=True)
            status_code = EXIT_PROBLEMS
    raise typer.Exit(status_code)


def _write_one(
    table: TableSuggestions,
    source_name: str,
    folder: Path,
    settings: Settings,
    *,
    force: bool,
    goals: bool,
) -> bool:
    """Write one table's file and say what became of it; True if it needs a person's look."""
    from checks.suggest.written import write
    from checks.suggest.yaml_writer import file_name, render

    profile = table.profile
    extra: dict[str, str] = {}
    if goals:
        from checks.suggest.goals import ask_goal

        written_goal = ask_goal(profile, table.suggestions, settings)
        extra = written_goal.fields
        for line in written_goal.refused:
            out.print(f"{profile.name}: goal refused: {line}", markup=False, soft_wrap=True)
    header = [
        f"Suggested by lookout suggest {source_name} on {profile.at:%Y-%m-%d %H:%M} UTC from table"
        f" {profile.name}: {profile.rows:,} rows ({profile.sample.how} read).",
        "Bounds leave a margin for normal variation (docs/suggest.md).",
        "Set owner, schedule and severity to yours.",
        "Edit freely: run again, lookout suggest shows its diff and keeps an edited file"
        " unless --force.",
    ]
    text = render(source_name, profile.name, table.suggestions, header, extra, table.notes)
    result = write(folder / file_name(source_name, profile.name), text, force=force)
    out.print(
        f"{result.path}: {result.outcome}, {len(table.suggestions)} checks",
        markup=False,
        soft_wrap=True,
    )
    if result.diff:
        out.print(result.diff.rstrip("\n"), markup=False, highlight=False, soft_wrap=True)
    if result.outcome == "kept":
        out.print(
            "  kept: edited since it was written; --force overwrites it",
            markup=False,
            soft_wrap=True,
        )
    for problem in table.problems:
        out.print(f"  fails today: {problem}", markup=False, soft_wrap=True)
    for note in table.notes:
        out.print(f"  note: {note}", markup=False, soft_wrap=True)
    return bool(table.problems) or result.outcome == "kept"
