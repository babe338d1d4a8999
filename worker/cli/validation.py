"""What ``lookout validate`` checks of each automation beyond loading it: its SQL, its channels."""

from __future__ import annotations

from typing import TYPE_CHECKING

from checks.errors import AutomationError, SourceConfigError, SourceError

if TYPE_CHECKING:
    from checks.automation.load_result import LoadResult
    from checks.automation.model import Automation
    from checks.declared.validation import Validation
    from checks.settings.config import Settings
    from checks.sources.pool import SourcePool


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
