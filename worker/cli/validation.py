"""``lookout validate``: each automation loaded, then its SQL and its channels checked.

Registered on the main app by ``register(app)``. Exit status: 0 every file
valid, 2 any error (warnings alone do not fail it).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from checks.errors import AutomationError, ConfigError, SourceConfigError, SourceError
from worker.api import ExitCode
from worker.cli import startup
from worker.cli.output import out

if TYPE_CHECKING:
    from checks.automation.load_result import LoadResult
    from checks.automation.model import Automation
    from checks.declared.validation import Validation
    from checks.settings.config import Settings
    from checks.sources.pool import SourcePool


def register(app: typer.Typer) -> None:
    """Add the ``validate`` command to the main ``lookout`` app."""
    app.command()(validate)


def validate(
    ctx: typer.Context,
    path: Annotated[
        Path | None, typer.Argument(help="File or folder; default the automations folder.")
    ] = None,
    no_sources: Annotated[
        bool,
        typer.Option(
            "--no-sources",
            help="Do not open the sources: skip the catalog's tables, columns and types.",
        ),
    ] = False,
) -> None:
    """Check automation files and their SQL; print each problem as path:line:column: field: message.

    Every query and typed check is also checked against its source before
    anything runs: the SQL guard, parsing in the source's dialect, the
    catalog's tables and columns, and the lint (as warnings).
    """
    from checks.automation.configured import folder_automations
    from checks.automation.loader import load_automations
    from checks.automation.monitors import add_monitors, make_monitors
    from checks.sources.pool import SourcePool
    from checks.sources.source_config import config_problems

    settings = ctx.obj.settings()
    target = path or Path(settings.automations_dir)
    if path is None:  # with monitors, the folder may be missing
        loaded = folder_automations(settings)
    else:
        loaded = load_automations(target, known_sources=settings.sources.keys())
    startup.over()  # checking each automation's SQL leaves parsed trees behind
    with SourcePool(settings) as pool:
        if not no_sources and path is None:  # the sources' monitors, from their catalogs
            add_monitors(loaded, make_monitors(settings, pool.get))
        errors: list[ConfigError] = list(loaded.errors)
        warnings = [f"warning: {w}" for w in loaded.warnings]
        bad: set[str] = set()
        errors += config_problems(settings)  # an engine no recipe reads, at its url:
        for automation in loaded.automations:
            found = sql_problems(automation, loaded, settings, None if no_sources else pool)
            errors += found.errors
            warnings += [f"warning: {w.location_message()}" for w in found.warnings]
            warnings += unknown_channels(automation, loaded, settings)
            if found.errors:
                bad.add(automation.name)
    errors = list({e.location_message(): e for e in errors}.values())  # a source's, once
    errors.sort(key=lambda e: (e.path or "", e.line or 0, e.column or 0))
    for problem in errors:
        out.print(f"error: {problem.location_message()}", markup=False)
    for warning in warnings:
        out.print(warning, markup=False)
    good = [a for a in loaded.automations if a.name not in bad]
    files = {a.path for a in good}
    out.print(
        f"{_count(len(good), 'automation')} valid in "
        f"{_count(len(files), 'file')}; {_count(len(errors), 'error')}, "
        f"{_count(len(warnings), 'warning')}",
        markup=False,
    )
    raise typer.Exit(ExitCode.CONFIG_ERROR if errors else ExitCode.CLEAR)


def _count(n: int, noun: str) -> str:
    """``1 error``, ``2 errors``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def sql_problems(
    automation: Automation, loaded: LoadResult, settings: Settings, pool: SourcePool | None
) -> Validation:
    """The checks' SQL against the source; a source that cannot open is one error, at ``source``."""
    from checks.declared.validation import Validation, validate_checks
    from checks.sources import dialect_of
    from checks.sources.source_config import config_problems

    config = settings.sources[automation.source]
    located = config_problems(settings, [automation.source])
    if located:  # the config file's mistake, said at its place there (once: validate dedupes)
        return Validation(errors=[as_problem(e) for e in located])
    try:
        dialect = dialect_of(config)
        source = pool.get(automation.source) if pool is not None else None
        return validate_checks(
            automation,
            loaded,
            source=source,
            dialect=dialect,
            max_sql_chars=settings.limits.max_sql_chars,
            sources=pool.get if pool is not None else None,
            source_names=list(settings.sources),
        )
    except SourceConfigError as exc:  # the config file's own mistake, at its place there
        return Validation(errors=[as_problem(exc)])
    except SourceError as exc:
        message = f"{exc}; its checks were not checked against it (--no-sources skips this)"
        where = loaded.place_of(automation, ("source",))
        problem = AutomationError(
            message, path=automation.path, line=where.line, column=where.column, field="source"
        )
        return Validation(errors=[problem])


def as_problem(error: SourceConfigError) -> AutomationError:
    """A source's settings mistake as one of ``validate``'s problems, at its place in the config."""
    return AutomationError(
        error.message, path=error.path, line=error.line, column=error.column, field=error.field
    )


def unknown_channels(automation: Automation, loaded: LoadResult, settings: Settings) -> list[str]:
    """A warning per ``notify:`` name the config's ``channels:`` lacks: its alerts go nowhere.

    Not an error: the config ``validate`` reads (a laptop's) need not hold every chat channel
    of the service's.
    """
    from checks.fields.rules import did_you_mean

    known = sorted(settings.channels)
    found = []
    for index, name in enumerate(automation.notify):
        if name not in settings.channels:
            where = loaded.place_of(automation, ("notify", index))
            problem = AutomationError(
                f"unknown channel {name!r}{did_you_mean(name, known)}; known: "
                f"{', '.join(known) or 'none are configured'} (its alerts would go nowhere)",
                path=automation.path,
                line=where.line,
                column=where.column,
                field=f"notify.{index}",
            )
            found.append(f"warning: {problem.location_message()}")
    return found
